"""The instruction sequence one thread executes, from a kernel's block counts.

The walk follows a typical thread: from the entry, at each branch the successor reached by more threads
(edge flows come from the block counts by flow conservation), each loop repeated by its average trip
count per entry rounded half up (header entries / entries from outside the loop), device-function calls inlined with the
callee's own counts. The result comes in two forms:

* ``expanded``: the sequence with loops unrolled, cut at a length cap, as :class:`SeqItem` records whose
  dependency distances are measured along the executed order;
* ``compact``: run-length form, each loop body once with its repeat count (nested loops nest); the items
  of a loop body are those of its second iteration, so loop-carried dependencies show.

Block counts are plain mappings (function -> block id -> executions summed over threads), as in
``BlockCounts.counts``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.sequence import SeqItem, instruction_sequence
from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import SEQUENCE_CALL_DEPTH, SEQUENCE_CAP
from ptxstatic.ptx.ast import Instruction, Module, Sym

Compact = list[tuple["SeqItem | Compact", int]]


@dataclass
class Repeat:
    """A loop body walked once, to be repeated ``times`` times."""

    body: list[Node]
    times: int


Node = Instruction | Repeat


@dataclass
class ExecutedSequence:
    expanded: list[SeqItem]  # at most the cap
    compact: Compact
    length: int  # instructions in the full expanded sequence
    truncated: bool = False
    tree: list[Node] = field(default_factory=list, repr=False)


# ------------------------------------------------------------------------------------------ edge flows


def edge_flows(cfg: BlockGraph, counts: Mapping[int, float]) -> dict[tuple[int, int], float]:
    """Executions of every edge, from block counts: an edge is a block's only way out or its successor's only
    way in; other edges follow from flow conservation, and what remains splits by successor counts."""
    nodes, succ, pred = [b.id for b in cfg.blocks], cfg.succ, cfg.pred
    flow: dict[tuple[int, int], float] = {}
    c = {b: float(counts.get(b, 0.0)) for b in nodes}
    for u in nodes:
        if len(succ[u]) == 1 and u not in cfg.exits:
            flow[(u, succ[u][0])] = c[u]
    for v in nodes:
        if len(pred[v]) == 1 and v != cfg.entry:
            flow.setdefault((pred[v][0], v), c[v])
    changed = True
    while changed:
        changed = False
        for u in nodes:
            for edges, total in (([(u, s) for s in succ[u]], c[u] if u not in cfg.exits else None),
                                 ([(p, u) for p in pred[u]], c[u] if u != cfg.entry else None)):
                unknown = [e for e in edges if e not in flow]
                if total is not None and len(unknown) == 1:
                    flow[unknown[0]] = max(0.0, total - sum(flow[e] for e in edges if e in flow))
                    changed = True
    for u in nodes:
        unknown = [(u, s) for s in succ[u] if (u, s) not in flow]
        if unknown:
            left = max(0.0, c[u] - sum(flow.get((u, s), 0.0) for s in succ[u]))
            weights = [c[v] for _, v in unknown]
            total = sum(weights)
            for e, w in zip(unknown, weights, strict=True):
                flow[e] = left * (w / total if total else 1 / len(unknown))
    return flow


# ---------------------------------------------------------------------------------------------- walk


class _Walker:
    def __init__(self, module: Module, counts: Mapping[str, Mapping[int, float]]) -> None:
        self.module = module
        self.counts = counts
        self.stack: list[str] = []
        self.defined = {f.name for f in module.functions if f.body is not None}

    def function(self, name: str) -> list[Node]:
        fn = self.module.function(name)
        cfg = build_cfg(fn)
        counts = self.counts.get(name, {})
        if not cfg.blocks or not counts.get(cfg.entry):
            return []
        self.stack.append(name)
        try:
            return self._region(cfg, counts, edge_flows(cfg, counts), cfg.entry, None)
        finally:
            self.stack.pop()

    def _region(self, cfg: BlockGraph, counts: Mapping[int, float], flow: dict, start: int, loop) -> list[Node]:
        """One pass over a region (the function, or one iteration of ``loop``) from ``start``."""
        loops = {lp.header: lp for lp in cfg.loops}
        body = loop.body if loop is not None else None
        out: list[Node] = []
        seen: set[int] = set()
        b: int | None = start
        while b is not None and b not in seen:
            seen.add(b)
            inner = loops.get(b)
            if inner is not None and inner is not loop:
                entries = sum(flow.get((p, b), 0.0) for p in cfg.pred[b] if p not in inner.body)
                times = max(1, math.floor(counts.get(b, 0.0) / entries + 0.5)) if entries else 1
                out.append(Repeat(self._region(cfg, counts, flow, b, inner), times))
                exits = [(flow.get(e, 0.0), -e[1], e[1]) for e in inner.exits]
                b = max(exits)[2] if exits and max(exits)[0] > 0 else None
                if b is not None and body is not None and b not in body:
                    break
                continue
            out += self._block(cfg, b)
            options = [(flow.get((b, s), 0.0), -s, s) for s in cfg.succ[b]
                       if (body is None or s in body) and s != (loop.header if loop is not None else None)]
            options = [o for o in options if o[0] > 0]
            b = max(options)[2] if options else None
        return out

    def _block(self, cfg: BlockGraph, b: int) -> list[Node]:
        out: list[Node] = []
        for ins in cfg.blocks[b].instructions:
            out.append(ins)
            if ins.opcode.startswith("call") and len(self.stack) < SEQUENCE_CALL_DEPTH:
                callee = next((o.name for o in ins.operands if isinstance(o, Sym)), None)
                if callee and callee not in self.stack and callee in self.counts and callee in self.defined:
                    out += self.function(callee)
        return out


# ---------------------------------------------------------------------------------------- flattening


def _length(nodes: list[Node]) -> int:
    return sum(n.times * _length(n.body) if isinstance(n, Repeat) else 1 for n in nodes)


def _expand(nodes: list[Node], out: list[Instruction], cap: int) -> bool:
    """Append the fully expanded sequence to ``out``; False once the cap is reached."""
    for n in nodes:
        if len(out) >= cap:
            return False
        if isinstance(n, Repeat):
            for _ in range(n.times):
                if not _expand(n.body, out, cap):
                    return False
        else:
            out.append(n)
    return len(out) <= cap


def _skeleton(nodes: list[Node], out: list[Instruction]) -> list:
    """Expand each loop at most twice; the returned shape records where each node landed in ``out``."""
    shape: list = []
    for n in nodes:
        if isinstance(n, Repeat):
            copies = [_skeleton(n.body, out) for _ in range(min(n.times, 2))]
            shape.append((copies[-1], n.times))
        else:
            shape.append(len(out))
            out.append(n)
    return shape


def _compact(shape: list, items: list[SeqItem]) -> Compact:
    return [(_compact(s[0], items), s[1]) if isinstance(s, tuple) else (items[s], 1) for s in shape]


def executed_sequence(module: Module, function: str, counts: Mapping[str, Mapping[int, float]],
                      cap: int = SEQUENCE_CAP) -> ExecutedSequence:
    """The executed sequence of ``function`` (a kernel, usually) for the given block counts."""
    try:
        module.function(function)
    except KeyError:
        raise PtxstaticError(f"{module.filename}: no function named {function!r}") from None
    tree = _Walker(module, counts).function(function)
    flat: list[Instruction] = []
    complete = _expand(tree, flat, cap)
    skeleton: list[Instruction] = []
    shape = _skeleton(tree, skeleton)
    return ExecutedSequence(instruction_sequence(flat[:cap]), _compact(shape, instruction_sequence(skeleton)),
                            _length(tree), not complete, tree)
