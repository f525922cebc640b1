"""The static block-count interpreter: a kernel's control flow run over every thread of a launch at once.

Threads that are at the same block travel together as one :class:`Group` of rows (numpy arrays, one entry
per row). A branch whose predicate is known splits a group exactly. A branch whose predicate is data
(:mod:`ptxstatic.counts.static.values`) splits it by weight instead: both sides go on with a share of each
row's weight (50/50 for an ``if``; for a loop exit, ``1/DATA_LOOP_TRIPS`` per evaluation; or as the branch went
in a measured run, :mod:`ptxstatic.counts.static.branch_shares`), and every
block run until the branch's immediate post-dominator is marked estimated. Registers written in that
stretch become data when it ends, so fragments of one thread meet again with equal state and fold back
into one row whose weight sums to 1.

Groups are scheduled in a topological order of the graph without back edges in which a loop's blocks
come before its exits, so groups that reach a block by different paths are merged before it runs.
Device functions are interpreted at each call; their blocks are counted per call.
"""

from __future__ import annotations

import heapq
import math
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BasicBlock, BlockGraph, Loop, build_cfg
from ptxstatic.analysis.defuse import DefUse, def_use
from ptxstatic.analysis.liveness import live_in
from ptxstatic.analysis.registers import is_special
from ptxstatic.counts.static.agree import Corners, watched
from ptxstatic.counts.static.memory import KnownMemory
from ptxstatic.counts.static.values import (
    MIXED,
    Bits,
    Rows,
    Step,
    compile_instruction,
    compile_operands,
    operand_types,
)
from ptxstatic.limits import STATIC_CALL_DEPTH, STATIC_MAX_STEPS, STATIC_MAX_WORK
from ptxstatic.ptx.ast import BranchTargets, Function, InitList, Instruction, Label, Module, Reg, Sym, Tup, VarDecl

DATA_LOOP_TRIPS = 8  #: expected iterations of a loop whose exit depends on data (exit chance 1/8 per test)
MIN_WEIGHT = 1e-4  #: a fragment lighter than this leaves a data-dependent loop at its next exit test
OUTER = -1  #: region marker of a callee entered under a data-dependent branch of its caller


class WorkLimit(Exception):
    """Raised when interpretation exceeds its budget of row-instructions."""


@dataclass
class Group:
    """Rows (thread fragments) of one function frame at one block, with their weights."""

    rows: Rows
    weight: np.ndarray  # float64: 0-d (all rows alike) or one per row
    origin: np.ndarray  # row -> row of the group that entered the function
    regions: frozenset[int] = frozenset()  # data-dependent branch blocks whose influence the rows are in

    @property
    def n(self) -> int:
        return self.rows.n

    def total_weight(self) -> float:
        return float(self.weight) * self.n if self.weight.ndim == 0 else float(self.weight.sum())


def take(g: Group, idx: np.ndarray, live: frozenset[str] | None = None) -> Group:
    """The rows ``idx`` of ``g`` as a new group; with ``live``, only those registers (and the special ones)."""
    r = g.rows
    regs = {k: (v if v is None or v.ndim == 0 else v[idx]) for k, v in r.regs.items()
            if live is None or k in live or is_special(k)}
    params = {k: ((b if b is None or b.ndim == 0 else b[idx]), *rest) for k, (b, *rest) in r.params.items()}
    key = None if r.key is None else r.key[idx]
    rows = Rows(len(idx), regs, dict(r.ptr), set(r.tainted), params, r.shadowed, key)  # type: ignore[arg-type]
    w = g.weight if g.weight.ndim == 0 else g.weight[idx]
    return Group(rows, w, g.origin[idx], g.regions)


def reweighted(g: Group, factor: float, region: int) -> Group:
    """A copy of ``g`` with weights scaled by ``factor`` and ``region`` added to its influence set."""
    r = g.rows
    rows = Rows(r.n, dict(r.regs), dict(r.ptr), set(r.tainted), dict(r.params), True, r.key)
    return Group(rows, g.weight * factor, g.origin, g.regions | {region})


def _concat(parts: list[Bits | None], sizes: list[int]) -> Bits | None:
    if any(p is None for p in parts):
        return None
    if all(p.ndim == 0 for p in parts) and all(p == parts[0] for p in parts):  # type: ignore[union-attr]
        return parts[0]
    return np.concatenate([np.broadcast_to(p, (s,)) for p, s in zip(parts, sizes, strict=True)])


def _merged_tag(tags: list[int | None]) -> int | None:
    return tags[0] if all(t == tags[0] for t in tags) else MIXED


def merge(groups: list[Group]) -> Group:
    """One group holding the rows of all ``groups`` (same block, same regions)."""
    if len(groups) == 1:
        return groups[0]
    sizes = [g.n for g in groups]
    regs: dict[str, Bits | None] = {}
    for name in set().union(*(g.rows.regs for g in groups)):
        regs[name] = _concat([g.rows.regs.get(name) for g in groups], sizes)
    ptr = {}
    for name in set().union(*(g.rows.ptr for g in groups)):
        ptr[name] = _merged_tag([g.rows.ptr.get(name) for g in groups])
    params = {}
    for key in set.intersection(*(set(g.rows.params) for g in groups)):
        entries = [g.rows.params[key] for g in groups]
        if all(e[1] == entries[0][1] for e in entries):
            params[key] = (_concat([e[0] for e in entries], sizes), entries[0][1],
                           _merged_tag([e[2] for e in entries]), any(e[3] for e in entries))
    keys = [g.rows.key for g in groups]
    key = None if any(k is None for k in keys) else np.concatenate(keys)  # type: ignore[arg-type]
    rows = Rows(sum(sizes), regs, ptr, set().union(*(g.rows.tainted for g in groups)), params,
                any(g.rows.shadowed for g in groups), key)
    weight = np.concatenate([np.broadcast_to(g.weight, (g.n,)) for g in groups])
    if np.all(weight == weight[0]):
        weight = np.asarray(weight[0])
    origin = np.concatenate([g.origin for g in groups])
    return Group(rows, weight, origin, groups[0].regions)


def rejoin(groups: list[Group]) -> Group | None:
    """The fragments of one group that a data-dependent branch split, met again in the same state (every
    register and parameter the same array, or data), as one group with their weights added; None when the
    groups are not such fragments (then :func:`merge` and :func:`fold` apply)."""
    first = groups[0]
    rows = first.rows
    for g in groups[1:]:
        r = g.rows
        if g.origin is not first.origin and not np.array_equal(g.origin, first.origin):
            return None
        if r.params.keys() != rows.params.keys() or r.ptr != rows.ptr:
            return None
        keys = list(r.regs.keys() | rows.regs.keys())
        if not all(map(operator.is_, map(r.regs.get, keys), map(rows.regs.get, keys))):
            return None
        if any(v[0] is not rows.params[k][0] or v[1:] != rows.params[k][1:] for k, v in r.params.items()):
            return None
    weight = sum((g.weight for g in groups[1:]), start=first.weight)
    out = Rows(rows.n, dict(rows.regs), dict(rows.ptr), set().union(*(g.rows.tainted for g in groups)),
               dict(rows.params), any(g.rows.shadowed for g in groups), rows.key)
    return Group(out, np.asarray(weight), first.origin, first.regions)


def fold(g: Group) -> Group:
    """Fold rows in identical state (fragments of one thread that met again) into one, adding weights.

    Fragments of one thread differ only in registers and parameters written under a data-dependent branch
    (the tainted ones), so rows with the same origin are compared on those alone."""
    if g.n < 2:
        return g
    cols = [v for k, v in g.rows.regs.items() if k in g.rows.tainted and v is not None and v.ndim == 1]
    cols += [e[0] for e in g.rows.params.values() if e[3] and e[0] is not None and e[0].ndim == 1]
    order = np.lexsort([*cols, g.origin])
    same = g.origin[order][1:] == g.origin[order][:-1]
    if not same.any():
        return g
    for c in cols:
        s = c[order]
        same &= s[1:] == s[:-1]
    start = np.concatenate(([True], ~same))
    if start.all():
        return g
    ids = np.cumsum(start) - 1
    out = take(g, order[start])
    out.weight = np.bincount(ids, weights=np.broadcast_to(g.weight, (g.n,))[order], minlength=int(ids[-1]) + 1)
    return out


def end_shadow(rows: Rows) -> None:
    """Leaving every data-dependent region: what was written inside becomes data."""
    for name in rows.tainted:
        rows.regs[name] = None
        rows.ptr.pop(name, None)
    rows.tainted.clear()
    for key, (_, size, _, tainted) in list(rows.params.items()):
        if tainted:
            rows.params[key] = (None, size, None, False)
    rows.shadowed = False


def gather(groups: list[Group]) -> list[Group]:
    """Groups met at one block, one per set of regions: fragments of one group rejoined, others merged and
    folded."""
    by_region: dict[frozenset[int], list[Group]] = {}
    for g in groups:
        by_region.setdefault(g.regions, []).append(g)
    return [gs[0] if len(gs) == 1 else rejoin(gs) or fold(merge(gs)) for gs in by_region.values()]


@dataclass
class Spread:
    """How far the sampled part of a block's count may be off: ``count - below`` to ``count + above`` holds it;
    ``variance`` is the square of its standard error."""

    below: float = 0.0
    above: float = 0.0
    variance: float = 0.0

    def add(self, other: Spread) -> None:
        self.below += other.below
        self.above += other.above
        self.variance += other.variance


SPREAD_Z = 3.0  #: standard errors on either side of a sampled estimate that its interval spans at least


def sampled(amounts: np.ndarray, sizes: np.ndarray, units: float) -> tuple[float, Spread]:
    """A block's count in ``units`` units not interpreted, from a sample of parts (loop iterations, chunks of
    CTAs) of ``sizes`` units in which it counted ``amounts``: the mean per unit times ``units``, and the spread
    of that estimate: at least ``SPREAD_Z`` standard errors (of a ratio estimator) and the range of the parts
    either side, widened by 3 / parts (the rule of three: a kind of part the sample never met may be up to that
    share of the rest)."""
    rates = amounts / sizes
    mean = float(amounts.sum() / sizes.sum())
    k = len(sizes)
    se = float(np.sqrt(np.sum(sizes ** 2 * (rates - mean) ** 2))) / float(sizes.sum()) if k > 1 else mean
    low = max(0.0, min(mean - SPREAD_Z * se, float(rates.min()))) * max(0.0, 1 - 3 / k)
    high = max(mean + SPREAD_Z * se, float(rates.max())) * (1 + 3 / k)
    return mean * units, Spread((mean - low) * units, (high - mean) * units, (se * units) ** 2)


@dataclass
class Iteration:
    """What one iteration of a loop did: the counts it added (function, block -> amount, those of the loops
    and calls inside it included), its work in row-instructions, and whether no group split on the way."""

    added: dict[tuple[str, int], float]
    work: float
    whole: bool


class LoopDriver(Protocol):
    """Sees each iteration of one run of a loop: ``begin`` takes the groups starting it (and gives those to
    run), ``end`` the groups that came back to the header and those that left; it gives the groups to run
    next (after skipping iterations) and groups set apart to run the loop on their own. ``close``: the run
    has ended. ``iterations``: those run so far."""

    iterations: int

    def begin(self, groups: list[Group]) -> list[Group]: ...

    def end(self, started: list[Group], back: list[Group], left: list[tuple[Group, int | None]],
            iteration: Iteration) -> tuple[list[Group], list[Group]]: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------------------- plans


@dataclass
class Terminator:
    kind: str  # "fall", "jump", "cond", "ret", "brx"
    targets: tuple[int, ...] = ()  # successor blocks ("cond": taken, not taken; "ret": not taken)
    guard: str = ""
    negated: bool = False
    line: int = 0

    def outcomes(self) -> tuple[int | None, ...]:
        """The successor each way out of the block leads to, in the order of :attr:`targets`, with ``None`` for
        returning (a guarded ``ret`` returns or goes on; an unguarded one only returns)."""
        return (None, self.targets[0] if self.targets else None) if self.kind == "ret" else self.targets


@dataclass
class CallSite:
    instruction: Instruction
    callee: str | None  # direct callee, None for an indirect call
    target: str  # register holding the target of an indirect call
    args: tuple[str, ...]
    rets: tuple[str, ...]


Op = Step | CallSite


@dataclass
class FunctionPlan:
    """Everything the interpreter needs about one function, computed once."""

    function: Function
    cfg: BlockGraph
    ops: Ops
    terminators: list[Terminator]
    calls: dict[int, list[CallSite]] = field(default_factory=dict)  # block -> its calls
    loop_facts: dict[int, object] = field(default_factory=dict)  # header -> loops.LoopFacts
    data_values: object | None = None  # loops._DataValues: which registers always hold data
    known: frozenset[int] = frozenset()  # loads whose values are known (memory.KnownMemory.loads)
    #: two-way branch block -> share of each way (``Terminator.outcomes``) in a measured run
    shares: dict[int, tuple[float, ...]] = field(default_factory=dict)

    @cached_property
    def def_use(self) -> DefUse:
        return def_use(self.cfg)

    @cached_property
    def rank(self) -> dict[int, int]:
        """Scheduling rank of each block: a topological order of the graph without back edges (the lowest block
        first among those ready; reverse post-order when the graph is irreducible). Loops run to their end
        before their exits are reached (``Interpreter._loop``), so groups that reach a block by different
        paths meet there."""
        cfg = self.cfg
        back = set(cfg.back_edges)
        reach = cfg.reachable
        indegree = dict.fromkeys(reach, 0)
        for u in reach:
            for v in cfg.succ[u]:
                if (u, v) not in back and v in indegree:
                    indegree[v] += 1
        ready = [b for b, d in indegree.items() if d == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            u = heapq.heappop(ready)
            order.append(u)
            for v in cfg.succ[u]:
                if (u, v) not in back and v in indegree:
                    indegree[v] -= 1
                    if indegree[v] == 0:
                        heapq.heappush(ready, v)
        if len(order) < len(reach):  # irreducible
            order = list(reversed(graphs.postorder(cfg.succ, cfg.entry)))
        return {b: i for i, b in enumerate(order)}

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominator of each block that reaches the function's end (``-2``: the end itself)."""
        cfg, end = self.cfg, -2
        succ = {**{b: list(ps) for b, ps in cfg.pred.items()}, end: list(cfg.exits)}
        pred: dict[int, list[int]] = {b: list(ss) for b, ss in cfg.succ.items()}
        for b in cfg.exits:
            pred[b] = [*pred.get(b, []), end]
        dom = graphs.immediate_dominators(succ, pred, end)
        return {b: d for b, d in dom.items() if b != end}

    @cached_property
    def live_in(self) -> dict[int, frozenset[str]]:
        """Registers whose value at the start of each block may be read later (a group split there keeps only
        those)."""
        return {b: frozenset(regs) for b, regs in live_in(self.cfg).items()}

    @cached_property
    def headers(self) -> dict[int, Loop]:
        """Each loop by its header."""
        return {lp.header: lp for lp in self.cfg.loops}

    @cached_property
    def innermost_loop(self) -> dict[int, frozenset[int]]:
        """Body of the innermost natural loop holding each block in a loop."""
        out: dict[int, frozenset[int]] = {}
        for lp in sorted(self.cfg.loops, key=lambda lp: -len(lp.body)):
            for b in lp.body:
                out[b] = lp.body
        return out

    def branch_line(self, block: int) -> int:
        return self.terminators[block].line


def _call_site(ins: Instruction) -> CallSite:
    ops = list(ins.operands)
    rets: tuple[str, ...] = ()
    if ops and isinstance(ops[0], Tup):
        rets = tuple(o.name for o in ops.pop(0).items if isinstance(o, Sym))
    target = ops.pop(0) if ops else None
    args = tuple(o.name for o in ops[0].items if isinstance(o, Sym)) if ops and isinstance(ops[0], Tup) else ()
    if isinstance(target, Sym):
        return CallSite(ins, target.name, "", args, rets)
    return CallSite(ins, None, target.name if isinstance(target, Reg) else "", args, rets)


def _terminator(block: BasicBlock, label_block: dict[str, int], cfg: BlockGraph) -> Terminator:
    nxt = block.id + 1
    last = block.instructions[-1] if block.instructions else None
    if last is None:
        return Terminator("fall", (nxt,) if nxt < len(cfg.blocks) else ())
    op = last.opcode
    guard = last.guard.name if last.guard is not None else ""
    if op.startswith("brx"):
        succ = tuple(sorted(cfg.graph.successors(block.id)))
        targets = tuple(label_block[s] for s in _brx_labels(last, cfg))
        idx = last.operands[0].name if isinstance(last.operands[0], Reg) else ""
        return Terminator("brx", targets or succ, idx, False, last.line)
    if op.startswith("bra"):
        target = next((label_block[o.name] for o in last.operands if isinstance(o, Sym) and o.name in label_block),
                      None)
        if target is None:
            return Terminator("ret", (), guard, last.guard_negated, last.line)
        if not guard:
            return Terminator("jump", (target,), line=last.line)
        return Terminator("cond", (target, nxt), guard, last.guard_negated, last.line)
    if op.startswith(("ret", "exit", "trap")):
        return Terminator("ret", (nxt,) if guard else (), guard, last.guard_negated, last.line)
    return Terminator("fall", (nxt,) if nxt < len(cfg.blocks) else ())


def _brx_labels(ins: Instruction, cfg: BlockGraph) -> list[str]:
    table = next((o.name for o in ins.operands[1:] if isinstance(o, Sym)), "")
    pending = None
    for s in cfg.function.statements:
        if isinstance(s, Label):
            pending = s.name
        elif isinstance(s, BranchTargets) and pending == table:
            return list(s.targets)
    return []


def _compile(ins: Instruction, symbols: dict[str, int], watch: Corners | None, memory: KnownMemory | None) -> Op:
    if ins.opcode.startswith("call"):
        return _call_site(ins)
    step = compile_instruction(ins, symbols, memory)
    if watch is None:
        return step
    return watched(step, compile_operands(ins, symbols), watch, operand_types(ins),
                   ins.info.opcode in ("setp", "set"))


class Ops:
    """The compiled instructions of each block (all but a block's closing branch), compiled the first time the
    block runs: a kernel of 10**5 lines costs what the interpreter reaches of it."""

    def __init__(self, cfg: BlockGraph, terms: list[Terminator], compile_: Callable[[int, Instruction], Op]) -> None:
        self.cfg, self.terms, self.compile = cfg, terms, compile_
        self.blocks: dict[int, list[Op]] = {}

    def __getitem__(self, b: int) -> list[Op]:
        ops = self.blocks.get(b)
        if ops is None:
            blk = self.cfg.blocks[b]
            body = blk.instructions[:-1] if self.terms[b].kind != "fall" else blk.instructions
            ops = self.blocks[b] = [self.compile(blk.start + j, ins) for j, ins in enumerate(body)]
        return ops


def make_plan(fn: Function, symbols: dict[str, int], watch: frozenset[int] = frozenset(),
              memory: KnownMemory | None = None, corners: Corners | None = None) -> FunctionPlan:
    """The plan of ``fn``; the instructions at indexes ``watch`` are checked across the ``corners`` of a box of
    CTAs; ``memory``: what loads read with known values."""
    cfg = build_cfg(fn)
    known = memory.loads(fn) if memory is not None else frozenset()
    label_block = {lab: b.id for b in cfg.blocks for lab in b.labels}
    terms = [_terminator(b, label_block, cfg) for b in cfg.blocks]
    calls: dict[int, list[CallSite]] = {}
    for b in cfg.blocks:
        for ins in b.instructions:
            if ins.opcode.startswith("call"):
                calls.setdefault(b.id, []).append(_call_site(ins))

    def compile_(index: int, ins: Instruction) -> Op:
        return _compile(ins, symbols, corners if index in watch else None, memory if index in known else None)

    return FunctionPlan(fn, cfg, Ops(cfg, terms, compile_), terms, known=known, calls=calls)


# ---------------------------------------------------------------------------------------- interpreter


@dataclass
class Interpreter:
    """Runs a kernel's control flow over groups of rows; accumulates weighted block entry counts."""

    module: Module
    symbols: dict[str, int]  # addressable symbol -> pointer base tag
    max_work: float = STATIC_MAX_WORK  # row-instructions
    max_steps: int = STATIC_MAX_STEPS  # group-instructions (numpy calls)
    counts: dict[str, dict[int, float]] = field(default_factory=dict)
    reasons: dict[str, dict[int, str]] = field(default_factory=dict)  # function -> block -> why estimated
    notes: list[str] = field(default_factory=list)
    work: float = 0.0
    steps: int = 0
    #: makes the driver of one run of a loop (:mod:`ptxstatic.counts.static.loops`); None: loops are not driven
    loop_driver: Callable[[Interpreter, FunctionPlan, Loop], LoopDriver] | None = None
    watch: dict[str, frozenset[int]] = field(default_factory=dict)  # function -> comparisons checked by CTA
    deadline: float | None = None  # time.process_time() (CPU seconds) at which interpretation stops
    memory: KnownMemory | None = None  # what loads read with known values
    corners: Corners = field(default_factory=Corners)  # the CTAs of a box being checked (ctas.search)
    #: the measured branch shares of a function's plan (``branch_shares.measured_shares``), where there are some
    shares_of: Callable[[FunctionPlan], dict[int, tuple[float, ...]]] | None = None
    splits: int = 0  # groups split by a known branch so far
    #: (function, block) -> how far its sampled part may be off, where a part of it was sampled
    spreads: dict[tuple[str, int], Spread] = field(default_factory=dict)
    #: blocks whose counts rest on a prior (a data-dependent branch split by 1/2 or 1/8, a fallback): only the
    #: bounds the code implies hold them
    prior: set[tuple[str, int]] = field(default_factory=set)
    #: (function, loop header) -> the most iterations a run of the loop may make (math.inf: no bound known)
    loop_trips: dict[tuple[str, int], float] = field(default_factory=dict)
    sampled_shares: bool = False  # the shares of measured branches come from a sample of this launch
    #: function -> branch block -> its ways, for the branches on what a loop whose iterations were extrapolated
    #: left (loops.Driver), above which no branch depends on data
    representative: dict[str, dict[int, int]] = field(default_factory=dict)
    data_splits: int = 0  # branches and calls split by weight (on data) so far
    data_exits: int = 0  # loop exits split by weight (on data) so far
    #: (function, changing argument positions) -> the positions of its returned values that change, or None
    #: when those arguments steer its branches (loops.taint)
    steering: dict[tuple[str, frozenset[int]], frozenset[int] | None] = field(default_factory=dict)
    recording: int = 0  # loops being driven: while any is, every count added is also put on the trail
    trail: list[tuple[str, int, float]] = field(default_factory=list)  # (function, block, amount) added
    _plans: dict[str, FunctionPlan] = field(default_factory=dict)

    def plan(self, name: str) -> FunctionPlan:
        p = self._plans.get(name)
        if p is None:
            p = self._plans[name] = make_plan(self.module.function(name), self.symbols,
                                              self.watch.get(name, frozenset()), self.memory, self.corners)
            self.counts.setdefault(name, dict.fromkeys(range(len(p.cfg.blocks)), 0))
            if self.shares_of is not None:
                p.shares = self.shares_of(p)
        return p

    def spread(self, fn: str, block: int) -> Spread:
        """How far the sampled part of a block's count may be off (made on first use)."""
        return self.spreads.setdefault((fn, block), Spread())

    def estimated(self, fn: str, block: int, reason: str) -> None:
        self.reasons.setdefault(fn, {}).setdefault(block, reason)

    # ----------------------------------------------------------------------------------------- counts
    def add(self, fn: str, block: int, amount: float) -> None:
        """Add ``amount`` thread entries to a block; whole amounts are added as integers, so that exact counts stay
        exact at any size (a float holds whole numbers only up to 2**53)."""
        counts = self.counts[fn]
        if isinstance(amount, float) and amount.is_integer():
            amount = int(amount)
        counts[block] = counts.get(block, 0) + amount
        if self.recording:
            self.trail.append((fn, block, amount))

    # ----------------------------------------------------------------------------- one function
    def run(self, plan: FunctionPlan, entry: Group, depth: int = 0) -> list[Group]:
        """Interpret ``plan`` from its entry block for ``entry``; the groups that returned."""
        returned = [g for g, _ in self._walk(plan, [entry], plan.cfg.entry, None, depth)]
        for g in returned:
            inner = frozenset(r for r in g.regions if r == OUTER)
            if inner != g.regions:
                g.regions = inner
                if not inner:
                    end_shadow(g.rows)
        return returned

    def _walk(self, plan: FunctionPlan, starts: list[Group], start: int, loop: Loop | None, depth: int
              ) -> list[tuple[Group, int | None]]:
        """Run the groups ``starts`` from block ``start`` through the function, or through one iteration of
        ``loop``; the groups that left (returned: ``None``; left the loop or came back to its header: the block)."""
        pending: dict[int, list[Group]] = {}
        heap: list[tuple[int, int]] = []
        out: list[tuple[Group, int | None]] = []

        def arrive(g: Group, block: int | None, first: bool = False) -> None:
            if block is None:
                out.append((g, None))
                return
            if g.regions:
                kept = frozenset(r for r in g.regions if r == OUTER or plan.ipdom.get(r) != block)
                if kept != g.regions:
                    g.regions = kept
                    if not kept:
                        end_shadow(g.rows)
            if loop is not None and (block not in loop.body or (block == loop.header and not first)):
                out.append((g, block))
                return
            if block not in pending:
                pending[block] = []
                heapq.heappush(heap, (plan.rank.get(block, len(plan.rank) + block), block))
            pending[block].append(g)

        for g in starts:
            arrive(g, start, True)
        while heap:
            _, block = heapq.heappop(heap)
            for g in gather(pending.pop(block)):
                inner = plan.headers.get(block) if self.loop_driver is not None else None
                if inner is not None and inner is not loop:  # a loop entered from outside: run it to its end
                    for left, succ in self._loop(plan, inner, g, depth):
                        arrive(left, succ)
                    continue
                for succ_group, succ in self._execute(plan, g, block, depth) or ():
                    arrive(succ_group, succ)
        return out

    def _loop(self, plan: FunctionPlan, loop: Loop, g: Group, depth: int, done: int = 0
              ) -> list[tuple[Group, int | None]]:
        """Run ``loop`` iteration by iteration for ``g``, entering at its header after ``done`` iterations; the
        groups that left it. The loop driver sees every iteration (the counts it added, the groups that came
        back) and may skip ahead, or set rows apart to run on their own."""
        driver = self.loop_driver(self, plan, loop)  # type: ignore[misc]
        driver.iterations = done
        exits: list[tuple[Group, int | None]] = []
        groups = [g]
        self.recording += 1
        try:
            while groups:
                starts = driver.begin(gather(groups))
                pos, work, splits = len(self.trail), self.work, self.splits
                left = self._walk(plan, starts, loop.header, loop, depth)
                groups = [h for h, b in left if b == loop.header]
                gone = [(h, b) for h, b in left if b != loop.header]
                added: dict[tuple[str, int], float] = {}
                for fn, b, amount in self.trail[pos:]:
                    added[(fn, b)] = added.get((fn, b), 0) + amount
                del self.trail[pos:]
                if self.recording > 1:  # the iteration of an enclosing loop holds these counts too
                    self.trail += [(fn, b, amount) for (fn, b), amount in added.items()]
                exits += gone
                groups, apart = driver.end(starts, groups, gone, Iteration(added, self.work - work,
                                                                          self.splits == splits))
                for h in apart:
                    exits += self._loop(plan, loop, h, depth, driver.iterations)
            driver.close()
        finally:
            self.recording -= 1
            if not self.recording:
                self.trail.clear()
        return exits

    def _execute(self, plan: FunctionPlan, g: Group, block: int, depth: int
                 ) -> list[tuple[Group, int | None]] | None:
        name = plan.function.name
        self.add(name, block, g.total_weight())
        if g.regions:
            root = min(r for r in g.regions) if OUTER not in g.regions else OUTER
            ways = self.representative.get(name, {})
            if all(r in ways for r in g.regions):  # a split on what an extrapolated loop left
                w = g.total_weight()  # this share of the rows that reached the split may be none of them or all
                self.spread(name, block).add(Spread(w, w * (math.prod(ways[r] for r in g.regions) - 1)))
            elif root == OUTER or not self.sampled_shares or any(r not in plan.shares for r in g.regions):
                self.prior.add((name, block))
            self.estimated(name, block, "caller branch depends on data" if root == OUTER else
                           f"depends on a data-dependent branch at line {plan.branch_line(root)}"
                           + ("" if root not in plan.shares else ", split as in the emulated sample"
                              if self.sampled_shares else ", split as in the measured run"))
        ops = plan.ops[block]
        self.steps += len(ops) + 1
        self.work += g.n * (len(ops) + 1)
        if self.work > self.max_work or self.steps > self.max_steps:
            raise WorkLimit("interpretation budget exceeded")
        if self.deadline is not None and time.process_time() > self.deadline:
            raise WorkLimit("time budget exceeded")
        for op in ops:
            if isinstance(op, CallSite):
                g = self._call(plan, g, op, block, depth)
                if g is None:
                    return None
            else:
                op(g.rows)
        return self._branch(plan, g, block)

    # ------------------------------------------------------------------------------------ branches
    def _branch(self, plan: FunctionPlan, g: Group, block: int) -> list[tuple[Group, int | None]]:
        term = plan.terminators[block]
        if term.kind == "fall":
            return [(g, term.targets[0] if term.targets else None)]
        if term.kind == "jump":
            return [(g, term.targets[0])]
        if term.kind == "brx":
            return self._indirect_branch(plan, g, block, term)
        if not term.guard:
            return [(g, None)]
        targets: tuple[int | None, int | None] = term.outcomes()  # type: ignore[assignment]
        p = g.rows.regs.get(term.guard)
        tainted = term.guard in g.rows.tainted
        if p is None:
            return self._data_split(plan, g, block, targets, tainted)
        cond = (p == 0) if term.negated else (p != 0)
        out = []
        if cond.ndim == 0:
            parts = [(g, targets[0] if cond else targets[1])]
        else:
            hit = np.flatnonzero(cond)
            miss = np.flatnonzero(~cond)
            parts = [(take(g, idx, plan.live_in.get(t)), t) for idx, t in ((hit, targets[0]), (miss, targets[1]))
                     if len(idx)]
            if len(parts) == 1:
                parts = [(g, parts[0][1])]
            else:
                self.splits += 1
        for part, succ in parts:
            if tainted:
                part.regions = part.regions | {block}
                part.rows.shadowed = True
            out.append((part, succ))
        return out

    def _data_split(self, plan: FunctionPlan, g: Group, block: int, targets: tuple[int | None, int | None],
                    tainted: bool = False) -> list[tuple[Group, int | None]]:
        """Split of a branch on data: as in the measured run where there is one, else loop exits get
        1/DATA_LOOP_TRIPS and other branches 1/2. ``tainted``: the predicate was written under a data-dependent
        branch or is what an extrapolation of a loop left (then, outside any data-dependent branch, its
        blocks are counted with the spread of the split: see :meth:`_execute`)."""
        self.data_splits += 1
        loop = plan.innermost_loop.get(block)
        measured = plan.shares.get(block)
        share = list(measured or (0.5, 0.5))
        exit_ = False
        if loop is not None:
            outside = [t is None or t not in loop for t in targets]
            if outside[0] != outside[1]:
                exit_ = True
                self.data_exits += 1
                if measured is None:
                    share = [1 / DATA_LOOP_TRIPS if o else 1 - 1 / DATA_LOOP_TRIPS for o in outside]
                if float(np.max(g.weight)) * max(share) < MIN_WEIGHT:
                    share = [1.0 if o else 0.0 for o in outside]
        if tainted and not exit_ and measured is None:
            self._representative(plan, g, block, 2)
        return [(reweighted(g, s, block), t) for s, t in zip(share, targets, strict=True) if s > 0]

    def _representative(self, plan: FunctionPlan, g: Group, block: int, ways: int) -> None:
        """Record a split of ``ways`` equal ways on what an extrapolated loop left (no data-dependent branch above
        it): the rows took one of the ways, as in the loop's sampled iterations."""
        name = plan.function.name
        if all(r in self.representative.get(name, {}) for r in g.regions):
            self.representative.setdefault(name, {})[block] = ways

    def _indirect_branch(self, plan: FunctionPlan, g: Group, block: int, term: Terminator
                         ) -> list[tuple[Group, int | None]]:
        idx = g.rows.regs.get(term.guard)
        if idx is None or not term.targets:
            self.data_splits += 1
            if term.guard in g.rows.tainted and term.targets:
                self._representative(plan, g, block, len(term.targets))
            k = len(term.targets)
            return [(reweighted(g, 1 / k, block), t) for t in term.targets]
        idx = np.broadcast_to(idx.astype(np.int64) & 0xFFFFFFFF, (g.n,))
        out = []
        values = np.unique(idx)
        self.splits += len(values) > 1
        for value in values:
            rows = np.flatnonzero(idx == value)
            if value < len(term.targets):
                part = take(g, rows, plan.live_in.get(term.targets[value])) if len(rows) < g.n else g
                if term.guard in g.rows.tainted:
                    part.regions = part.regions | {block}
                    part.rows.shadowed = True
                out.append((part, term.targets[value]))
        return out

    # --------------------------------------------------------------------------------------- calls
    def _call(self, plan: FunctionPlan, g: Group, site: CallSite, block: int, depth: int) -> Group | None:
        caller = plan.function.name
        callee = site.callee
        if callee is None:
            return self._indirect_call(plan, g, site, block, depth)
        try:
            fn = self.module.function(callee)
        except KeyError:
            self._returns_data(g, site)  # an external function (vprintf, malloc, ...)
            return g
        if depth >= STATIC_CALL_DEPTH:
            self.estimated(caller, block, f"calls nested deeper than {STATIC_CALL_DEPTH} are not followed")
            self.prior.add((caller, block))
            for b in range(len(self.plan(callee).cfg.blocks)):
                self.estimated(callee, b, f"calls nested deeper than {STATIC_CALL_DEPTH} are not followed")
                self.prior.add((callee, b))
            self._returns_data(g, site)
            return g
        sub = self.plan(callee)
        entry = self._callee_entry(g, site, fn)
        returned = self.run(sub, entry, depth + 1)
        if not returned:
            return None
        back = merge(returned)
        out = take(g, back.origin)
        out.weight = back.weight
        ret_names = [d.name for decl in fn.returns for d in decl.names]
        for local, theirs in zip(site.rets, ret_names, strict=False):
            for (sym, off), entry_ in back.rows.params.items():
                if sym == theirs:
                    out.rows.params[(local, off)] = entry_
        return fold(out)

    def _callee_entry(self, g: Group, site: CallSite, fn: Function) -> Group:
        specials = {k: v for k, v in g.rows.regs.items() if is_special(k)}
        params: dict = {}
        mine = [d.name for decl in (fn.params or ()) for d in decl.names]
        for local, theirs in zip(site.args, mine, strict=False):
            for (sym, off), entry in g.rows.params.items():
                if sym == local:
                    params[(theirs, off)] = entry
        rows = Rows(g.n, specials, {}, set(), params, g.rows.shadowed, g.rows.key)
        regions = frozenset({OUTER}) if g.regions else frozenset()
        return Group(rows, g.weight, np.arange(g.n), regions)

    def _returns_data(self, g: Group, site: CallSite) -> None:
        for key in [k for k in g.rows.params if k[0] in site.rets]:
            g.rows.params[key] = (None, g.rows.params[key][1], None, False)
        for r in site.rets:
            g.rows.params.pop((r, 0), None)

    def _indirect_call(self, plan: FunctionPlan, g: Group, site: CallSite, block: int, depth: int
                       ) -> Group | None:
        """Call through a pointer: a known target is followed; otherwise every candidate gets a share."""
        caller = plan.function.name
        target = g.rows.regs.get(site.target)
        tag = g.rows.ptr.get(site.target)
        names = {v: k for k, v in self.symbols.items()}
        exact_target = None
        if target is not None and tag is not None and tag != MIXED and target.ndim == 0:
            exact_target = names.get(tag)
        candidates = [exact_target] if exact_target else self.address_taken(len(site.args), len(site.rets))
        if exact_target is not None:
            return self._call(plan, g, CallSite(site.instruction, exact_target, "", site.args, site.rets),
                              block, depth)
        self.estimated(caller, block, f"indirect call at line {site.instruction.line}")
        self.data_splits += 1
        for name in candidates:
            share = reweighted(g, 1 / len(candidates), block)
            share.rows.shadowed = True
            share.regions = frozenset({OUTER})
            self._call(plan, share, CallSite(site.instruction, name, "", site.args, site.rets), block, depth)
        self._returns_data(g, site)
        return g

    @cached_property
    def defined(self) -> set[str]:
        """Names of the functions the module defines (with a body)."""
        return {f.name for f in self.module.functions if f.body is not None}

    @cached_property
    def _address_taken(self) -> set[str]:
        names: set[str] = set()

        def walk(init: object) -> None:
            if isinstance(init, Sym):
                names.add(init.name)
            elif isinstance(init, InitList):
                for i in init.items:
                    walk(i)

        for item in self.module.items:
            if isinstance(item, VarDecl) and item.init is not None:
                walk(item.init)
        for fn in self.module.functions:
            for ins in fn.instructions if fn.body is not None else ():
                if ins.opcode.startswith("mov"):
                    names.update(o.name for o in ins.operands[1:] if isinstance(o, Sym))
        return names

    def address_taken(self, n_args: int, n_rets: int) -> list[str]:
        """Defined device functions whose address is taken and whose signature has the given arity."""
        return [f.name for f in self.module.functions
                if f.kind == "func" and f.body is not None and f.name in self._address_taken
                and len([d for p in (f.params or ()) for d in p.names]) == n_args
                and len([d for p in f.returns for d in p.names]) == n_rets]


