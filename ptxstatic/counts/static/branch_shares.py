"""How each two-way branch of a function went in a measured run, recovered from its block counts.

Block counts (thread entries per block, from ``ptxstatic profile`` on a GPU or from the emulator) determine
the flow along most edges of the control-flow graph: what a block sends to its successors adds up to its
entries, and what a block other than the entry receives adds up to its entries. An edge is solved when one
of these equations has it as its only unknown, and the solved edge is taken out of its other equation, until
no equation is left with one unknown (a linear pass). A branch gets its shares only where that determines it;
the static estimator then splits a data-dependent branch as it went in the run instead of by its heuristic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping

from ptxstatic.counts.static.interp import FunctionPlan

Edge = tuple[int, int | None]  # (block, successor or None: the function returns)


def branch_shares(plan: FunctionPlan, counts: Mapping[int, float]) -> dict[int, tuple[float, ...]]:
    """Block -> the share of its entries that went each way (in the order of ``Terminator.outcomes``), for
    every two-way branch that the counts determine and that ran at least once."""
    n = len(plan.cfg.blocks)
    count = [max(0.0, float(counts.get(b, 0.0))) for b in range(n)]

    def succ(t: int | None) -> int | None:
        return t if t is not None and 0 <= t < n else None

    unknown: dict[int, tuple[int | None, ...]] = {}  # two-way branch -> its distinct successors
    rhs: dict[tuple[str, int], float] = {}  # ("out", b) / ("in", v) -> what its unknown edges carry
    members: dict[tuple[str, int], set[Edge]] = defaultdict(set)
    for v in range(n):
        if v != plan.cfg.entry:
            rhs[("in", v)] = count[v]
    for b, term in enumerate(plan.terminators):
        ways = tuple(dict.fromkeys(succ(t) for t in term.outcomes()))
        if len(ways) == 1:  # every entry leaves one way: a known flow
            if ways[0] is not None and ways[0] != plan.cfg.entry:
                rhs[("in", ways[0])] -= count[b]
            continue
        if ways:
            unknown[b] = ways
            rhs[("out", b)] = count[b]
            for t in ways:
                members[("out", b)].add((b, t))
                if t is not None and t != plan.cfg.entry:
                    members[("in", t)].add((b, t))
    flow = _peel(rhs, members)
    shares: dict[int, tuple[float, ...]] = {}
    for b, ways in unknown.items():
        term = plan.terminators[b]
        if term.kind == "brx" or count[b] <= 0 or any((b, t) not in flow for t in ways):
            continue
        sent = [min(max(flow[(b, t)], 0.0), count[b]) for t in ways]
        total = sum(sent) or 1.0
        by_way = {t: s / total for t, s in zip(ways, sent, strict=True)}
        shares[b] = tuple(by_way[succ(t)] for t in term.outcomes())
    return shares


def measured_shares(measured: Mapping[str, Mapping[int, float]]
                    ) -> Callable[[FunctionPlan], dict[int, tuple[float, ...]]]:
    """The interpreter's ``shares_of``: :func:`branch_shares` of a plan from the counts ``measured`` of its
    function (function -> block -> count), none for a function without counts."""
    return lambda plan: branch_shares(plan, measured[plan.function.name]) if plan.function.name in measured else {}


def _peel(rhs: dict[tuple[str, int], float], members: dict[tuple[str, int], set[Edge]]) -> dict[Edge, float]:
    """Solve every edge that an equation with a single unknown determines, repeatedly."""
    where: dict[Edge, list[tuple[str, int]]] = defaultdict(list)
    for eq, edges in members.items():
        for e in edges:
            where[e].append(eq)
    flow: dict[Edge, float] = {}
    ready = [eq for eq, edges in members.items() if len(edges) == 1]
    while ready:
        eq = ready.pop()
        if len(members[eq]) != 1:
            continue
        (edge,) = members[eq]
        flow[edge] = rhs[eq]
        for other in where[edge]:
            members[other].discard(edge)
            if other != eq:
                rhs[other] -= flow[edge]
                if len(members[other]) == 1:
                    ready.append(other)
    return flow
