"""Portable kernel features from a kernel and its block counts: the twelve of GPU Mangrove, computed right
for the opcodes it misfiled, plus richer ones (per-group and per-width counts, local memory, occupancy and
spills, divergence risk, coalescing).

:data:`FEATURES` is the single description of every feature; ``docs/features.md`` is generated from it
(:func:`features_markdown`). Counts are totals over all threads: an instruction's executions are its block's
count, so an instruction total is the sum over blocks of count times instructions in the block, device
functions included.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.block_counts import BlockCounts
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.divergence import STRIDE_CLASSES, branch_divergence, global_accesses, stride_bytes
from ptxstatic.hardware.occupancy import GpuSpec, occupancy
from ptxstatic.ptx.ast import Imm, Instruction, Module, Vec
from ptxstatic.ptx.isa import (
    CONTROL,
    FP16,
    FP32,
    FP64,
    INT,
    LOGIC,
    SPECIAL,
    SYNC,
    TYPE_BITS,
    OpInfo,
)
from ptxstatic.toolchain.ptxas import PtxasFunction

if TYPE_CHECKING:
    from ptxstatic.features.resources import KernelResources


@dataclass(frozen=True)
class Feature:
    name: str
    unit: str
    description: str
    mangrove: bool = False  # one of GPU Mangrove's twelve


FEATURES: tuple[Feature, ...] = (
    Feature("threads_per_cta", "threads", "Threads per CTA of the launch.", True),
    Feature("ctas", "CTAs", "CTAs in the grid of the launch.", True),
    Feature("instructions", "instructions", "Executed instructions summed over all threads, device functions "
            "included; a guarded instruction counts whether or not its guard holds.", True),
    Feature("special_ops", "instructions", "Special-function unit operations: rcp, sqrt, rsqrt, sin, cos, lg2, "
            "ex2, tanh and floating-point division.", True),
    Feature("logic_ops", "instructions", "Bitwise logic, shifts and bit-field operations (and, or, xor, not, "
            "shl, shr, lop3, bfe, bfi, popc, ...); warp shuffles are not logic.", True),
    Feature("control_ops", "instructions", "Branches, calls, returns, exits and traps.", True),
    Feature("arithmetic_ops", "instructions", "Integer, fp16/bf16 (and packed and 8-bit float), fp32 and fp64 "
            "arithmetic, plus tensor-core matrix multiply-accumulate (mma, wmma.mma, wgmma, tcgen05.mma).",
            True),
    Feature("sync_ops", "instructions", "Barriers and memory fences (bar, barrier, bar.warp.sync, membar, "
            "fence).", True),
    Feature("global_bytes", "bytes", "Bytes moved to and from global memory: ld/ldu/st (ld.global.nc "
            "included), atom and red (a read and a write each), the global side of cp.async and bulk copies "
            "(size from the operand), and wmma fragments (tile bytes / 32 per thread).", True),
    Feature("param_bytes", "bytes", "Bytes loaded from and stored to the parameter space.", True),
    Feature("shared_bytes", "bytes", "Bytes moved to and from shared memory: ld/st, atom and red (read and "
            "write), the shared side of cp.async and bulk copies, ldmatrix/stmatrix (x1/x2/x4 8x8 tiles / 32 "
            "per thread), shared wmma fragments and wgmma operands read from shared memory.", True),
    Feature("arithmetic_intensity", "ops/byte", "arithmetic_ops / (global_bytes + shared_bytes + param_bytes), "
            "0 when no bytes move.", True),
    Feature("local_bytes", "bytes", "Bytes moved to and from local memory (per-thread stack, spills)."),
    Feature("generic_bytes", "bytes", "Bytes moved through generic addresses, whose state space is only known "
            "at run time (every access of -G builds)."),
    Feature("const_bytes", "bytes", "Bytes loaded from the constant space."),
    Feature("texture_bytes", "bytes", "Bytes moved by texture and surface instructions."),
    Feature("unknown_size_copies", "instructions", "Executed bulk or tensor copies whose size is a register or "
            "a tensor map, so their bytes are not counted."),
    Feature("group.<group>", "instructions", "Executed instructions per ISA group (ptxstatic.ptx.isa.GROUPS)."),
    Feature("width.<group>.<bits>", "instructions", "Executed instructions per ISA group and operand width in "
            "bits (element type bits times vector length)."),
    Feature("branches", "instructions", "Static count of conditional branches, guarded returns and indexed "
            "branches in the kernel and its callees."),
    Feature("divergent_branch_fraction", "fraction", "Share of those whose condition depends, through register "
            "def-use chains, on %tid or %laneid (divergence risk)."),
    Feature("divergent_branch_executed_fraction", "fraction", "The same share weighted by executions."),
    Feature("stride.<class>", "fraction", "Share of executed global bytes by stride of the address along "
            "%tid.x: broadcast (0), unit (one element), strided (other constant or uniform), unknown."),
    Feature("registers", "registers", "Registers per thread (ptxas -v; estimated from the PTX's register pressure "
            "where ptxas cannot assemble for the GPU, see `resources`)."),
    Feature("static_shared_bytes", "bytes", "Statically allocated shared memory per CTA (ptxas -v, or the "
            "kernel's `.shared` declarations)."),
    Feature("spill_bytes", "bytes", "Spill stores plus spill loads per thread (ptxas -v; 0 when estimated)."),
    Feature("stack_bytes", "bytes", "Stack frame per thread (ptxas -v, or the kernel's `.local` declarations)."),
    Feature("resources", "", "Where the four above come from: `ptxas -v -arch=sm_XX`, or `estimated from the "
            "PTX (why)` (ptxstatic.features.resources)."),
    Feature("blocks_per_sm", "CTAs", "Resident CTAs per SM on the chosen GPU (occupancy rules, "
            "ptxstatic.hardware.occupancy)."),
    Feature("occupancy", "fraction", "Resident warps / maximum warps per SM."),
    Feature("waves", "waves", "CTAs / (blocks_per_sm * SMs of the GPU)."),
)

_TENSOR_MATH = frozenset({
    "mma", "mma.sp", "wmma.mma", "wgmma.mma_async", "wgmma.mma_async.sp", "tcgen05.mma", "tcgen05.mma.sp",
    "tcgen05.mma.ws", "tcgen05.mma.ws.sp",
})
_ARITH_GROUPS = frozenset({INT, FP16, FP32, FP64})
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")
_ELEMENT_BITS = {**TYPE_BITS, "b1": 1, "u4": 4, "s4": 4}


def _shape(info: OpInfo) -> tuple[int, int, int] | None:
    for word in info.other:
        if m := _SHAPE.fullmatch(word):
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
    return None


def _space(name: str) -> str:
    return name if name in ("global", "shared", "local", "const", "param") else (
        "texture" if name in ("tex", "surf") else "generic")


def _imm(op: object) -> int | None:
    return op.value if isinstance(op, Imm) and isinstance(op.value, int) else None


def memory_traffic(ins: Instruction) -> list[tuple[str, float]]:
    """(state space, bytes per thread) moved by one execution of ``ins``; space "unknown" marks a copy whose
    size is not static."""
    info = ins.info
    op = info.opcode
    if op in ("wmma.load", "wmma.store"):
        shape = _shape(info)
        bits = _ELEMENT_BITS.get(info.types[-1], 16) if info.types else 16
        if shape is None:
            return []
        m, n, k = shape
        frag = next((w for w in info.other if w in ("a", "b", "c", "d")), "c")
        elems = {"a": m * k, "b": k * n}.get(frag, m * n)
        return [(_space(info.space or "generic"), elems * bits / 8 / 32)]
    if op in ("ldmatrix", "stmatrix"):
        tiles = next((int(w[1]) for w in info.other if w in ("x1", "x2", "x4")), 1)
        return [("shared", tiles * 8 * 8 * 2 / 32)]
    if op.startswith("wgmma.mma_async"):
        shape = _shape(info)
        bits = _ELEMENT_BITS.get(info.types[1], 16) if len(info.types) > 1 else 16
        if shape is None:
            return []
        m, n, k = shape
        a_in_shared = len(ins.operands) > 1 and not isinstance(ins.operands[1], Vec)
        return [("shared", ((m * k if a_in_shared else 0) + k * n) * bits / 8 / 128)]
    if op.startswith(("cp.async", "cp.reduce.async")) and len(info.spaces) == 2:
        size = _imm(ins.operands[2]) if len(ins.operands) > 2 and "tensor" not in op else None
        if size is None:
            return [("unknown", 0.0)]
        source_size = _imm(ins.operands[3]) if op == "cp.async" and len(ins.operands) > 3 else None
        dst, src = info.spaces
        return [(_space(dst), float(size)), (_space(src), float(size if source_size is None else source_size))]
    if not info.is_memory_access or op in ("prefetch", "prefetchu", "st.async", "red.async", "st.bulk"):
        return []
    width = float(info.width_bytes)
    space = _space(info.space)
    if info.group == "atomic":
        return [(space, 2 * width)]
    return [(space, width)]


def is_arithmetic(info: OpInfo) -> bool:
    return info.group in _ARITH_GROUPS or info.opcode in _TENSOR_MATH


def _width_key(info: OpInfo) -> str:
    bits = TYPE_BITS.get(info.dtype, 0) * info.vec
    return f"width.{info.group}.{bits}"


def executed_instructions(module: Module, counts: BlockCounts) -> Iterator[tuple[Instruction, float]]:
    """Every instruction of the module's counted functions with its executions summed over threads."""
    for fname, blocks in counts.counts.items():
        try:
            fn = module.function(fname)
        except KeyError:
            continue
        for b in build_cfg(fn).blocks:
            c = blocks.get(b.id, 0.0)
            if c:
                for ins in b.instructions:
                    yield ins, c


def executed_mix(module: Module, counts: BlockCounts) -> tuple[dict[str, float], dict[str, float]]:
    """Executed instructions per key (group.*, width.*, the Mangrove op classes) and bytes per state space."""
    ops: Counter[str] = Counter()
    volume: Counter[str] = Counter()
    for ins, c in executed_instructions(module, counts):
        info = ins.info
        ops["instructions"] += c
        ops[f"group.{info.group}"] += c
        ops[_width_key(info)] += c
        for key, hit in (("special_ops", info.group == SPECIAL), ("logic_ops", info.group == LOGIC),
                         ("control_ops", info.group == CONTROL), ("sync_ops", info.group == SYNC),
                         ("arithmetic_ops", is_arithmetic(info))):
            if hit:
                ops[key] += c
        for space, nbytes in memory_traffic(ins):
            if space == "unknown":
                ops["unknown_size_copies"] += c
            else:
                volume[space] += c * nbytes
    return dict(ops), dict(volume)


def _divergence(module: Module, counts: BlockCounts) -> dict[str, float]:
    total = dep = 0
    run = dep_run = 0.0
    moved: Counter[str] = Counter()
    for fname, blocks in counts.counts.items():
        try:
            fn = module.function(fname)
        except KeyError:
            continue
        cfg = build_cfg(fn)
        du = def_use(cfg)
        d = branch_divergence(cfg, du, blocks)
        total += d.conditional
        dep += d.thread_dependent
        run += d.executed
        dep_run += d.thread_dependent_executed
        moved.update(stride_bytes(global_accesses(cfg, du), blocks))
    all_bytes = sum(moved.values())
    return {
        "branches": total,
        "divergent_branch_fraction": dep / total if total else 0.0,
        "divergent_branch_executed_fraction": dep_run / run if run else 0.0,
        **{f"stride.{k}": moved[k] / all_bytes if all_bytes else 0.0 for k in STRIDE_CLASSES},
    }


def features_from_counts(module: Module, kernel: str, counts: BlockCounts, *, gpu: GpuSpec | None = None,
                         ptxas: Mapping[str, PtxasFunction | KernelResources] | None = None,
                         ) -> dict[str, float | int | str]:
    """Every feature of :data:`FEATURES` that the inputs allow (occupancy needs ``gpu`` and ``ptxas``: the
    statistics of ``ptxas -v`` or :func:`ptxstatic.features.resources.kernel_resources`)."""
    if kernel not in counts.counts:
        raise PtxstaticError(f"the block counts are for {counts.kernel!r}, not for kernel {kernel!r}")
    ops, volume = executed_mix(module, counts)
    launch = counts.launch
    out: dict[str, float | int | str] = {
        "threads_per_cta": launch.threads_per_block,
        "ctas": launch.blocks,
        **{k: ops.get(k, 0.0) for k in ("instructions", "special_ops", "logic_ops", "control_ops",
                                        "arithmetic_ops", "sync_ops")},
    }
    for space in ("global", "param", "shared", "local", "generic", "const", "texture"):
        out[f"{space}_bytes"] = volume.get(space, 0.0)
    moved = out["global_bytes"] + out["shared_bytes"] + out["param_bytes"]  # type: ignore[operator]
    out["arithmetic_intensity"] = out["arithmetic_ops"] / moved if moved else 0.0  # type: ignore[operator]
    out["unknown_size_copies"] = ops.get("unknown_size_copies", 0.0)
    out.update(sorted((k, v) for k, v in ops.items() if k.startswith(("group.", "width."))))
    out.update(_divergence(module, counts))
    stats = ptxas.get(kernel) if ptxas else None
    if stats is not None:
        out.update(registers=stats.registers, static_shared_bytes=stats.shared_bytes,
                   spill_bytes=stats.spill_stores + stats.spill_loads, stack_bytes=stats.stack_frame,
                   resources=getattr(stats, "source", f"ptxas -v -arch={stats.arch}"))
        if gpu is not None:
            occ = occupancy(gpu, launch.threads_per_block, stats.registers, stats.shared_bytes + launch.shared_bytes,
                            launch.blocks)
            out.update(gpu=gpu.name, blocks_per_sm=occ.blocks_per_sm, occupancy=occ.occupancy, waves=occ.waves,
                       occupancy_limited_by=occ.limited_by)
    return out


def features_markdown() -> str:
    """The feature table of docs/features.md."""
    rows = ["| feature | unit | Mangrove | meaning |", "|---|---|---|---|"]
    rows += [f"| `{f.name}` | {f.unit} | {'yes' if f.mangrove else ''} | {f.description} |" for f in FEATURES]
    return "\n".join(rows) + "\n"
