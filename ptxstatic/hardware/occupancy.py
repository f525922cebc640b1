"""Occupancy and waves per GPU, with the rules of the CUDA occupancy calculator (``cuda_occupancy.h``).

Limits per architecture are those of the CUDA C++ Programming Guide, "Compute Capabilities", table
"Technical Specifications per Compute Capability", and the allocation granularities of ``cuda_occupancy.h``:
registers are allocated per warp in units of 256 and split evenly over 4 SM sub-partitions; shared memory
per block is rounded up to the allocation unit after adding the per-block reservation (1 KiB from sm_80 on).
The shared memory per SM is taken at its largest carve-out, as the driver configures for a kernel that needs
it. See docs/features.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import WARP_SIZE as WARP


@dataclass(frozen=True)
class Arch:
    name: str
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    register_unit: int  # registers allocated per warp in multiples of this
    sub_partitions: int
    shared_per_sm: int  # bytes, largest carve-out
    max_shared_per_block: int  # bytes, with opt-in
    shared_reserved_per_block: int
    shared_unit: int
    max_threads_per_block: int = 1024


ARCHS: dict[str, Arch] = {a.name: a for a in (
    Arch("sm_52", 2048, 64, 32, 65536, 255, 256, 4, 96 * 1024, 48 * 1024, 0, 256),
    Arch("sm_75", 1024, 32, 16, 65536, 255, 256, 4, 64 * 1024, 64 * 1024, 0, 256),
    Arch("sm_80", 2048, 64, 32, 65536, 255, 256, 4, 164 * 1024, 163 * 1024, 1024, 128),
    Arch("sm_86", 1536, 48, 16, 65536, 255, 256, 4, 100 * 1024, 99 * 1024, 1024, 128),
    Arch("sm_89", 1536, 48, 24, 65536, 255, 256, 4, 100 * 1024, 99 * 1024, 1024, 128),
    Arch("sm_90", 2048, 64, 32, 65536, 255, 256, 4, 228 * 1024, 227 * 1024, 1024, 128),
)}


@dataclass(frozen=True)
class GpuSpec:
    name: str
    arch: str
    sms: int


GPUS: dict[str, GpuSpec] = {g.name: g for g in (
    GpuSpec("titanx", "sm_52", 24),  # GeForce GTX Titan X (Maxwell)
    GpuSpec("t4", "sm_75", 40),
    GpuSpec("rtx2080ti", "sm_75", 68),
    GpuSpec("a100", "sm_80", 108),
    GpuSpec("a10", "sm_86", 72),
    GpuSpec("rtx3090", "sm_86", 82),
    GpuSpec("l4", "sm_89", 58),
    GpuSpec("rtx4090", "sm_89", 128),
    GpuSpec("l40s", "sm_89", 142),
    GpuSpec("h100", "sm_90", 132),  # H100 SXM5
    GpuSpec("h200", "sm_90", 132),  # H200 SXM
)}


def gpu_spec(name: str) -> GpuSpec:
    try:
        return GPUS[name.lower()]
    except KeyError:
        raise PtxstaticError(f"unknown GPU {name!r}; known: {', '.join(GPUS)}") from None


@dataclass
class Occupancy:
    gpu: str
    arch: str
    blocks_per_sm: int
    limited_by: str  # "warps", "registers", "shared", "blocks" (the smallest limit; ties in this order)
    warps_per_block: int
    occupancy: float  # active warps / maximum warps per SM
    waves: float  # CTAs / (blocks per SM * SMs)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Residency:
    """How many blocks of a kernel fit on one SM of an architecture, and what limits them."""

    arch: str
    blocks_per_sm: int
    limited_by: str  # "warps", "registers", "shared", "blocks" (the smallest limit; ties in this order)
    limits: dict[str, int]  # blocks per SM allowed by each resource
    warps_per_block: int
    max_warps_per_sm: int

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm


def residency(arch: str, threads_per_block: int, registers: int, shared_bytes: int) -> Residency:
    """Resident blocks per SM of ``arch`` for a kernel using ``registers`` per thread and ``shared_bytes`` per
    block (static plus dynamic), by the allocation rules of the module docstring."""
    a = ARCHS[arch]
    if threads_per_block > a.max_threads_per_block:
        raise PtxstaticError(f"{threads_per_block} threads per block exceed {a.max_threads_per_block} on {a.name}")
    warps = -(-threads_per_block // WARP)
    limits = {"warps": a.max_warps_per_sm // warps, "blocks": a.max_blocks_per_sm}
    if registers > a.max_registers_per_thread:
        limits["registers"] = 0
    elif registers > 0:
        per_warp = _round_up(registers * WARP, a.register_unit)
        per_partition = (a.registers_per_sm // a.sub_partitions) // per_warp
        limits["registers"] = per_partition * a.sub_partitions // warps
    if shared_bytes > a.max_shared_per_block:
        limits["shared"] = 0
    elif shared_bytes > 0 or a.shared_reserved_per_block:
        per_block = _round_up(shared_bytes + a.shared_reserved_per_block, a.shared_unit)
        limits["shared"] = a.shared_per_sm // per_block
    order = ("warps", "registers", "shared", "blocks")
    limited_by = min(limits, key=lambda k: (limits[k], order.index(k)))
    return Residency(a.name, limits[limited_by], limited_by, limits, warps, a.max_warps_per_sm)


def occupancy(target: GpuSpec, threads_per_block: int, registers: int, shared_bytes: int, ctas: int) -> Occupancy:
    """Resident blocks per SM for a kernel using ``registers`` per thread and ``shared_bytes`` per block
    (static plus dynamic), and the waves a launch of ``ctas`` CTAs takes."""
    r = residency(target.arch, threads_per_block, registers, shared_bytes)
    resident = r.blocks_per_sm * target.sms
    return Occupancy(target.name, r.arch, r.blocks_per_sm, r.limited_by, r.warps_per_block, r.occupancy,
                     ctas / resident if resident else float("inf"))
