"""Post-dominators and control dependence on the basic-block graph.

Block ``b`` is control dependent on block ``x`` when ``x`` ends in a branch with one successor from which
every path to the function's end passes through ``b`` and another from which some path avoids it
(Ferrante, Ottenstein and Warren 1987; computed here from the post-dominator tree as in Cytron et al.).
Blocks that cannot reach an exit (an endless loop) are joined to the virtual exit so that every block has a
post-dominator.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BlockGraph

EXIT = -1  # the virtual exit node of the reversed graph


@dataclass
class ControlDependence:
    """Post-dominators and control dependences of the reachable blocks of one function."""

    cfg: BlockGraph

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominator of every reachable block (:data:`EXIT` for the blocks that end it)."""
        reachable = self.cfg.reachable
        succ: dict[int, list[int]] = {EXIT: []}  # the reversed graph, from the virtual exit
        pred: dict[int, list[int]] = {EXIT: []}

        def edge(u: int, v: int) -> None:
            if v not in succ.setdefault(u, []):
                succ[u].append(v)
                pred.setdefault(v, []).append(u)

        for u, v in self.cfg.edges:
            if u in reachable:
                edge(v, u)
        for b in self.cfg.exits:
            if b in reachable:
                edge(EXIT, b)
        stuck = sorted(reachable - set(graphs.preorder(succ, EXIT)))
        for b in stuck:
            edge(EXIT, b)
        idom = graphs.immediate_dominators(succ, pred, EXIT)
        return {b: d for b, d in idom.items() if b != EXIT}

    @cached_property
    def controllers(self) -> dict[int, frozenset[int]]:
        """Block -> the blocks whose branch it is directly control dependent on."""
        out: dict[int, set[int]] = {b: set() for b in self.cfg.reachable}
        ipdom = self.ipdom
        ends = set(self.cfg.exits)
        for x in self.cfg.reachable:
            succs = list(self.cfg.succ[x])
            if x in ends and succs:  # a guarded ret/exit: leaving the function is the other way out
                succs.append(EXIT)
            if len(succs) < 2:
                continue
            stop = ipdom[x]
            for s in succs:
                runner = s
                while runner != stop and runner != EXIT:
                    out[runner].add(x)
                    runner = ipdom[runner]
        return {b: frozenset(xs) for b, xs in out.items()}

    def all_controllers(self, block: int) -> list[int]:
        """Every branch block that ``block`` is transitively control dependent on, nearest first."""
        seen: list[int] = []
        todo = sorted(self.controllers.get(block, ()), reverse=True)
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.append(x)
            todo.extend(sorted(self.controllers.get(x, ()) - set(seen), reverse=True))
        return seen

    @cached_property
    def regions(self) -> dict[int, frozenset[int]]:
        """Branch block -> the blocks transitively control dependent on it (what runs only on some paths)."""
        out: dict[int, set[int]] = {}
        for b in self.cfg.reachable:
            for x in self.all_controllers(b):
                out.setdefault(x, set()).add(b)
        return {x: frozenset(bs) for x, bs in out.items()}
