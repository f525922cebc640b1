"""Branches on data the interpreter cannot read, measured on an emulated sample of the launch's CTAs.

Where the launch gives every argument (buffers with their fill) but a branch depends on values the static
interpreter holds as data (staged through shared memory, written by the kernel itself, returned by an atomic,
exchanged by a shuffle), a few CTAs of the launch are run on the PTX emulator (:func:`ptxstatic.emulator
.emulate`, only those CTAs, global memory made page by page as they touch it) and the branches split as they
went there: the machinery ``--profile`` uses with the counts of ``ptxstatic profile --emulate``
(:mod:`ptxstatic.counts.static.branch_shares`), now automatic.

The sample is stratified by the classes of CTAs the static pass found (the grid when every CTA is alike):
:data:`~ptxstatic.limits.STATIC_DATA_SAMPLE_CTAS` CTAs spread over the classes in proportion to their size
(the largest first, at least one each while there are CTAs to spare), at random within a class (seeded).
Each runs on its own, up to its share of :data:`~ptxstatic.limits.STATIC_DATA_SAMPLE_STEPS` warp
instructions and of the time budget (a CTA cut short still counts what it ran). The counts of a class are
its CTAs' counts times the class's size over its sampled CTAs; their sum splits the branches. The standard
error of each block's count is that of the stratified estimator of its total from the sampled CTAs, taken
relative to the count.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.counts.static.ctas import Box, size
from ptxstatic.emulator import EmulationError, StopEmulation, emulate
from ptxstatic.launch import Buffer
from ptxstatic.limits import STATIC_DATA_SAMPLE_CTAS, STATIC_DATA_SAMPLE_STEPS
from ptxstatic.ptx.launch_binding import BoundLaunch


@dataclass
class DataSample:
    """What the emulated CTAs counted: per class, its size and each sampled CTA's counts."""

    strata: list[tuple[int, list[dict[str, dict[int, float]]]]] = field(default_factory=list)
    steps: int = 0  # warp instructions emulated
    cut: int = 0  # CTAs whose emulation the budget ended early
    error: str = ""  # why there is no sample

    @property
    def ctas(self) -> int:
        return sum(len(runs) for _, runs in self.strata)

    def totals(self) -> dict[str, dict[int, float]]:
        """Each block's count over the launch by the stratified estimator (class size times its CTAs' mean)."""
        out: dict[str, dict[int, float]] = {}
        for n, runs in self.strata:
            for counts in runs:
                for fn, blocks in counts.items():
                    dst = out.setdefault(fn, {})
                    for b, c in blocks.items():
                        dst[b] = dst.get(b, 0.0) + c * n / len(runs)
        return out

    def relative_error(self) -> dict[str, dict[int, float]]:
        """The standard error of each block's stratified total relative to it; classes with one sampled CTA take
        the relative variance of the others (all of it when none has two)."""
        totals = self.totals()
        pooled: dict[tuple[str, int], list[float]] = {}
        for _, runs in self.strata:
            if len(runs) < 2:
                continue
            for fn, blocks in totals.items():
                for b in blocks:
                    ys = np.array([r.get(fn, {}).get(b, 0.0) for r in runs])
                    if ys.mean() > 0:
                        pooled.setdefault((fn, b), []).append(float(ys.var(ddof=1) / ys.mean() ** 2))
        out: dict[str, dict[int, float]] = {}
        for fn, blocks in totals.items():
            for b, total in blocks.items():
                rv = pooled.get((fn, b))
                var = 0.0
                for n, runs in self.strata:
                    ys = np.array([r.get(fn, {}).get(b, 0.0) for r in runs])
                    k = len(runs)
                    if k > 1:
                        s2 = float(ys.var(ddof=1))
                    else:
                        s2 = float(np.mean(rv)) * float(ys.mean()) ** 2 if rv else float(ys.mean()) ** 2
                    var += n * n * s2 / k * max(0.0, 1 - k / n)
                out.setdefault(fn, {})[b] = math.sqrt(var) / total if total > 0 else 0.0
        return out


def complete(bound: BoundLaunch) -> bool:
    """Whether the launch gives every argument of the kernel (a buffer with its fill, or a value)."""
    given = bound.launch.args
    return all(d.name in given for p in bound.kernel.params or () for d in p.names) and any(
        isinstance(v, Buffer) for v in given.values())


def _pick(box: Box, count: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """``count`` distinct CTAs of a box at random (all of it when it is no larger)."""
    (x0, x1), (y0, y1), (z0, _) = box
    nx, ny = x1 - x0 + 1, y1 - y0 + 1
    n = size(box)
    picked = rng.choice(n, count, replace=False) if n > count else np.arange(n)
    return [(x0 + int(i) % nx, y0 + int(i) // nx % ny, z0 + int(i) // (nx * ny)) for i in picked]


def allocate(strata: list[Box], total: int) -> list[tuple[Box, int]]:
    """How many CTAs of each class to sample: in proportion to its size, the largest first, at least one each
    while the total lasts."""
    order = sorted(strata, key=size, reverse=True)
    ctas = sum(size(b) for b in order)
    out = []
    left = total
    for box in order:
        if left <= 0:
            break
        k = min(size(box), left, max(1, round(total * size(box) / ctas)))
        out.append((box, k))
        left -= k
    return out


def emulated_sample(bound: BoundLaunch, strata: list[Box], deadline: float) -> DataSample:
    """Emulate a stratified sample of the launch's CTAs (module docstring) until ``deadline`` (CPU seconds of
    ``time.process_time``)."""
    out = DataSample()
    rng = np.random.default_rng(0)
    plan = [(box, _pick(box, k, rng)) for box, k in allocate(strata, STATIC_DATA_SAMPLE_CTAS)]
    budget = max(1, STATIC_DATA_SAMPLE_STEPS // max(1, sum(len(c) for _, c in plan)))

    def progress(_warp: int, _steps: int) -> None:
        if time.process_time() > deadline:
            raise StopEmulation("the time budget ran out")

    for box, ctas in plan:
        runs = []
        for cta in ctas:
            if time.process_time() > deadline:
                break
            try:
                run = emulate(bound.module, bound.kernel, bound.launch, max_steps=budget, ctas=[cta],
                              outputs=False, partial=True, time_slice=256, progress=progress)
            except EmulationError as exc:
                out.error = str(exc)
                return out
            out.steps += run.warp_instructions
            out.cut += run.stopped is not None
            runs.append(run.counts.counts)
        if runs:
            out.strata.append((size(box), runs))
    return out
