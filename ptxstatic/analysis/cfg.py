"""Basic-block graphs: leaders, edges, dominators, natural loops and unreachable blocks.

A block starts at the first instruction, at every label that a branch or ``.branchtargets`` names, and
after every branch, ``ret``, ``exit`` and ``trap``. Labels that nothing branches to (debug labels such as
``$L__tmp3``) do not split blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ptxstatic.analysis import graphs
from ptxstatic.ptx.ast import BranchTargets, Function, Instruction, Label, Sym

if TYPE_CHECKING:  # networkx is imported when a caller first asks for a networkx graph (it is slow to import)
    import networkx as nx

FALLTHROUGH, TAKEN, INDIRECT = "fallthrough", "taken", "indirect"
_BRANCHES = ("bra", "brx")
_ENDS = ("ret", "exit", "trap")


@dataclass
class BasicBlock:
    id: int
    labels: tuple[str, ...]
    instructions: list[Instruction]
    start: int  # index of the first instruction in Function.instructions

    @property
    def name(self) -> str:
        return self.labels[0] if self.labels else f"bb{self.id}"

    @property
    def lines(self) -> tuple[int, int]:
        """First and last PTX line of the block's instructions (0, 0 when empty)."""
        if not self.instructions:
            return 0, 0
        return self.instructions[0].line, self.instructions[-1].line

    def __len__(self) -> int:
        return len(self.instructions)


@dataclass
class Loop:
    header: int
    body: frozenset[int]
    back_edges: tuple[tuple[int, int], ...]
    depth: int = 1  # 1 for an outermost loop
    parent: int | None = None  # header of the enclosing loop
    exits: list[tuple[int, int]] = field(default_factory=list)  # edges leaving the loop


@dataclass
class BlockGraph:
    """The basic-block graph of one function: ``succ`` and ``pred`` over block ids (in the order the edges
    were made), each edge's kind in ``kinds``; ``graph`` is the same as a networkx DiGraph."""

    function: Function
    blocks: list[BasicBlock]
    succ: dict[int, list[int]]
    pred: dict[int, list[int]]
    kinds: dict[tuple[int, int], str]  # (from, to) -> FALLTHROUGH, TAKEN or INDIRECT
    entry: int
    exits: list[int]  # blocks that end the function (ret, exit, trap, or falling off its end)

    @property
    def edges(self) -> list[tuple[int, int]]:
        return list(self.kinds)

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The graph as a networkx DiGraph (nodes carry ``block``, edges ``kind``)."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from((b.id, {"block": b}) for b in self.blocks)
        g.add_edges_from((u, v, {"kind": kind}) for (u, v), kind in self.kinds.items())
        return g

    @cached_property
    def reachable(self) -> set[int]:
        return set(graphs.preorder(self.succ, self.entry)) if self.blocks else set()

    @property
    def unreachable(self) -> list[int]:
        return [b.id for b in self.blocks if b.id not in self.reachable]

    @cached_property
    def idom(self) -> dict[int, int]:
        """Immediate dominator of every reachable block (the entry maps to itself)."""
        if not self.blocks:
            return {}
        return graphs.immediate_dominators(self.succ, self.pred, self.entry)

    def dominators(self, block: int) -> list[int]:
        """All blocks dominating ``block``, from the block itself up to the entry."""
        out = [block]
        idom = self.idom
        while out[-1] != self.entry:
            out.append(idom[out[-1]])
        return out

    @cached_property
    def _dominator_spans(self) -> dict[int, tuple[int, int]]:
        """Each reachable block's first and last position in a depth-first walk of the dominator tree: a block
        dominates another when its span holds the other's (a dominance test in constant time)."""
        children: dict[int, list[int]] = {}
        for b, d in self.idom.items():
            if b != d:
                children.setdefault(d, []).append(b)
        spans: dict[int, tuple[int, int]] = {}
        clock = 0
        stack: list[tuple[int, bool]] = [(self.entry, False)] if self.idom else []
        first: dict[int, int] = {}
        while stack:
            b, done = stack.pop()
            if done:
                spans[b] = (first[b], clock)
                continue
            first[b] = clock
            clock += 1
            stack.append((b, True))
            stack += [(c, False) for c in children.get(b, ())]
        return spans

    def dominates(self, a: int, b: int) -> bool:
        spans = self._dominator_spans
        if a not in spans or b not in spans:
            return False
        (a0, a1), (b0, b1) = spans[a], spans[b]
        return a0 <= b0 and b1 <= a1

    @cached_property
    def back_edges(self) -> list[tuple[int, int]]:
        return [(u, v) for u, v in self.kinds if u in self.idom and self.dominates(v, u)]

    @cached_property
    def loops(self) -> list[Loop]:
        """Natural loops, one per header (back edges to one header merged), outermost first."""
        by_header: dict[int, list[tuple[int, int]]] = {}
        for u, v in self.back_edges:
            by_header.setdefault(v, []).append((u, v))
        loops = []
        for header, edges in by_header.items():
            body = {header}
            work = [u for u, _ in edges if u != header]
            while work:
                n = work.pop()
                if n not in body:
                    body.add(n)
                    work.extend(p for p in self.pred[n] if p in self.idom)
            loops.append(Loop(header, frozenset(body), tuple(edges)))
        loops.sort(key=lambda lp: -len(lp.body))
        for i, lp in enumerate(loops):
            enclosing = [o for o in loops[:i] if lp.header in o.body and o.body > lp.body]
            if enclosing:
                parent = min(enclosing, key=lambda o: len(o.body))
                lp.parent = parent.header
                lp.depth = parent.depth + 1
            lp.exits = [(u, v) for u in lp.body for v in self.succ[u] if v not in lp.body]
        return loops

    @cached_property
    def loop_depth(self) -> dict[int, int]:
        """Nesting depth of every block: 0 outside loops."""
        depth = dict.fromkeys(range(len(self.blocks)), 0)
        for lp in self.loops:
            for b in lp.body:
                depth[b] = max(depth[b], lp.depth)
        return depth

    @cached_property
    def irreducible(self) -> bool:
        """Whether some cycle is not a natural loop (has an edge into its middle)."""
        back = set(self.back_edges)
        forward = {u: [v for v in vs if (u, v) not in back] for u, vs in self.succ.items()}
        return not graphs.is_acyclic(forward, self.reachable)

    def block_of(self, instruction_index: int) -> int:
        """The block holding instruction number ``instruction_index`` of the function."""
        import bisect

        starts = [b.start for b in self.blocks]
        i = bisect.bisect_right(starts, instruction_index) - 1
        while i > 0 and not self.blocks[i].instructions:
            i -= 1
        return self.blocks[i].id


def _targets_of(ins: Instruction, tables: dict[str, tuple[str, ...]]) -> tuple[str, list[str]]:
    """(edge kind, target labels) of a branch instruction."""
    ops = ins.operands
    if ins.opcode.startswith("brx"):
        table = next((o.name for o in ops[1:] if isinstance(o, Sym)), "")
        return INDIRECT, list(tables.get(table, ()))
    return TAKEN, [o.name for o in ops if isinstance(o, Sym)][:1]


def build_cfg(fn: Function) -> BlockGraph:
    """Split ``fn`` into basic blocks and connect them."""
    statements = fn.statements
    tables = {}
    pending_label = None
    for s in statements:
        if isinstance(s, Label):
            pending_label = s.name
        elif isinstance(s, BranchTargets) and s.kind == "branchtargets" and pending_label:
            tables[pending_label] = s.targets
    targeted: set[str] = set()
    for targets in tables.values():
        targeted.update(targets)
    for s in statements:
        if type(s) is Instruction and s.opcode.startswith(_BRANCHES):
            targeted.update(o.name for o in s.operands if type(o) is Sym)

    blocks: list[BasicBlock] = []
    cur: BasicBlock | None = None
    labels: list[str] = []
    index = 0
    split_next = True
    for s in statements:
        t = type(s)
        if t is Instruction:
            if split_next or labels:
                cur = BasicBlock(len(blocks), tuple(labels), [], index)
                blocks.append(cur)
                labels = []
                split_next = False
            cur.instructions.append(s)  # type: ignore[union-attr]
            index += 1
            op = s.opcode
            if op.startswith(_BRANCHES) or op.startswith(_ENDS):
                split_next = True
        elif t is Label and s.name in targeted:
            labels.append(s.name)
    if labels:  # targeted labels after the last instruction: an empty block
        blocks.append(BasicBlock(len(blocks), tuple(labels), [], index))

    succ: dict[int, list[int]] = {b.id: [] for b in blocks}
    pred: dict[int, list[int]] = {b.id: [] for b in blocks}
    kinds: dict[tuple[int, int], str] = {}

    def edge(u: int, v: int, kind: str) -> None:
        if (u, v) not in kinds:
            succ[u].append(v)
            pred[v].append(u)
        kinds[u, v] = kind

    label_block = {lab: b.id for b in blocks for lab in b.labels}
    exits = []
    for b in blocks:
        last = b.instructions[-1] if b.instructions else None
        falls = True
        if last is not None:
            op = last.opcode
            if op.startswith(_BRANCHES):
                kind, targets = _targets_of(last, tables)
                for lab in targets:
                    if lab in label_block:
                        edge(b.id, label_block[lab], kind)
                falls = last.guard is not None
            elif op.startswith(_ENDS):
                exits.append(b.id)
                falls = last.guard is not None
        if falls:
            if b.id + 1 < len(blocks):
                if (b.id, b.id + 1) not in kinds:
                    edge(b.id, b.id + 1, FALLTHROUGH)
            elif b.id not in exits:
                exits.append(b.id)
    return BlockGraph(fn, blocks, succ, pred, kinds, 0, exits)


@dataclass(frozen=True)
class CallSite:
    """One call: from ``caller`` to ``callee`` at PTX ``line`` (``indirect``: through a register)."""

    caller: str
    callee: str
    line: int
    indirect: bool = False


def call_sites(functions: Iterable[Function]) -> list[CallSite]:
    """Every call of the functions with a body, in order. Indirect calls through a register go to the
    functions named by the call's ``.calltargets`` table when it has one, else to ``<indirect>``."""
    out = []
    for fn in functions:
        if fn.body is None:
            continue
        tables: dict[str, tuple[str, ...]] = {}
        pending = None
        for s in fn.statements:
            if isinstance(s, Label):
                pending = s.name
            elif isinstance(s, BranchTargets) and s.kind == "calltargets" and pending:
                tables[pending] = s.targets
        for ins in fn.instructions:
            if not ins.opcode.startswith("call"):
                continue
            callee = next((o for o in ins.operands if not hasattr(o, "items")), None)
            if isinstance(callee, Sym):
                out.append(CallSite(fn.name, callee.name, ins.line))
            else:
                proto = ins.operands[-1]
                named = tables.get(proto.name, ()) if isinstance(proto, Sym) else ()
                out += [CallSite(fn.name, target, ins.line, True) for target in named or ("<indirect>",)]
    return out


def call_graph(functions: list[Function]) -> nx.MultiDiGraph:
    """Call graph across ``.entry`` and ``.func`` as a networkx MultiDiGraph: a node per function (``kind``,
    ``defined``), an edge per call site (``line``, and ``indirect`` for calls through a register)."""
    import networkx as nx

    g = nx.MultiDiGraph()
    for fn in functions:
        g.add_node(fn.name, kind=fn.kind, defined=fn.body is not None)
    for c in call_sites(functions):
        g.add_edge(c.caller, c.callee, line=c.line, **({"indirect": True} if c.indirect else {}))
    return g
