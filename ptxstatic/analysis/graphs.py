"""The few graph algorithms the per-function analyses need, on plain adjacency dicts.

Importing networkx costs about 0.1 s of CPU (it loads every algorithm and scans the installed packages for
backends), more than parsing and analysing a typical translation unit; the nvcc hook and ``check`` run
these analyses on every compile, so they use these instead. A graph is ``succ`` (node -> successors, in a
fixed order) and, where needed, ``pred``; the results are the same as networkx's functions of those names.
:class:`~ptxstatic.analysis.cfg.BlockGraph` still offers a networkx view (``.graph``) for other callers.
"""

from __future__ import annotations

import graphlib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)
Adjacency = Mapping[N, Sequence[N]]


def preorder(succ: Adjacency, start: N) -> list[N]:
    """Nodes reachable from ``start`` in depth-first preorder (``networkx.dfs_preorder_nodes``)."""
    seen = {start}
    out = [start]
    stack = [iter(succ.get(start, ()))]
    while stack:
        for v in stack[-1]:
            if v not in seen:
                seen.add(v)
                out.append(v)
                stack.append(iter(succ.get(v, ())))
                break
        else:
            stack.pop()
    return out


def postorder(succ: Adjacency, start: N) -> list[N]:
    """Nodes reachable from ``start`` in depth-first postorder (``networkx.dfs_postorder_nodes``)."""
    seen = {start}
    out: list[N] = []
    stack = [(start, iter(succ.get(start, ())))]
    while stack:
        node, children = stack[-1]
        for v in children:
            if v not in seen:
                seen.add(v)
                stack.append((v, iter(succ.get(v, ()))))
                break
        else:
            stack.pop()
            out.append(node)
    return out


def immediate_dominators(succ: Adjacency, pred: Adjacency, start: N) -> dict[N, N]:
    """Immediate dominator of every node reachable from ``start``, ``start`` mapping to itself (Cooper,
    Harvey and Kennedy's iterative algorithm, as networkx computes it)."""
    order = postorder(succ, start)
    number = {u: i for i, u in enumerate(order)}
    idom: dict[N, N] = {start: start}

    def intersect(u: N, v: N) -> N:
        while u != v:
            while number[u] < number[v]:
                u = idom[u]
            while number[u] > number[v]:
                v = idom[v]
        return u

    order.pop()
    order.reverse()
    changed = True
    while changed:
        changed = False
        for u in order:
            done = [v for v in pred.get(u, ()) if v in idom]
            new = done[0]
            for v in done[1:]:
                new = intersect(new, v)
            if idom.get(u) != new:
                idom[u] = new
                changed = True
    return idom


def tree_intervals(parent: Mapping[N, N], root: N) -> dict[N, tuple[int, int]]:
    """For a tree given as node -> parent (``root`` mapping to itself), each node's (preorder number, largest
    preorder number in its subtree): ``u`` is an ancestor of ``v`` (or ``v`` itself) exactly when ``v``'s
    number lies in ``u``'s interval, a constant-time test."""
    children: dict[N, list[N]] = {}
    for node, up in parent.items():
        if node != root:
            children.setdefault(up, []).append(node)
    out: dict[N, tuple[int, int]] = {}
    number = 0
    stack: list[tuple[N, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out[node] = (out[node][0], number - 1)
            continue
        out[node] = (number, number)
        number += 1
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children.get(node, ())))
    return out


def ancestors(pred: Adjacency, node: N) -> set[N]:
    """Nodes from which ``node`` can be reached, without ``node`` itself unless it is on a cycle."""
    out: set[N] = set()
    todo = list(pred.get(node, ()))
    while todo:
        u = todo.pop()
        if u not in out:
            out.add(u)
            todo.extend(pred.get(u, ()))
    return out


def is_acyclic(succ: Adjacency, nodes: Iterable[N]) -> bool:
    """Whether the graph restricted to ``nodes`` has no cycle."""
    keep = set(nodes)
    sorter = graphlib.TopologicalSorter({u: [v for v in succ.get(u, ()) if v in keep] for u in keep})
    try:
        sorter.prepare()
    except graphlib.CycleError:
        return False
    return True


def components_callees_first(succ: Adjacency, nodes: Iterable[N]) -> list[list[N]]:
    """Strongly connected components of the graph on ``nodes``, each after every component it reaches
    (Tarjan's algorithm, iterative)."""
    keep = list(nodes)
    inside = set(keep)
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    for root in keep:
        if root in index:
            continue
        work = [(root, iter([v for v in succ.get(root, ()) if v in inside]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for v in children:
                if v not in index:
                    index[v] = low[v] = len(index)
                    stack.append(v)
                    on_stack.add(v)
                    work.append((v, iter([w for w in succ.get(v, ()) if w in inside])))
                    break
                if v in on_stack:
                    low[node] = min(low[node], index[v])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    out.append(component)
    return out
