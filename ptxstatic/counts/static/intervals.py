"""The interval that holds each block count of a static estimate, and the standard error of sampled ones.

An exact count is its own interval. A count that rests on a prior (a branch on data split 1/2, a loop on data
left with chance 1/8 per test, a fallback, a class of CTAs counted without proof) is held only by what the
code implies: at least 0, and at most as often as the block's immediate dominator runs (a block is entered
at most once per entry of its dominator, unless it heads a loop the dominator is outside of: then that many
times the loop's most iterations per run, which a loop exit comparing an induction variable with a bound
gives, and which is infinite for a loop on data that nothing else bounds); a function's entry at most as
often as its call sites run. A count that was sampled (iterations of a loop, CTAs of a launch, branches
split as in an emulated sample) lies within the sample's spread (``Spread``: the range between its lightest
and heaviest part, at least three standard errors either side), and within those bounds too.
"""

from __future__ import annotations

import math
from collections import deque

from ptxstatic.counts.static.interp import Interpreter

INF = math.inf


def _order(interp: Interpreter, kernel: str) -> list[str] | None:
    """The kernel and the functions counted, callers before callees; None when calls are recursive."""
    callees: dict[str, set[str]] = {}
    for fn in interp.counts:
        plan = interp.plan(fn)
        callees[fn] = set()
        for sites in plan.calls.values():
            for op in sites:
                callees[fn] |= {op.callee} if op.callee else set(interp.counts) - {kernel}
    callees = {f: {c for c in cs if c in interp.counts} for f, cs in callees.items()}
    indegree = {f: 0 for f in callees}
    for cs in callees.values():
        for c in cs:
            indegree[c] += 1
    ready = deque(f for f, d in indegree.items() if d == 0)
    out = []
    while ready:
        f = ready.popleft()
        out.append(f)
        for c in callees[f]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return out if len(out) == len(callees) else None


def upper_bounds(interp: Interpreter, kernel: str, threads: int, exact: dict[str, dict[int, bool]]
                 ) -> dict[str, dict[int, float]]:
    """The most each block may run by the code's structure (module docstring), from the exact counts."""
    order = _order(interp, kernel)
    entries: dict[str, float] = {kernel: float(threads)}
    out: dict[str, dict[int, float]] = {}
    for fn in order or interp.counts:
        plan = interp.plan(fn)
        cfg, counts = plan.cfg, interp.counts[fn]
        high: dict[int, float] = {}
        if order is None or cfg.irreducible or not cfg.blocks:
            out[fn] = {b: float(c) if exact[fn][b] else INF for b, c in counts.items()}
            continue
        children: dict[int, list[int]] = {}
        for b, d in cfg.idom.items():
            if b != d:
                children.setdefault(d, []).append(b)
        work = [cfg.entry]
        while work:
            b = work.pop()
            if exact[fn].get(b, True):
                high[b] = float(counts.get(b, 0))
            elif b == cfg.entry:
                high[b] = entries.get(fn, INF)
            else:
                d = cfg.idom[b]
                h = high[d]
                loop = plan.headers.get(b)
                if loop is not None and d not in loop.body and h > 0:
                    h *= interp.loop_trips.get((fn, b), INF)
                high[b] = h
            work += children.get(b, [])
        for b, c in counts.items():
            high.setdefault(b, float(c))
        out[fn] = high
        for b, sites in plan.calls.items():
            for op in sites:
                for callee in ({op.callee} if op.callee else set(interp.counts) - {kernel}) & set(interp.counts):
                    entries[callee] = entries.get(callee, 0.0) + high.get(b, INF)
    return out


def intervals(interp: Interpreter, kernel: str, threads: int, exact: dict[str, dict[int, bool]]
              ) -> tuple[dict[str, dict[int, float]], dict[str, dict[int, float]], dict[str, dict[int, float]]]:
    """Low and high end of each block count's interval, and the standard error of its sampled part (0 where
    nothing was sampled)."""
    upper = upper_bounds(interp, kernel, threads, exact)
    low: dict[str, dict[int, float]] = {}
    high: dict[str, dict[int, float]] = {}
    stderr: dict[str, dict[int, float]] = {}
    for fn, counts in interp.counts.items():
        low[fn], high[fn], stderr[fn] = {}, {}, {}
        for b, c in counts.items():
            c = float(c)
            spread = interp.spreads.get((fn, b))
            stderr[fn][b] = math.sqrt(spread.variance) if spread is not None else 0.0
            if exact[fn][b]:
                low[fn][b] = high[fn][b] = c
            elif (fn, b) in interp.prior or spread is None:
                low[fn][b], high[fn][b] = 0.0, max(c, upper[fn].get(b, INF))
            else:
                low[fn][b] = max(0.0, c - spread.below)
                high[fn][b] = max(c, min(c + spread.above, upper[fn].get(b, INF)))
    return low, high, stderr
