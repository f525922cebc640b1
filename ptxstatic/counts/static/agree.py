"""Whether the corner CTAs of a class of CTAs take the same path (see :mod:`ptxstatic.counts.static.ctas`).

The corner CTAs are interpreted together; every row carries a key, ``corner * CORNER + thread`` (the
thread's index within its CTA). A *watched* comparison (a ``setp`` whose operands depend on the CTA index)
must give the same sign of ``a - b`` for one thread in every corner; otherwise :class:`Divergent` is raised,
with ``a - b`` at each corner for one disagreeing thread, and the class is split. Comparisons on data are not
watched: their outcome is split by weight alike for every CTA.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.counts.static.values import Operands, Rows, Step

CORNER = 1 << 20  #: key stride between corners (more than the threads of a CTA)


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


def watched(step: Step, operands: Operands) -> Step:
    """``step`` preceded by the corner check of its comparison (only where rows carry keys)."""

    def run(g: Rows) -> None:
        if g.key is not None:
            ab = operands(g)
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
