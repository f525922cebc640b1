"""Memory-intensity features of an instruction sequence: what decides how a kernel's time and power follow
the memory and core clocks, computed the same way from an executed sequence (runs with repeat counts) and
from static program order.

Every feature is a ratio (per instruction, per issue cycle, per arithmetic operation, a share), so it does
not depend on how many threads run or how often the whole sequence repeats: unrolled microbenchmarks,
the front end's executed sequences and loop-weighted program order are comparable. Address patterns
(unit-stride, broadcast, indirect) and occupancy are not here: the imported training data records opcodes
only (no operands, no launch), so no model trained on it could use them.

Where no launch is known, :func:`loop_weighted_runs` weights a kernel's program order by loop depth
(an assumed trip count per nesting level), so that the body of an inner loop dominates as it does when
the kernel runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.sequence import Run, SeqItem, as_runs, kernel_sequence
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.sequence_features import access_bytes
from ptxstatic.hardware.figures import GpuFigures, gpu_figures
from ptxstatic.hardware.issue_rates import issue_rate
from ptxstatic.ptx import isa
from ptxstatic.ptx.ast import Function

#: trip count assumed per loop nesting level when a kernel has no launch (program-order features)
DEFAULT_TRIPS = 16.0

#: feature name -> meaning (the order is the order of :func:`intensity_matrix` columns)
FEATURES: dict[str, str] = {
    "issue_cycles_per_instruction": "SM issue cycles per executed instruction at published rates (fp64, SFU "
                                    "and emulated integer multiply cost more than fp32)",
    "dram_to_issue": "log(1 + (off-chip bytes / peak DRAM bytes per SM cycle) / issue cycles): the roofline "
                     "ratio of memory time to issue time at the highest clocks, caches ignored",
    "global_bytes_per_instruction": "bytes moved by global loads, stores and atomics per instruction",
    "generic_bytes_per_instruction": "bytes moved through generic addresses per instruction",
    "shared_bytes_per_instruction": "bytes moved to and from shared memory per instruction",
    "local_bytes_per_instruction": "bytes moved to and from local memory (spills, stack) per instruction",
    "param_const_bytes_per_instruction": "bytes loaded from the parameter and constant spaces per instruction",
    "loads_per_arithmetic": "global and generic loads per arithmetic operation",
    "stores_per_arithmetic": "global and generic stores per arithmetic operation",
    "shared_per_offchip": "log(1 + shared bytes / (off-chip bytes + 1)): data staged in shared memory and reused",
    "wide_access_share": "share of off-chip bytes moved by accesses of 64 bits or more (vector or 64-bit types)",
    "store_share": "share of off-chip bytes that are stores",
    "dependent_load_share": "share of off-chip loads whose closest producer is a global load (address "
                            "computed from loaded data: indirect access, pointer chasing)",
    "load_use_near_share": "share of instructions consuming a global load within 3 instructions of it",
    "fp32_share": "fp32 arithmetic per instruction",
    "fp64_share": "fp64 arithmetic per instruction",
    "sfu_share": "special-function operations per instruction",
    "int_share": "integer arithmetic per instruction",
    "int_mul_share": "integer multiply and multiply-add per instruction",
    "logic_share": "logic, compare and move instructions per instruction",
    "conversion_share": "type conversions per instruction",
    "control_share": "branches and calls per instruction",
    "sync_share": "barriers and fences per instruction",
    "atomic_share": "atomics and reductions per instruction",
    "warp_share": "warp shuffles, votes and reductions per instruction",
}
NAMES = tuple(FEATURES)
#: the features models use: parameter bytes per instruction is left out, since parameters are loaded once per
#: thread, so it measures the inverse of the sequence length, which differs between an unrolled executed
#: sequence and static program order (on the microbenchmarks it separates kernels by length, not by kind)
MODEL_FEATURES = tuple(n for n in NAMES if n != "param_const_bytes_per_instruction")

_OFFCHIP = ("global", "generic", "local", "tex", "surf")


def _accumulate(runs: Sequence[Run], figures: GpuFigures) -> dict[str, float]:
    rates = figures.rates
    acc: dict[str, float] = dict.fromkeys((
        "n", "cycles", "arith", "loads", "stores", "dep_loads", "near", "offchip", "wide", "stored",
        "global", "generic", "shared", "local", "paramconst", "fp32", "fp64", "sfu", "int", "int_mul",
        "logic", "conversion", "control", "sync", "atomic", "warp",
    ), 0.0)
    merged: dict[SeqItem, float] = {}
    for item, count in runs:
        merged[item] = merged.get(item, 0.0) + count
    for item, c in merged.items():
        g = item.group
        acc["n"] += c
        acc["cycles"] += c / issue_rate(item, rates)
        if g in (isa.INT, isa.FP16, isa.FP32, isa.FP64, isa.SPECIAL):
            acc["arith"] += c
        for key, hit in (("fp32", g in (isa.FP32, isa.FP16)), ("fp64", g == isa.FP64), ("sfu", g == isa.SPECIAL),
                         ("int", g == isa.INT), ("logic", g in (isa.LOGIC, isa.COMPARE, isa.MOVE)),
                         ("conversion", item.opcode == "cvt"), ("control", g == isa.CONTROL),
                         ("sync", g == isa.SYNC), ("atomic", g == isa.ATOMIC), ("warp", g == isa.WARP),
                         ("int_mul", g == isa.INT and item.opcode in ("mul", "mad", "mul24", "mad24"))):
            if hit:
                acc[key] += c
        if item.dep_kind == "global_load" and 0 < item.dep_distance <= 3:
            acc["near"] += c
        nbytes = access_bytes(item) * c
        if not nbytes:
            continue
        space = item.space
        if space in ("param", "const"):
            acc["paramconst"] += nbytes
        elif space in ("shared", "local", "global", "generic"):
            acc[space] += nbytes
        if space in _OFFCHIP:
            acc["offchip"] += nbytes
            if access_bytes(item) >= 8:
                acc["wide"] += nbytes
            if item.opcode == "st":
                acc["stored"] += nbytes
            if item.opcode in ("ld", "ldu") and space in ("global", "generic"):
                acc["loads"] += c
                if item.dep_kind == "global_load":
                    acc["dep_loads"] += c
            elif item.opcode == "st":
                acc["stores"] += c
    return acc


def intensity_features(seq: Sequence, gpu: str | GpuFigures = "gtxtitanx") -> dict[str, float]:
    """The :data:`FEATURES` of a sequence: SeqItems (each executed once), (item, count) runs, or the nested
    run-length form of an executed sequence."""
    figures = gpu_figures(gpu) if isinstance(gpu, str) else gpu
    a = _accumulate(as_runs(seq), figures)
    n, arith, off = max(a["n"], 1.0), max(a["arith"], 1.0), a["offchip"]
    bytes_per_cycle = figures.bandwidth(figures.memory_mhz) / (figures.sms * figures.max_core_mhz * 1e6)
    return {
        "issue_cycles_per_instruction": a["cycles"] / n,
        "dram_to_issue": math.log1p(off / bytes_per_cycle / max(a["cycles"], 1e-9)),
        "global_bytes_per_instruction": a["global"] / n,
        "generic_bytes_per_instruction": a["generic"] / n,
        "shared_bytes_per_instruction": a["shared"] / n,
        "local_bytes_per_instruction": a["local"] / n,
        "param_const_bytes_per_instruction": a["paramconst"] / n,
        "loads_per_arithmetic": a["loads"] / arith,
        "stores_per_arithmetic": a["stores"] / arith,
        "shared_per_offchip": math.log1p(a["shared"] / (off + 1.0)),
        "wide_access_share": a["wide"] / off if off else 0.0,
        "store_share": a["stored"] / off if off else 0.0,
        "dependent_load_share": a["dep_loads"] / a["loads"] if a["loads"] else 0.0,
        "load_use_near_share": a["near"] / n,
        **{f"{k}_share": a[k] / n for k in ("fp32", "fp64", "sfu", "int", "int_mul", "logic", "conversion",
                                             "control", "sync", "atomic", "warp")},
    }


def intensity_matrix(seqs: Sequence[Sequence], gpu: str | GpuFigures = "gtxtitanx") -> np.ndarray:
    """(sequences, len(NAMES)) feature matrix."""
    rows = [intensity_features(s, gpu) for s in seqs]
    return np.array([[r[k] for k in NAMES] for r in rows], dtype=np.float64).reshape(len(rows), len(NAMES))


def intensity_columns(seqs: Sequence[Sequence], names: Sequence[str], gpu: str | GpuFigures = "gtxtitanx"
                      ) -> np.ndarray:
    """(sequences, len(names)) matrix of the named features."""
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        raise PtxstaticError(f"unknown intensity features: {', '.join(unknown)}")
    return intensity_matrix(seqs, gpu)[:, [NAMES.index(n) for n in names]]


def loop_weights(cfg: BlockGraph, trips: float = DEFAULT_TRIPS) -> dict[int, int]:
    """Each block's weight where no launch is known: ``trips`` to the power of its loop nesting depth."""
    return {block.id: round(trips ** cfg.loop_depth.get(block.id, 0)) for block in cfg.blocks}


def loop_weighted_runs(fn: Function, trips: float = DEFAULT_TRIPS) -> list[Run]:
    """The function's program order as runs, each instruction weighted by its block's :func:`loop_weights`
    (dependency distances as in program order)."""
    seq = kernel_sequence(fn)
    if not seq:
        return []
    cfg = build_cfg(fn)
    weights = loop_weights(cfg, trips)
    weight = [1] * len(seq)
    for block in cfg.blocks:
        for i in range(block.start, block.start + len(block.instructions)):
            weight[i] = weights[block.id]
    return list(zip(seq, weight, strict=True))
