"""Register spills: the local-memory traffic ptxas adds and the PTX does not show.

ptxas spills what does not fit in a thread's registers to its stack frame in local memory; ``ptxas -v`` tells
the bytes of spill stores and loads in each function's machine code, not how often they run. The model takes
them to run as often as the function's average instruction (its thread-instructions over its instructions),
coalesced as local memory is (a warp's lanes' words interleaved: a sector per 32 bytes), hitting in L1 as far
as the frames of a CTA's threads fit in the L1 the CTA has, and in L2 as far as the frames of every thread
resident on the GPU at once fit in the part of L2 one access can count on (:data:`~.caches.L2_USABLE`);
stores that miss are written back. How often spills run is the model's weakest part: the interval spans half
to twice it.

ptxas runs only for a kernel that declares launch bounds (``.maxnreg``, ``.maxntid``, ``.minnctapersm``)
under which the register pressure of its PTX exceeds three quarters of the registers a thread may have:
without bounds a thread may use 255 registers and kernels rarely spill, and ``predict`` runs no ptxas for
them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.ptx.ast import Function
from ptxstatic.ptx.launch_binding import BoundLaunch
from ptxstatic.traffic.caches import L2_USABLE, SECTOR

#: register pressure over this share of a thread's registers makes a kernel a candidate for spills
PRESSURE_SHARE = 0.75
#: the spills' interval: how often they run is known to within these factors
FREQUENCY_RANGE = (0.5, 2.0)


@dataclass(frozen=True)
class SpillTraffic:
    """A launch's spill sectors through L1, L2 and DRAM (point values; intervals by :data:`FREQUENCY_RANGE`)."""

    load_sectors: float
    store_sectors: float
    l1_hit: float
    l2_hit: float
    frame_bytes: int  # the kernel's stack frame per thread

    @property
    def l2_read_sectors(self) -> float:
        return self.load_sectors * (1.0 - self.l1_hit)

    @property
    def l2_write_sectors(self) -> float:
        return self.store_sectors * (1.0 - self.l1_hit)

    @property
    def dram_read_bytes(self) -> float:
        return self.l2_read_sectors * (1.0 - self.l2_hit) * SECTOR

    @property
    def dram_write_bytes(self) -> float:
        return self.l2_write_sectors * (1.0 - self.l2_hit) * SECTOR

    def assumption(self) -> str:
        return (f"register spills ({self.load_sectors + self.store_sectors:.3g} sectors, {self.frame_bytes}-byte "
                f"frames) run as often as their function's average instruction; {self.l1_hit:.0%} hit in L1, "
                f"{self.l2_hit:.0%} of the rest in L2")


def register_cap(fn: Function, arch: str) -> int | None:
    """The registers a thread of kernel ``fn`` may use under its launch bounds, None without bounds."""
    a = ARCHS.get(arch)
    caps = []
    if (d := fn.directive("maxnreg")) is not None and d.values:
        caps.append(int(d.values[0]))
    threads = fn.directive("maxntid") or fn.directive("reqntid")
    blocks = fn.directive("minnctapersm")
    if a is not None and threads is not None and threads.values and blocks is not None and blocks.values:
        threads_per_sm = math.prod(int(v) for v in threads.values) * int(blocks.values[0])
        per_thread = a.registers_per_sm // max(1, threads_per_sm)
        caps.append(per_thread // 8 * 8)
    if not caps:
        return None
    return min([*caps, a.max_registers_per_thread] if a is not None else caps)


def may_spill(bound: BoundLaunch, arch: str) -> bool:
    """Whether ptxas may spill in the launch's kernel or what it calls (module docstring)."""
    from ptxstatic.analysis.liveness import register_pressure

    cap = register_cap(bound.kernel, arch)
    if cap is None:
        return False
    functions = [f for f in bound.module.functions if f.body is not None]
    return any(register_pressure(build_cfg(f)) > PRESSURE_SHARE * cap for f in functions)


def spill_traffic(bound: BoundLaunch, counts: dict[str, dict[int, float]], figures: GpuFigures,
                  cta_l1_bytes: int, resident_ctas: int) -> SpillTraffic | None:
    """The launch's spill traffic with its block counts (thread entries per block over the launch), None where
    the kernel cannot spill or ptxas does not say (module docstring)."""
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.ptx.printer import module as print_module
    from ptxstatic.toolchain.ptxas import ptxas_stats, target_arch, unassemblable

    if not may_spill(bound, figures.arch) or unassemblable(target_arch(bound.module), figures.arch) is not None:
        return None
    try:
        resources = ptxas_stats(print_module(bound.module), figures.arch) or {}
    except PtxstaticError:
        return None
    loads = stores = 0.0
    for name, blocks in counts.items():
        r = resources.get(name)
        if r is None or not (r.spill_loads or r.spill_stores):
            continue
        cfg = build_cfg(bound.module.function(name))
        sizes = {b.id: len(b.instructions) for b in cfg.blocks}
        static = sum(sizes.values())
        runs = sum(c * sizes.get(b, 0) for b, c in blocks.items()) / max(1, static)
        loads += r.spill_loads * runs / SECTOR
        stores += r.spill_stores * runs / SECTOR
    kernel = resources.get(bound.kernel.name)
    if not (loads or stores) or kernel is None:
        return None
    frame = max(1, kernel.stack_frame)
    cta_frames = frame * bound.launch.threads_per_block
    gpu_frames = cta_frames * min(bound.launch.blocks, resident_ctas * figures.sms)
    return SpillTraffic(loads, stores, min(1.0, cta_l1_bytes / cta_frames),
                        min(1.0, L2_USABLE[1] * figures.l2_bytes / gpu_frames), kernel.stack_frame)
