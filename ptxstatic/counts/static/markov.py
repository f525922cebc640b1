"""The fallback when interpretation is out of budget: expected block visits of a Markov chain on the CFG.

Every conditional branch goes as it went in a measured run where there is one (``FunctionPlan.shares``), else
either way with probability 1/2, except a loop exit, taken with probability ``1/DATA_LOOP_TRIPS``; the
expected visit counts solve ``(I - P^T) f = e_entry``. Calls add each call site's frequency to the callee's
entry. Every count from here is an estimate.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.counts.static.interp import DATA_LOOP_TRIPS, CallSite, FunctionPlan, Interpreter
from ptxstatic.limits import STATIC_CALL_DEPTH


def _transitions(plan: FunctionPlan) -> np.ndarray:
    n = len(plan.cfg.blocks)
    p = np.zeros((n, n))
    for b, term in enumerate(plan.terminators):
        succ = [t for t in term.targets if t is not None and t < n]
        if term.kind == "ret" and not term.guard:
            continue
        if b in plan.shares:
            for t, w in zip(term.outcomes(), plan.shares[b], strict=True):
                if t is not None and t < n:
                    p[b, t] += w
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
        for s, w in zip(succ, share, strict=True):
            p[b, s] += w
    return p


def block_frequencies(plan: FunctionPlan) -> np.ndarray:
    """Expected entries of each block per entry into the function."""
    n = len(plan.cfg.blocks)
    if n == 0:
        return np.zeros(0)
    e = np.zeros(n)
    e[plan.cfg.entry] = 1.0
    a = np.eye(n) - _transitions(plan).T
    try:
        return np.linalg.solve(a, e)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(a, e, rcond=None)[0]


def frequency_estimate(interp: Interpreter, kernel: str, threads: float, reason: str) -> None:
    """Add to ``interp.counts`` of ``kernel`` and the functions it calls the block frequencies of ``threads``
    threads; every block reached is flagged with ``reason``."""
    stack = [(kernel, float(threads), 0)]
    while stack:
        name, entries, depth = stack.pop()
        plan = interp.plan(name)
        freq = block_frequencies(plan) * entries
        counts = interp.counts[name]
        for b, f in enumerate(freq):
            counts[b] = counts.get(b, 0.0) + max(0.0, float(f))
            if f > 0:
                interp.estimated(name, b, reason)
                interp.prior.add((name, b))
        if depth >= STATIC_CALL_DEPTH:
            continue
        for b, ops in enumerate(plan.ops):
            for op in ops:
                if isinstance(op, CallSite) and op.callee and freq[b] > 0:
                    try:
                        interp.module.function(op.callee)
                    except KeyError:
                        continue
                    stack.append((op.callee, float(freq[b]), depth + 1))
