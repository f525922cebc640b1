"""Static features of an executed instruction sequence, for the tree models.

Portable features follow GPU Mangrove (Braun et al.): instruction totals per category, bytes moved per
state space and arithmetic intensity, all per thread unless a launch (threads per CTA, CTAs) is given, in
which case the launch itself and per-launch totals are added. Its defects are fixed: ``ld.global.nc``,
atomics, f16 and tensor instructions are classified by the ISA table rather than falling into "misc", and
warp shuffles/votes are their own category rather than "logic".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ptxstatic.analysis.sequence import Run, SeqItem, as_runs
from ptxstatic.ptx import isa

#: ISA group -> portable category
CATEGORY: dict[str, str] = {
    isa.INT: "arith", isa.FP16: "arith", isa.FP32: "arith", isa.FP64: "arith", isa.TENSOR: "arith",
    isa.SPECIAL: "special", isa.LOGIC: "logic", isa.COMPARE: "logic", isa.MOVE: "logic",
    isa.CONTROL: "control", isa.SYNC: "sync", isa.WARP: "warp",
}
CATEGORIES = ("arith", "special", "logic", "control", "sync", "warp")
#: state spaces whose traffic is counted, with the space names of SeqItem that fall in each
SPACES = {
    "global": ("global",), "shared": ("shared",), "param": ("param",), "local": ("local",),
    "const": ("const",), "generic": ("generic",), "texture": ("tex", "surf"),
}
_SPACE_OF = {s: k for k, names in SPACES.items() for s in names}
#: per-thread portable feature names, in a fixed order
PORTABLE = (
    "instructions", *CATEGORIES, *(f"bytes_{s}" for s in SPACES), "fp64_share", "arith_intensity",
)
LAUNCH = ("threads_per_cta", "ctas")
#: totals over all threads of a launch (every per-thread count times the threads)
TOTALS = tuple(f"{n}_total" for n in PORTABLE if n not in ("fp64_share", "arith_intensity"))
#: names of the group-histogram features
GROUP_FEATURES = (*(f"share_{g}" for g in isa.GROUPS), "log_instructions")


def access_bytes(item: SeqItem) -> int:
    """Bytes one thread moves with one execution of a memory access (0 for other instructions)."""
    if item.group not in isa.MEMORY_GROUPS and item.group != isa.ATOMIC:
        return 0
    return max(1, isa.TYPE_BITS.get(item.dtype, 8) * max(1, item.vec) // 8)


def features_from_sequence(
    runs: Iterable[tuple[SeqItem, int]], launch: tuple[int, int] | None = None,
) -> dict[str, float]:
    """Portable features of an executed sequence given as (item, repeat count) runs.

    ``launch``: (threads per CTA, CTAs). Without it the features are per thread; with it the launch is
    added and every count is also given as a total over all threads (``*_total``).
    """
    f = dict.fromkeys(PORTABLE, 0.0)
    fp64 = 0.0
    merged: dict[SeqItem, float] = {}
    for item, count in runs:
        merged[item] = merged.get(item, 0) + count
    for item, count in merged.items():
        f["instructions"] += count
        category = CATEGORY.get(item.group)
        if category:
            f[category] += count
        if item.group == isa.FP64:
            fp64 += count
        nbytes = access_bytes(item)
        if nbytes:
            f[f"bytes_{_SPACE_OF.get(item.space, 'generic')}"] += nbytes * count
    f["fp64_share"] = fp64 / max(1.0, f["arith"])
    offchip = f["bytes_global"] + f["bytes_generic"] + f["bytes_local"] + f["bytes_texture"]
    f["arith_intensity"] = f["arith"] / max(1.0, offchip)
    if launch is not None:
        threads_per_cta, ctas = launch
        threads = threads_per_cta * ctas
        for total in TOTALS:
            f[total] = f[total.removesuffix("_total")] * threads
        f["threads_per_cta"], f["ctas"] = float(threads_per_cta), float(ctas)
    return f


def group_histogram(runs: Iterable[tuple[SeqItem, int]]) -> dict[str, float]:
    """Share of executed instructions in each ISA group, plus log(1 + total instructions)."""
    counts = dict.fromkeys(isa.GROUPS, 0.0)
    total = 0.0
    for item, count in runs:
        counts[item.group] = counts.get(item.group, 0.0) + count
        total += count
    out = {f"share_{g}": counts[g] / max(1.0, total) for g in isa.GROUPS}
    out["log_instructions"] = math.log1p(total)
    return out


def group_matrix(seqs: Sequence[Sequence[SeqItem] | Sequence[Run]]) -> np.ndarray:
    """(sequences, len(GROUP_FEATURES)) group histograms."""
    rows = [group_histogram(as_runs(s)) for s in seqs]
    return np.array([[r[name] for name in GROUP_FEATURES] for r in rows], dtype=np.float64).reshape(
        len(rows), len(GROUP_FEATURES)
    )
