"""Whether the corner CTAs of a class of CTAs take the same path (see :mod:`ptxstatic.counts.static.ctas`).

The corner CTAs of a box of CTAs are interpreted together with its *probes* (the CTAs next to its first
corner along each axis the box spans); every row carries a key, ``point * CORNER + thread`` (the thread's
index within its CTA). At a *watched* instruction (a ``setp`` whose operands depend on the CTA index, or a
widening conversion or wide multiply of such a value), every CTA-dependent operand must be linear over the
box in the arithmetic the GPU does: its value at the first corner plus, per axis, its step to the probe times
the distance must give its value at every corner exactly (in integers, not modulo the type's width). That
line lies within the type's range at the corners, hence everywhere in the box (the range is an interval),
so the value does not wrap around between them. A ``setp`` must also give the same sign of ``a - b`` for one
thread at every point. Otherwise :class:`Divergent` is raised, with, for one offending thread, ``a - b`` (or
the line's distance past the type's range) at each point, and the box is cut where that changes sign.
Comparisons on data are not watched: their outcome is split by weight alike for every CTA.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.counts.static.values import Operands, Rows, Step
from ptxstatic.ptx.dtypes import int_range
from ptxstatic.ptx.isa import bit_width

CORNER = 1 << 20  #: key stride between corners (more than the threads of a CTA)


class Corners:
    """The CTAs interpreted together for a box: their coordinates (point 0 is the box's first corner) and,
    per axis the box spans, the point that is its probe (the first corner's neighbour along it)."""

    def __init__(self) -> None:
        self.points: np.ndarray | None = None
        self.probes: dict[int, int] = {}

    def set(self, points: list[tuple[int, int, int]] | None) -> None:
        self.points = None if points is None else np.array(points, dtype=np.int64)
        self.probes = {}
        if points:
            index = {tuple(p): i for i, p in enumerate(points)}
            for axis in range(3):
                step = list(points[0])
                step[axis] += 1
                if tuple(step) in index:
                    self.probes[axis] = index[tuple(step)]


class Divergent(Exception):
    """Corner CTAs of a class disagree on a comparison that depends on the CTA index."""

    def __init__(self, differences: dict[int, float]) -> None:
        super().__init__("corner CTAs disagree")
        self.differences = differences  # corner -> a - b for one disagreeing thread


def disagreeing(key: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """Rows whose thread (``key % CORNER``) has another row with a different ``sign``."""
    thread = key % CORNER
    size = int(thread.max()) + 1
    lo = np.full(size, 2, dtype=np.int8)
    hi = np.full(size, -2, dtype=np.int8)
    np.minimum.at(lo, thread, sign)
    np.maximum.at(hi, thread, sign)
    return np.flatnonzero(lo[thread] != hi[thread])


def _wrapped(key: np.ndarray, value: np.ndarray, t: str, corners: Corners) -> dict[int, float] | None:
    """For one thread whose ``value`` (of type ``t``) is not the line its first corner and probes give at
    every point: that line's distance past the type's range at each point; None when every thread's is."""
    points = corners.points
    assert points is not None
    thread, point = key % CORNER, key // CORNER
    table = np.full((len(points), int(thread.max()) + 1), np.nan)
    table[point, thread] = value.astype(np.float64)
    line = table[0].copy()
    for axis, probe in corners.probes.items():
        line = line + (table[probe] - table[0]) * (points[:, axis:axis + 1] - points[0, axis])
    if len(corners.probes) < sum(int(points[:, a].max() > points[0, a]) for a in range(3)):
        return {}  # a box without its probes proves nothing: cut it in halves
    line = line if line.ndim == 2 else np.broadcast_to(line, table.shape)
    off = np.abs(line - table) >= 2.0 ** (bit_width(t) - 1)  # the difference is a multiple of 2**width
    bad = np.flatnonzero(np.any(off & ~np.isnan(table), axis=0))
    if not len(bad):
        return None
    lo, hi = int_range(t)
    column = line[:, bad[0]]
    edge = hi + 0.5 if np.nanmax(column) > hi else lo - 0.5
    return {i: float(column[i] - edge) for i in range(len(points)) if not np.isnan(column[i])}


def watched(step: Step, operands: Operands, corners: Corners, types: tuple[str, ...], compare: bool) -> Step:
    """``step`` preceded by the checks of its CTA-dependent operands (of ``types``) across the points of a box
    (only where rows carry keys); with ``compare`` (a comparison), the sign of ``a - b`` too."""

    def run(g: Rows) -> None:
        if g.key is not None and corners.points is not None:
            values = operands(g)
            for v, t in zip(values or (), types, strict=False):
                if np.ndim(v):
                    found = _wrapped(g.key, np.broadcast_to(v, (g.n,)), t, corners)
                    if found is not None:
                        raise Divergent(found)
            ab = values if compare else None
            if ab is not None and (np.ndim(ab[0]) or np.ndim(ab[1])):
                a, b = (np.broadcast_to(v, (g.n,)) for v in ab)
                sign = (a > b).astype(np.int8) - (a < b).astype(np.int8)
                bad = disagreeing(g.key, sign)
                if len(bad):
                    rows = np.flatnonzero(g.key % CORNER == g.key[bad[0]] % CORNER)
                    diff = a[rows].astype(np.float64) - b[rows].astype(np.float64)
                    raise Divergent(dict(zip((g.key[rows] // CORNER).tolist(), diff.tolist(), strict=True)))
        step(g)

    return run
