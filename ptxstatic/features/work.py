"""The work of one launch, from its block counts: SM issue cycles at a GPU's published issue rates and
bytes moved off the chip, summed over every thread (what a roofline estimate of its time needs)."""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.block_counts import BlockCounts
from ptxstatic.features.portable import executed_instructions, memory_traffic
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.issue_rates import issue_rate
from ptxstatic.ptx.ast import Module

#: state spaces whose traffic leaves the SM (generic addresses counted as global)
OFFCHIP = ("global", "generic", "local", "texture")


@dataclass(frozen=True)
class LaunchWork:
    gpu: str
    ctas: int
    threads: int
    instructions: float  # executed by all threads
    issue_cycles: float  # SM cycles to issue them at the published rates (summed over SMs)
    offchip_bytes: float  # moved by global, generic, local and texture accesses (caches ignored)
    unknown_copies: float  # executions of copies whose size is not static (their bytes are not counted)

    def to_dict(self) -> dict:
        return {"ctas": self.ctas, "threads": self.threads, "instructions": self.instructions,
                "issue_cycles": round(self.issue_cycles, 1), "offchip_bytes": self.offchip_bytes}


def launch_work(module: Module, counts: BlockCounts, figures: GpuFigures) -> LaunchWork:
    """The launch's executed instructions, issue cycles and off-chip bytes (block counts are totals over all
    threads, so every figure grows with the work the launch does)."""
    rates = figures.rates
    instructions = cycles = offchip = unknown = 0.0
    for ins, c in executed_instructions(module, counts):
        instructions += c
        cycles += c / issue_rate(ins.info, rates)
        for space, nbytes in memory_traffic(ins):
            if space == "unknown":
                unknown += c
            elif space in OFFCHIP:
                offchip += c * nbytes
    launch = counts.launch
    return LaunchWork(figures.name, launch.blocks, launch.blocks * launch.threads_per_block, instructions, cycles,
                      offchip, unknown)
