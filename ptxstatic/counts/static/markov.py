"""The fallback when interpretation is out of budget: expected block visits of a Markov chain on the CFG.

Every conditional branch goes as it went in a measured run where there is one (``FunctionPlan.shares``), else
either way with probability 1/2, except a loop exit, taken with probability ``1/DATA_LOOP_TRIPS``. The expected
visits are propagated in time and memory linear in the blocks (per loop level), as Wu and Larus do: loops
innermost first, each loop's body in topological order from its header at frequency 1, which gives the chance
of coming back to the header and so the header's visits per entry, 1 / (1 - that chance); then the function
from its entry. A function whose graph is irreducible is solved by iterating ``f = e + P^T f`` over its edges
instead. Calls add each call site's frequency to the callee's entry. Every count from here is an estimate.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.counts.static.interp import DATA_LOOP_TRIPS, FunctionPlan, Interpreter
from ptxstatic.limits import STATIC_CALL_DEPTH

MAX_CYCLE = 1 - 1e-6  #: largest chance of coming back to a loop's header (a loop with no way out runs 10**6 times)
SWEEPS = 10_000  #: sweeps of the iteration for an irreducible graph


def _edges(plan: FunctionPlan) -> dict[int, list[tuple[int, float]]]:
    """Each block's successors with the chance of going there."""
    n = len(plan.cfg.blocks)
    out: dict[int, list[tuple[int, float]]] = {}
    for b, term in enumerate(plan.terminators):
        succ = [t for t in term.targets if t is not None and t < n]
        if term.kind == "ret" and not term.guard:
            out[b] = []
            continue
        if b in plan.shares:
            out[b] = [(t, w) for t, w in zip(term.outcomes(), plan.shares[b], strict=True) if t is not None and t < n]
            continue
        if term.kind in ("fall", "jump") or len(succ) <= 1:
            share = [1.0 if term.kind != "ret" else 0.5] * len(succ)
        elif term.kind == "cond" and b in plan.innermost_loop:
            loop = plan.innermost_loop[b]
            outside = [s not in loop for s in succ]
            if outside[0] != outside[1]:
                share = [1 / DATA_LOOP_TRIPS if o else 1 - 1 / DATA_LOOP_TRIPS for o in outside]
            else:
                share = [0.5, 0.5]
        else:
            share = [1 / len(succ)] * len(succ)
        out[b] = list(zip(succ, share, strict=True))
    return out


def block_frequencies(plan: FunctionPlan) -> np.ndarray:
    """Expected entries of each block per entry into the function."""
    cfg = plan.cfg
    n = len(cfg.blocks)
    if n == 0:
        return np.zeros(0)
    edges = _edges(plan)
    if cfg.irreducible:
        return _iterate(plan, edges)
    into: dict[int, list[tuple[int, float]]] = {}
    back = set(cfg.back_edges)
    for u, outs in edges.items():
        for v, p in outs:
            if (u, v) not in back:
                into.setdefault(v, []).append((u, p))
    rank = plan.rank
    cycle: dict[int, float] = {}

    def propagate(head: int, blocks: set[int] | frozenset[int]) -> dict[int, float]:
        freq = {head: 1.0}
        for b in sorted(blocks, key=lambda x: rank.get(x, len(rank) + x)):
            if b == head:
                continue
            f = sum(freq.get(u, 0.0) * p for u, p in into.get(b, ()))
            freq[b] = f / (1 - cycle[b]) if b in cycle else f
        return freq

    for loop in sorted(cfg.loops, key=lambda lp: len(lp.body)):
        freq = propagate(loop.header, loop.body)
        back_chance = sum(freq.get(u, 0.0) * p for u, _ in loop.back_edges for v, p in edges[u] if v == loop.header)
        cycle[loop.header] = min(back_chance, MAX_CYCLE)
    freq = propagate(cfg.entry, cfg.reachable)
    out = np.zeros(n)
    for b, f in freq.items():
        out[b] = f
    if cfg.entry in cycle:
        out[cfg.entry] = 1 / (1 - cycle[cfg.entry])
    return out


def _iterate(plan: FunctionPlan, edges: dict[int, list[tuple[int, float]]]) -> np.ndarray:
    """``f = e + P^T f`` by sweeps over the edges (an irreducible graph), to convergence or SWEEPS sweeps."""
    n = len(plan.cfg.blocks)
    src = np.array([u for u, outs in edges.items() for _ in outs], dtype=np.int64)
    dst = np.array([v for outs in edges.values() for v, _ in outs], dtype=np.int64)
    p = np.array([w for outs in edges.values() for _, w in outs])
    e = np.zeros(n)
    e[plan.cfg.entry] = 1.0
    f = e.copy()
    for _ in range(SWEEPS):
        new = e + np.bincount(dst, weights=p * f[src], minlength=n)
        if np.allclose(new, f, rtol=1e-9, atol=1e-12):
            return new
        f = new
    return f


def frequency_estimate(interp: Interpreter, kernel: str, threads: float, reason: str) -> None:
    """Add to ``interp.counts`` of ``kernel`` and the functions it calls the block frequencies of ``threads``
    threads; every block reached is flagged with ``reason``."""
    stack = [(kernel, float(threads), 0)]
    frequencies: dict[str, np.ndarray] = {}
    while stack:
        name, entries, depth = stack.pop()
        plan = interp.plan(name)
        if name not in frequencies:
            frequencies[name] = block_frequencies(plan)
        freq = frequencies[name] * entries
        for b, f in enumerate(freq):
            if f > 0:
                interp.add(name, b, float(f))
                interp.estimated(name, b, reason)
                interp.prior.add((name, b))
        if depth >= STATIC_CALL_DEPTH:
            continue
        for b, sites in plan.calls.items():
            for op in sites:
                if op.callee and freq[b] > 0:
                    try:
                        interp.module.function(op.callee)
                    except KeyError:
                        continue
                    stack.append((op.callee, float(freq[b]), depth + 1))
