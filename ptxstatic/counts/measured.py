"""Block counts measured by running a kernel and its instrumented copy on a device: a GPU, or the PTX emulator
behind the same port (:mod:`ptxstatic.gpu.device`; the fake device, ``ptxstatic profile --emulate``).

:func:`profile` instruments the module, loads both versions on the device, runs the original and then the
instrumented kernel on identical inputs (the launch's buffers, filled as ``collect`` fills them), compares
every buffer byte for byte, and folds the counters into :class:`BlockCounts` plus dynamic instruction counts
per ISA group.

PTX from other tools: numba ``cuda.compile_ptx(fn, sig)[0]``; Triton ``compiled.asm["ptx"]`` (the object a
``kernel[grid](...)`` call or ``triton.compile`` returns); CuPy kernels written in CUDA C++: compile the same
source with ``nvcc -ptx`` (or pass the ``.cu`` to the CLI).
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.instrumentation.counter_map import CounterMap
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.gpu.device import Device, Gpu
from ptxstatic.launch import Launch
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.launch_binding import BoundLaunch
from ptxstatic.ptx.printer import module as print_module


@dataclass
class ProfileResult:
    counts: BlockCounts
    instructions: dict[str, dict[str, float]]  # function (and "total") -> ISA group -> dynamic instructions
    outputs_match: bool
    mismatches: list[str] = field(default_factory=list)  # buffers whose bytes differ
    device: str = ""
    counter_map: CounterMap | None = None

    def to_dict(self) -> dict:
        return {
            "kernel": self.counts.kernel, "device": self.device, "launch": self.counts.launch.to_dict(),
            "counts": self.counts.to_dict(), "instructions": self.instructions,
            "verification": {"outputs_match": self.outputs_match, "mismatched_buffers": self.mismatches},
        }


# ---------------------------------------------------------------------------------------- counts
def sampled_ctas(launch: Launch, stride: int) -> int:
    """CTAs whose linear id is a multiple of ``stride``."""
    return (launch.blocks + stride - 1) // stride


def block_counts(cmap: CounterMap, raw: list[int], kernel: str, launch: Launch, source: str = "gpu") -> BlockCounts:
    """Per-block counts of the functions ``kernel`` reaches, extrapolated in sample mode; ``source``: where the
    counters ran (``gpu``, or ``emulated`` on the fake device)."""
    folded = cmap.fold(raw)
    reached = {c.function for c in cmap.for_kernel(kernel)}
    counts = {f: {b: float(n) for b, n in blocks.items()} for f, blocks in folded.items() if f in reached}
    notes = list(cmap.notes)
    if cmap.mode == "sample":
        sampled = sampled_ctas(launch, cmap.stride)
        factor = launch.blocks / sampled
        counts = {f: {b: n * factor for b, n in blocks.items()} for f, blocks in counts.items()}
        source = f"{source}-sampled"
        notes.append(f"sampled {sampled} of {launch.blocks} CTAs (linear id % {cmap.stride} == 0); counts "
                     f"extrapolated linearly to the grid by factor {factor:.6g}")
    elif cmap.mode == "warp":
        notes.append("per-warp counts: only the first warp of CTA 0 counted (not totals over the grid)")
    return BlockCounts(kernel, launch, source, counts, {}, notes)


def dynamic_instructions(module: A.Module, counts: BlockCounts) -> dict[str, dict[str, float]]:
    """Per function and in total: block count x the block's instructions of each ISA group, summed."""
    out: dict[str, dict[str, float]] = {}
    total: Tally[str] = Tally()
    for fname, blocks in counts.counts.items():
        per: Tally[str] = Tally()
        for b in build_cfg(module.function(fname)).blocks:
            n = blocks.get(b.id, 0.0)
            if n:
                for ins in b.instructions:
                    per[ins.info.group] += n
        out[fname] = dict(sorted(per.items()))
        total.update(per)
    out["total"] = dict(sorted(total.items()))
    return out


# ----------------------------------------------------------------------------------------- runs
def run_once(gpu: Gpu, ptx: str, bound: BoundLaunch, symbols: tuple[str, ...] = ()
             ) -> tuple[dict[str, bytes], dict[str, list[int]]]:
    """One launch of ``ptx``'s copy of the bound kernel on fresh buffers: (buffer contents after it, each
    counter array's elements)."""
    module = gpu.load(ptx)
    try:
        prepared = gpu.prepare(module, bound.name, bound.launch)
        try:
            gpu.run(prepared)
            outputs = gpu.outputs(prepared)
            counters = {s: np.frombuffer(gpu.read_global(module, s), np.uint64).tolist() for s in symbols}
        finally:
            gpu.release(prepared)
    finally:
        gpu.unload(module)
    return outputs, counters


def profile(bound: BoundLaunch, device: Device, options: InstrumentOptions | None = None) -> ProfileResult:
    """Count the basic-block executions of one launch on ``device`` (see the module docstring)."""
    gpu = device.gpu
    result = instrument(bound.module, options)
    want, _ = run_once(gpu, print_module(bound.module), bound)
    got, raw = run_once(gpu, result.text, bound, (result.counters.symbol,))
    mismatches = [n for n in want if want[n] != got.get(n)]
    source = "gpu" if device.kind == "cuda" else "emulated"
    counts = block_counts(result.counters, raw[result.counters.symbol], bound.name, bound.launch, source)
    return ProfileResult(counts, dynamic_instructions(bound.module, counts), not mismatches, mismatches,
                         gpu.info().name, result.counters)


def run_counters(gpu: Gpu, ptx: str, bound: BoundLaunch, maps: list[CounterMap]) -> list[dict[str, dict[int, int]]]:
    """Launch already-instrumented PTX once and fold each map's counters (the LLVM IR route; PTX carrying
    both routes' counters)."""
    _, raw = run_once(gpu, ptx, bound, tuple(m.symbol for m in maps))
    return [m.fold(raw[m.symbol]) for m in maps]
