"""Loop drivers: iterations that provably repeat are skipped, long ones that do not are sampled.

The interpreter runs each loop it enters one iteration at a time (``Interpreter._loop``) and shows every
iteration to a :class:`Driver`: the group that started it, the groups that came back to the header, those
that left, and the counts it added (those of inner loops and calls included).

*Skipped exactly.* When two iterations in a row added the same counts, the state at the header is compared
over three iterations: registers (and ``.param`` values) that do not change are *static*; integer ones that
change by the same amount twice are *affine*; the others *vary*. A forward pass over the loop's code
(:func:`taint`, through the functions it calls) marks every value computed from a changing one; a branch
whose predicate is marked *steers*. Every steering branch must come from ``setp``s in blocks that every
iteration runs once (not in an inner loop), comparing values computed from affine registers by affine
operations (add, sub, neg, mov, integer cvt, and mul/mad/shl by an invariant), so that what they compare is
linear in the iteration number; their operands in two consecutive iterations (one pass over those blocks on
a copy of the state at each start) give, for every row, the first iteration at which any of them changes
direction (or an ``eq``/``ne`` difference changes sign, or an operand would leave its type's range). The
iterations before it are counted at once (per row when every row ran the same path), affine registers are
advanced, and whatever else changes becomes data. Branches on data do not steer: they split by weight alike
in every iteration. The skipped iterations provably run as the recorded one did, so this is exact and makes
a loop of 10**15 iterations as cheap as one of 3, whatever runs inside it.

*Sampled.* A loop that cannot be skipped (a switch on a hash, a maths library branch on a float that
changes every iteration) but whose exits are steering branches of the kind above has a trip count known in
closed form. Once it has run :data:`~ptxstatic.limits.STATIC_LOOP_SAMPLE_ITERATIONS` iterations and
:data:`~ptxstatic.limits.STATIC_LOOP_SAMPLE_WORK` row-instructions (or four times those iterations), unless
the rest would cost less than that work, every row skips to its last iteration:
the blocks that every completed iteration enters once (the header and the blocks dominating every latch)
are counted exactly, the others by the mean of the sampled iterations per row, flagged, with their standard
error and the range between the lightest and the heaviest sampled iteration (:class:`Spread`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.cfg import Loop
from ptxstatic.counts.static.interp import (
    CallSite,
    FunctionPlan,
    Group,
    Interpreter,
    Iteration,
    gather,
    sampled,
    take,
)
from ptxstatic.counts.static.values import Rows, imm_bits
from ptxstatic.limits import STATIC_LOOP_SAMPLE_ITERATIONS, STATIC_LOOP_SAMPLE_WORK
from ptxstatic.ptx.ast import Addr, Function, Imm, Instruction, Reg, Sym, Tup, VarDecl
from ptxstatic.ptx.dtypes import U64, Unsupported, from_raw, int_range, is_float, is_integer
from ptxstatic.ptx.isa import bit_width

_AFFINE_OPS = frozenset({"add", "sub", "neg", "mov", "cvt", "cvta", "mul", "mad", "shl"})
_PRED_OPS = frozenset({"and", "or", "xor", "not", "mov"})
_DATA_SOURCES = frozenset({"ld", "ldu", "atom", "red", "shfl", "vote", "tex", "tld4", "suld", "match",
                           "activemask"})
MAX_SKIP = 1 << 62  #: iterations one skip may cover (affine registers advance in 64-bit modular arithmetic)

State = dict[str, "np.ndarray | None"]  # register or ".param" symbol -> bits at an iteration's start


# ------------------------------------------------------------------------------------ static facts


def register_types(fn: Function) -> dict[str, str]:
    """Declared type of each register of ``fn`` (``%r<5>`` declares ``%r0`` .. ``%r4``)."""
    out = {}
    for s in fn.statements:
        if isinstance(s, VarDecl) and s.space == "reg":
            for d in s.names:
                names = [f"{d.name}{i}" for i in range(d.count)] if d.count is not None else [d.name]
                out.update(dict.fromkeys(names, s.dtype))
    return out


def _is_widening(ins: Instruction) -> bool:
    info = ins.info
    if info.opcode == "cvt":
        return len(info.types) > 1 and bit_width(info.types[0]) > bit_width(info.types[1])
    return "wide" in info.other


def _param_symbol(ins: Instruction, position: int) -> str:
    """The parameter-space symbol a ``ld.param`` (position 1) or ``st.param`` (position 0) addresses."""
    addr = ins.operands[position] if len(ins.operands) > position else None
    return addr.base.name if isinstance(addr, Addr) and isinstance(addr.base, Sym) else ""


def _call_params(ins: Instruction) -> tuple[str | None, str, list[str], list[str]]:
    """A call's direct callee (None: indirect), target register, argument and return symbols."""
    ops = list(ins.operands)
    rets = [o.name for o in ops.pop(0).items if isinstance(o, Sym)] if ops and isinstance(ops[0], Tup) else []
    target = ops.pop(0) if ops else None
    args = [o.name for o in ops[0].items if isinstance(o, Sym)] if ops and isinstance(ops[0], Tup) else []
    if isinstance(target, Sym):
        return target.name, "", args, rets
    return None, target.name if isinstance(target, Reg) else "", args, rets


class _DataValues:
    """Which register values the interpreter always holds as data: loaded from memory (not the parameter
    space) or computed from such a value by an unguarded instruction (data absorbs every operation)."""

    def __init__(self, ins: list[Instruction], du, known: frozenset[int] = frozenset()) -> None:
        self.ins, self.du, self.known, self.memo = ins, du, known, {}

    def instruction(self, d: int) -> bool:
        if d not in self.memo:
            self.memo[d] = False  # a cycle is not proven data
            i = self.ins[d]
            info = i.info
            if i.guard is None:
                source = info.opcode in _DATA_SOURCES and info.space != "param" and d not in self.known
                self.memo[d] = source or any(self.register(d, r) for r in self.du.uses[d])
        return self.memo[d]

    def register(self, user: int, reg: str) -> bool:
        defs = self.du.reaching.get((user, reg), ())
        return bool(defs) and all(self.instruction(d) for d in defs)


def data_values(plan: FunctionPlan) -> _DataValues:
    """The :class:`_DataValues` of a function (made once per plan)."""
    if plan.data_values is None:
        plan.data_values = _DataValues(plan.function.instructions, plan.def_use, plan.known)
    return plan.data_values  # type: ignore[return-value]


def _affine_def(i: Instruction, idx: int, invariant, affine: set[str]) -> bool:
    """Whether instruction ``i`` computes an affine function of affine or loop-invariant values."""
    info = i.info
    if i.guard is not None or info.opcode not in _AFFINE_OPS or is_float(info.dtype):
        return False
    if info.opcode in ("mul", "mad") and "hi" in info.other:
        return False
    if info.opcode == "cvt" and not all(is_integer(t) for t in info.types):
        return False
    srcs = i.operands[1:]
    if not all(isinstance(o, (Reg, Imm)) for o in srcs):
        return False
    regs = [o.name for o in srcs if isinstance(o, Reg)]
    if not all(r in affine or invariant(idx, r) for r in regs):
        return False
    if info.opcode in ("mul", "mad", "shl"):
        varying = [k for k, o in enumerate(srcs[:2]) if isinstance(o, Reg) and not invariant(idx, o.name)]
        return len(varying) <= 1 and not (info.opcode == "shl" and varying == [1])
    return True


@dataclass
class LoopFacts:
    """What the driver needs about one loop (computed once per plan)."""

    loop: Loop
    order: list[int]  # the loop's blocks in scheduling order
    inner: frozenset[int]  # blocks of the loops inside it
    once: frozenset[int]  # blocks outside inner loops that every iteration coming back enters once
    defined: frozenset[str]  # registers the loop writes
    params: frozenset[str]  # .param symbols it writes (call arguments, returned values)
    affine: frozenset[str]  # integer registers it writes only by affine operations
    reads: dict[str, frozenset[str]]  # affine register -> the loop's registers its definitions read
    setps: dict[int, frozenset[int]]  # conditional branch (not on data) -> the setps of its predicate
    opaque: frozenset[int]  # conditional branches whose predicate is not only setps and predicate logic
    chains: dict[int, frozenset[int]]  # setp -> the loop's affine definitions its operands come from
    exits: frozenset[int]  # blocks with an edge out of the loop
    types: dict[str, str]
    taints: dict[frozenset[str], Taint | None] = field(default_factory=dict)  # what changes -> taint()

    def chain_reads(self, setp: int, uses: list[list[str]]) -> set[str]:
        """Registers the setp and the definitions of its chain read."""
        return {r for i in (setp, *self.chains[setp]) for r in uses[i]}


def loop_facts(plan: FunctionPlan, loop: Loop) -> LoopFacts:
    """The :class:`LoopFacts` of ``loop`` (cached on the plan)."""
    facts = plan.loop_facts.get(loop.header)
    if facts is None:
        facts = plan.loop_facts[loop.header] = _compute_facts(plan, loop)
    return facts  # type: ignore[return-value]


def _compute_facts(plan: FunctionPlan, loop: Loop) -> LoopFacts:
    cfg, du = plan.cfg, plan.def_use
    ins = plan.function.instructions
    inner = frozenset(b for lp in cfg.loops if lp.header != loop.header and lp.header in loop.body
                      for b in lp.body)
    latches = {u for u, _ in loop.back_edges}
    once = frozenset(b for b in loop.body - inner if all(cfg.dominates(b, u) for u in latches))
    order = sorted(loop.body, key=lambda b: plan.rank.get(b, len(plan.rank) + b))
    inside = [i for b in order for i in range(cfg.blocks[b].start, cfg.blocks[b].start + len(cfg.blocks[b]))]
    inside_set = set(inside)
    types = register_types(plan.function)
    defs: dict[str, list[int]] = {}
    params = set()
    for i in inside:
        for r in du.defs[i]:
            defs.setdefault(r, []).append(i)
        if ins[i].opcode.startswith("st.param"):
            params.add(_param_symbol(ins[i], 0))
        elif ins[i].opcode.startswith("call"):
            params.update(_call_params(ins[i])[3])

    def invariant(user: int, reg: str) -> bool:
        return not any(d in inside_set for d in du.reaching.get((user, reg), ()))

    affine = {r for r in defs if is_integer(types.get(r, "pred"))}
    changed = True
    while changed:
        changed = False
        for r in list(affine):
            if not all(_affine_def(ins[i], i, invariant, affine) for i in defs[r]):
                affine.discard(r)
                changed = True
    reads = {r: frozenset(u for i in defs[r] for u in du.uses[i] if u in defs) for r in affine}

    def chain(user: int, regs: list[str]) -> frozenset[int] | None:
        """The loop's definitions that values read by ``user`` come from, all affine; None otherwise."""
        out: set[int] = set()
        work = [(user, r) for r in regs]
        while work:
            u, r = work.pop()
            for d in du.reaching.get((u, r), ()):
                if d in inside_set and d not in out:
                    if not any(r2 in affine for r2 in du.defs[d]):
                        return None
                    out.add(d)
                    work += [(d, r2) for r2 in du.uses[d]]
        return frozenset(out)

    setps, chains, opaque = _loop_branches(plan, loop, inside_set, chain)
    exits = frozenset(u for u, _ in loop.exits)
    return LoopFacts(loop, order, inner, once, frozenset(defs), frozenset(params), frozenset(affine), reads,
                     setps, frozenset(opaque), chains, exits, types)


def _loop_branches(plan: FunctionPlan, loop: Loop, inside_set: set[int],
                   chain: Callable[[int, list[str]], frozenset[int] | None],
                   ) -> tuple[dict[int, frozenset[int]], dict[int, frozenset[int]], set[int]]:
    """The loop's conditional branches not on data: per block the integer comparisons its guard comes from
    (``setps``), each comparison's affine definitions (``chains``, from ``chain``), and the blocks whose guard
    cannot be followed so (``opaque``)."""
    cfg, du, ins = plan.cfg, plan.def_use, plan.function.instructions
    data = data_values(plan)
    setps: dict[int, frozenset[int]] = {}
    chains: dict[int, frozenset[int]] = {}
    opaque = set()
    for b in loop.body:
        term = plan.terminators[b]
        if term.kind != "cond":
            continue
        end = cfg.blocks[b].start + len(cfg.blocks[b]) - 1
        if data.register(end, term.guard):
            continue
        found, work, seen, ok = set(), [(end, term.guard)], set(), True
        while work and ok:
            user, reg = work.pop()
            for d in du.reaching.get((user, reg), ()):
                if d not in inside_set or d in seen:
                    continue
                seen.add(d)
                i = ins[d]
                info = i.info
                if i.guard is not None:
                    ok = False
                elif info.opcode == "setp" and not is_float(info.dtype):
                    found.add(d)
                    c = chain(d, du.uses[d][:2])
                    if c is None:
                        ok = False
                    else:
                        chains[d] = c
                    work += [(d, r) for r in du.uses[d][2:]]
                elif info.opcode in _PRED_OPS and info.dtype == "pred":
                    work += [(d, r) for r in du.uses[d]]
                else:
                    ok = False
        if ok:
            setps[b] = frozenset(found)
        else:
            opaque.add(b)
    return setps, chains, opaque


# ------------------------------------------------------------------------------------------- taint


@dataclass
class Taint:
    """Outcome of :func:`taint` over one iteration of a loop."""

    branches: set[int]  # conditional branch blocks whose predicate may differ between iterations
    operands: dict[int, set[str]]  # setp -> its operands that may differ
    back: set[str]  # registers and .param symbols that may differ when the iteration comes back


def _transfer(ins: Instruction, state: set[str], defs: list[str], uses: list[str], callee: Callable,
              known: bool) -> bool:
    """Apply one instruction to the set of changing names ``state``; False when a call makes it unprovable.
    ``known``: the instruction is a load of known memory (what it reads changes with its address)."""
    info = ins.info
    op = ins.opcode
    if op.startswith("call"):
        name, target, args, rets = _call_params(ins)
        if name is None and target in state:
            return False
        steered = callee(name, frozenset(i for i, a in enumerate(args) if a in state))
        if steered is None:
            return False
        for i, r in enumerate(rets):
            (state.add if i in steered else state.discard)(r)
        return True
    if op.startswith("st.param"):
        sym = _param_symbol(ins, 0)
        (state.add if any(u in state for u in uses) else state.discard)(sym)
        return True
    tainted = any(u in state for u in uses)
    if op.startswith("ld.param"):
        tainted = tainted or _param_symbol(ins, 1) in state
    elif info.opcode in _DATA_SOURCES and not known:
        tainted = False
    for d in defs:
        if tainted or (ins.guard is not None and d in state):
            state.add(d)
        else:
            state.discard(d)
    return True


def taint(interp: Interpreter, plan: FunctionPlan, facts: LoopFacts, changing: frozenset[str]) -> Taint | None:
    """Which branches of one iteration of the loop may go differently when ``changing`` (registers, .param
    symbols) differ at its start: a forward pass to a fixed point over the loop (inner loops included) and the
    functions it calls. None when a call passes a changing value to a function whose branches it steers."""
    cfg, du = plan.cfg, plan.def_use
    ins = plan.function.instructions
    loop = facts.loop
    back_edges = set(loop.back_edges)
    state_in: dict[int, set[str]] = {loop.header: set(changing)}
    state_out: dict[int, set[str]] = {}
    out = Taint(set(), {}, set())
    callee = _callee_steering(interp)
    changed = True
    while changed:
        changed = False
        for b in facts.order:
            if b != loop.header:
                preds = [p for p in cfg.pred[b] if p in loop.body and (p, b) not in back_edges and p in state_out]
                state_in[b] = set().union(*(state_out[p] for p in preds))
            state = set(state_in[b])
            blk = cfg.blocks[b]
            for i in range(blk.start, blk.start + len(blk)):
                if i in facts.chains:
                    out.operands[i] = {r for r in du.uses[i][:2] if r in state}
                if not _transfer(ins[i], state, du.defs[i], du.uses[i], callee, i in plan.known):
                    return None
            term = plan.terminators[b]
            if term.guard and term.guard in state:
                if term.kind in ("brx", "ret"):
                    return None
                if term.kind == "cond" and (b in facts.setps or b in facts.opaque):
                    out.branches.add(b)
            if state_out.get(b) != state:
                state_out[b] = state
                changed = True
    out.back = set().union(*(state_out.get(u, set()) for u, _ in loop.back_edges))
    return out


def _callee_steering(interp: Interpreter):
    """``callee(name, changing argument positions)``: the positions of its returned values that may change,
    or None when a changing argument steers one of its branches (or the callee is unknown)."""

    def callee(name: str | None, changing: frozenset[int]) -> frozenset[int] | None:
        if name is None or name not in interp.defined:
            return frozenset() if name is not None else None
        if not changing:
            return frozenset()
        memo = interp.steering
        key = (name, changing)
        if key in memo:
            return memo[key]
        memo[key] = None  # recursion: unprovable
        plan = interp.plan(name)
        fn = plan.function
        params = [d.name for p in fn.params or () for d in p.names]
        rets = [d.name for p in fn.returns for d in p.names]
        du, cfg = plan.def_use, plan.cfg
        data = data_values(plan)
        state_out: dict[int, set[str]] = {}
        order = sorted(cfg.reachable, key=lambda b: plan.rank.get(b, len(plan.rank) + b))
        result: frozenset[int] | None = frozenset()
        changed = True
        while changed and result is not None:
            changed = False
            for b in order:
                state = ({params[i] for i in changing if i < len(params)} if b == cfg.entry else
                         set().union(*(state_out.get(p, set()) for p in cfg.pred[b])))
                blk = cfg.blocks[b]
                for i in range(blk.start, blk.start + len(blk)):
                    if not _transfer(fn.instructions[i], state, du.defs[i], du.uses[i], callee, i in plan.known):
                        result = None
                        break
                term = plan.terminators[b]
                end = blk.start + len(blk) - 1
                if result is not None and term.guard and term.guard in state and (
                        term.kind != "cond" or not data.register(end, term.guard)):
                    result = None
                if result is None:
                    break
                if state_out.get(b) != state:
                    state_out[b] = state
                    changed = True
        if result is not None:
            at_end = set().union(*(state_out.get(b, set()) for b in cfg.exits))
            result = frozenset(i for i, r in enumerate(rets) if r in at_end)
        memo[key] = result
        return result

    return callee


# ------------------------------------------------------------------------------------------ driver


@dataclass
class _Start:
    group: Group
    state: State


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a is b or bool(np.all(a == b))


def _mask(t: str) -> np.uint64:
    return U64((1 << bit_width(t)) - 1) if bit_width(t) < 64 else ~U64(0)


def _whole(x: float) -> int | float:
    return int(x) if isinstance(x, float) and x.is_integer() else x


@dataclass
class Driver:
    """Sees every iteration of one run of a loop and skips or samples iterations (module docstring)."""

    interp: Interpreter
    plan: FunctionPlan
    loop: Loop
    skipping: bool = True
    facts: LoopFacts = field(init=False)
    starts: list[_Start] = field(default_factory=list)  # the last three iterations' starts
    last: list[Iteration] = field(default_factory=list)  # the last two iterations
    sample: list[tuple[Iteration, float]] = field(default_factory=list)  # iteration, weight that started it
    sampling: bool = True  # until iterations are extrapolated: later ones start from data
    iterations: int = 0
    work: float = 0.0
    next_try: int = STATIC_LOOP_SAMPLE_ITERATIONS
    trips: float | None = None  # the most iterations this run may make, where the code bounds it
    data_exits: int = 0  # the interpreter's count of loop exits split on data when the run began

    def __post_init__(self) -> None:
        self.facts = loop_facts(self.plan, self.loop)
        self.data_exits = self.interp.data_exits

    # ------------------------------------------------------------------------------------ protocol
    def begin(self, groups: list[Group]) -> list[Group]:
        if len(groups) != 1 or not self.skipping:
            self.starts.clear()
            return groups
        g = _by_origin(groups[0])
        self.starts = [*self.starts[-2:], _Start(g, self._state(g.rows))]
        return [g]

    def end(self, started: list[Group], back: list[Group], left: list[tuple[Group, int | None]],
            iteration: Iteration) -> tuple[list[Group], list[Group]]:
        self.iterations += 1
        self.work += iteration.work
        self.last = [*self.last[-1:], iteration]
        back = gather(back) if len(back) > 1 else back
        if not self.skipping or len(started) != 1 or len(back) != 1:
            self.last.clear()
            return back, []
        g = back[0] = _by_origin(back[0])
        if len(self.starts) < 2:
            return back, []
        if not _same_rows(started[0], g) or not _same_rows(self.starts[-2].group, started[0]):
            return self._set_apart(g)
        now = self._state(g.rows)
        if self.trips is None:
            self.trips = self._bound(g, now)
        if left or not _alike(self.starts[-2].group, started[0]) or not _alike(started[0], g):
            self.last.clear()
            return back, []
        if self.sampling and len(self.sample) < 4 * STATIC_LOOP_SAMPLE_ITERATIONS:
            self.sample.append((iteration, started[0].total_weight()))
        skipped = self._skip(g, now)
        if not skipped and self.iterations >= self.next_try and (
                self.work >= STATIC_LOOP_SAMPLE_WORK or self.iterations >= 4 * STATIC_LOOP_SAMPLE_ITERATIONS):
            skipped = self._extrapolate(g, now)
            if not skipped:
                self.next_try = 2 * self.iterations
        if skipped:
            self.starts.clear()
            self.last.clear()
        return back, []

    def _set_apart(self, g: Group) -> tuple[list[Group], list[Group]]:
        """When rows leave as the iterations go (a triangular loop: each row its own trip count), set apart the
        rows that the loop's exits will let go within the next two iterations, so that the others run clean
        iterations (which can be skipped) meanwhile; the others' past starts keep only their rows."""
        self.last.clear()
        starts = [_restrict(s, g) for s in self.starts[-2:]]
        if any(s is None for s in starts):
            return [g], []
        self.starts = starts  # type: ignore[assignment]
        now = self._state(g.rows)
        k = self._exit_flips(g, now)
        if k is None:
            return [g], []
        soon = k <= 2
        if not soon.any() or soon.all():
            return [g], []
        stay = np.flatnonzero(~soon)
        kept = take(g, stay)
        self.starts = [_restrict(s, kept) for s in self.starts]  # type: ignore[misc]
        return [kept], [take(g, np.flatnonzero(soon))]

    def _exit_flips(self, g: Group, now: State) -> np.ndarray | None:
        """Per row, the first iteration after the last one at which an exit that every iteration tests on one
        setp of values linear in the iteration changes direction (None where the loop has no such exit)."""
        facts, du = self.facts, self.plan.def_use
        _, steps = self._changes(now)
        moving = set(now)
        advanced = self._advanced(set(steps), moving)
        best = None
        for b in sorted(facts.exits & facts.once):
            setps = facts.setps.get(b, frozenset())
            term = self.plan.terminators[b]
            end = self.plan.cfg.blocks[b].start + len(self.plan.cfg.blocks[b]) - 1
            if len(setps) != 1 or du.reaching.get((end, term.guard)) != [next(iter(setps))]:
                continue
            if not self._observable(list(setps), {}, advanced, moving, set(facts.once)):
                continue
            k = self._first_change(g, [self.starts[-1].state, now], list(setps), set(facts.once), overflow=False)
            if k is not None:
                best = k if best is None else np.minimum(best, k)
        return best

    def close(self) -> None:
        """Record the most iterations this run may make: the bound its exits imply, else, where every row left
        by a branch the interpreter decided, the iterations it ran; infinite otherwise."""
        trips = self.trips
        if trips is None:
            trips = float(self.iterations) if self.interp.data_exits == self.data_exits else math.inf
        key = (self.plan.function.name, self.loop.header)
        self.interp.loop_trips[key] = max(self.interp.loop_trips.get(key, 0.0), trips)

    def _bound(self, g: Group, now: State) -> float | None:
        """The most iterations the run may make by an exit that every iteration tests (a block dominating the
        latches) on one setp comparing values linear in the iteration: it leaves at the setp's first change."""
        k = self._exit_flips(g, now)
        return None if k is None else float(self.iterations + int(k.max()))

    # ------------------------------------------------------------------------------------- state
    def _state(self, rows: Rows) -> State:
        out: State = {r: rows.regs.get(r) for r in self.facts.defined}
        for (sym, off), entry in rows.params.items():
            if sym in self.facts.params:
                out[f"{sym}+{off}"] = entry[0]
        return out

    def _changes(self, now: State) -> tuple[set[str], dict[str, np.ndarray]]:
        """Names whose value changed over the last three iteration starts, and the constant step of the
        integer ones that changed by the same amount twice."""
        s0, s1 = self.starts[-2].state, self.starts[-1].state
        changing: set[str] = set()
        steps: dict[str, np.ndarray] = {}
        for name in s0.keys() | s1.keys() | now.keys():
            a, b, c = s0.get(name), s1.get(name), now.get(name)
            if _same(a, b) and _same(b, c):
                continue
            changing.add(name)
            t = self.facts.types.get(name, "pred")
            if a is None or b is None or c is None or not is_integer(t):
                continue
            m = _mask(t)
            d1, d2 = (b - a) & m, (c - b) & m
            if _same(d1, d2):
                steps[name] = d2
        return changing, steps

    def _advanced(self, stepping: set[str], moving: set[str]) -> set[str]:
        """The affine registers with a constant step whose definitions read only such registers or values that
        do not move: advanced by their step when iterations are skipped."""
        out = {r for r in stepping if r in self.facts.affine}
        changed = True
        while changed:
            changed = False
            for r in list(out):
                if any(q in moving and q not in out for q in self.facts.reads[r]):
                    out.discard(r)
                    changed = True
        return out

    def _spine(self) -> set[int]:
        """Blocks of the loop (not of an inner loop) that the whole group entered once in each of the last two
        iterations."""
        fn, weight = self.plan.function.name, self.starts[-1].group.total_weight()
        return {b for b in self.loop.body - self.facts.inner
                if all(it.added.get((fn, b)) == weight for it in self.last)}

    def _observable(self, setps: list[int], operands: dict[int, set[str]], advanced: set[str], moving: set[str],
                    spine: set[int]) -> bool:
        """Whether each setp (whose operands ``operands`` move) and the definitions its operands come from are
        in the spine, reading only advanced registers among those that move: what it compares is then linear
        in the iteration."""
        cfg, uses = self.plan.cfg, self.plan.def_use.uses
        for s in setps:
            if not operands.get(s, True):
                continue
            if not {cfg.block_of(i) for i in (s, *self.facts.chains[s])} <= spine:
                return False
            if any(r not in advanced for r in self.facts.chain_reads(s, uses) & moving):
                return False
        return True

    # ------------------------------------------------------------------------------------ exact
    def _skip(self, g: Group, now: State) -> bool:
        """Skip the iterations that provably repeat the last one (module docstring); whether any were."""
        if len(self.last) < 2 or self.last[0].added != self.last[1].added:
            return False
        changing, steps = self._changes(now)
        if not changing:
            return False  # an iteration that changes nothing repeats forever: the budget ends it
        found = self._taint(frozenset(changing))
        if found is None or any(b in self.facts.opaque for b in found.branches):
            return False
        moving = changing | found.back
        advanced = self._advanced(set(steps), moving)
        setps = sorted({s for b in found.branches for s in self.facts.setps[b]})
        spine = self._spine()
        if not self._observable(setps, found.operands, advanced, moving, spine):
            return False
        setps = [s for s in setps if found.operands.get(s)]
        k = self._first_change(g, [self.starts[-1].state, now], setps, spine)
        if k is None:
            return False
        per_row = all(it.whole for it in self.last) and g.rows.key is None and g.weight.ndim == 0
        skip = np.minimum(k - 1, MAX_SKIP) if per_row else np.full(g.n, min(int(k.min()) - 1, MAX_SKIP))
        if int(skip.max()) < 2:
            return False
        total, n = sum(int(x) for x in skip), g.n
        for (fn, b), amount in self.last[1].added.items():
            amount = _whole(amount)
            exact = isinstance(amount, int) and amount * total % n == 0
            self.interp.add(fn, b, amount * total // n if exact else amount * total / n)
        self._advance(g, now, steps, advanced, moving, skip)
        return True

    def _taint(self, changing: frozenset[str]) -> Taint | None:
        memo = self.facts.taints
        if changing not in memo:
            memo[changing] = taint(self.interp, self.plan, self.facts, changing)
        return memo[changing]

    def _first_change(self, g: Group, states: list[State], setps: list[int], spine: set[int],
                      overflow: bool = True) -> np.ndarray | None:
        """Per row, the first iteration after the one starting in ``states[0]`` (the next one starts in
        ``states[1]``) in which one of ``setps`` changes direction or (with ``overflow``) an operand of its
        chain would leave its type (MAX_SKIP: never); None when an operand is unknown, or (without
        ``overflow``) would leave its type first."""
        ins = self.plan.function.instructions
        watched = set(setps) | {i for s in setps for i in self.facts.chains[s] if _is_widening(ins[i])}
        values = [self._run_spine(g, s, watched, spine) for s in states]
        if values[0] is None or values[1] is None:
            return None
        first, second = values
        k = np.full(g.n, MAX_SKIP, dtype=np.int64)
        wrap = k.copy()
        for i, v0 in first.items():
            v1 = second[i]
            info = ins[i].info
            if info.opcode == "setp":
                d0 = v0[0] - v0[1]
                dd = (v1[0] - v1[1]) - d0
                k = np.minimum(k, _first_flip(info.cmp, d0, dd))
                if overflow and info.cmp in ("eq", "ne"):  # stop where a - b changes sign too (CTA classes)
                    k = np.minimum(k, np.minimum(_first_flip("lt", d0, dd), _first_flip("gt", d0, dd)))
            t = info.types[1] if info.opcode == "cvt" else info.dtype
            for a0, a1 in zip(v0, v1, strict=True):
                wrap = np.minimum(wrap, _first_overflow(a0, a1 - a0, t))
        if overflow:
            return np.minimum(k, wrap)
        return None if np.any(wrap <= k) else k

    def _run_spine(self, g: Group, state: State, watched: set[int], spine: set[int]) -> dict[int, list] | None:
        """One pass over the spine's instructions on a copy of ``g``'s rows set to ``state``: the typed operands
        of the ``watched`` instructions (None when one is unknown)."""
        rows = _with_state(g.rows, state)
        cfg, ins = self.plan.cfg, self.plan.function.instructions
        seen: dict[int, list] = {}
        for b in self.facts.order:
            if b not in spine:
                continue
            blk = cfg.blocks[b]
            for j, op in enumerate(self.plan.ops[b]):
                idx = blk.start + j
                if idx in watched:
                    vals = _operand_values(ins[idx], rows)
                    if vals is None:
                        return None
                    seen[idx] = vals
                if isinstance(op, CallSite):  # what a call returns is not read by the chains
                    for key in [k for k in rows.params if k[0] in op.rets]:
                        rows.params[key] = (None, rows.params[key][1], None, False)
                else:
                    op(rows)
        return seen if watched <= seen.keys() else None

    def _advance(self, g: Group, now: State, steps: dict[str, np.ndarray], advanced: set[str], moving: set[str],
                 skip: np.ndarray) -> None:
        """The group ``skip`` iterations on: advanced registers stepped; whatever else moves becomes data, marked
        as what the skip left (a branch on it splits as on data, its blocks flagged with the split's spread)."""
        rows = g.rows
        by = U64(int(skip[0])) if np.all(skip == skip[0]) else skip.astype(U64)
        for name in moving:
            if name in advanced:
                rows.put(name, (now[name] + steps[name] * by) & _mask(self.facts.types[name]), rows.ptr.get(name),
                         name in rows.tainted)
            elif name in self.facts.defined:
                rows.put(name, None, None, True)
            elif "+" in name:
                sym, off = name.rsplit("+", 1)
                key = (sym, int(off))
                if key in rows.params:
                    rows.params[key] = (None, rows.params[key][1], None, False)

    # ---------------------------------------------------------------------------------- sampled
    def _extrapolate(self, g: Group, now: State) -> bool:
        """Skip every row to its last iteration when the loop's exits are steering branches of the observed
        kind (its trip count known in closed form), counting the skipped iterations from the sampled ones;
        whether it did."""
        facts = self.facts
        if not self.sample or any(self.plan.terminators[b].kind != "cond" or b not in facts.setps
                                  for b in facts.exits):
            return False
        _, steps = self._changes(now)
        moving = set(now)
        advanced = self._advanced(set(steps), moving)
        setps = sorted({s for b in facts.exits for s in facts.setps[b]})
        spine = self._spine()
        if not facts.exits <= spine or not self._observable(setps, {}, advanced, moving, spine):
            return False
        k = self._first_change(g, [self.starts[-1].state, now], setps, spine)
        if k is None:
            return False
        skip = np.minimum(k - 1, MAX_SKIP) if g.rows.key is None else np.full(g.n, min(int(k.min()) - 1, MAX_SKIP))
        if self.work / self.iterations * float(skip.max()) < STATIC_LOOP_SAMPLE_WORK:
            self.next_try = MAX_SKIP  # the rest costs little: run it
            return False
        whole = g.weight.ndim == 0 and float(g.weight) == 1.0
        rows = sum(int(x) for x in skip) if whole else float(np.dot(skip, np.broadcast_to(g.weight, (g.n,))))
        self._add_sampled(rows)
        self._advance(g, now, steps, advanced, moving, skip)
        self.sampling = False
        return True

    def _add_sampled(self, iterations: int | float) -> None:
        """Add ``iterations`` row-iterations counted from the sampled ones: blocks every iteration enters once
        exactly, the others by the sample's mean per row-iteration, flagged, with their spread."""
        fn = self.plan.function.name
        weights = np.array([w for _, w in self.sample])
        m = len(self.sample)
        line = self.plan.terminators[self.loop.header].line or self.plan.terminators[min(self.facts.exits)].line
        reason = (f"iterations of the loop at line {line} extrapolated from {self.iterations} interpreted "
                  f"({m} sampled)")
        for key in sorted(set().union(*(it.added for it, _ in self.sample))):
            amounts = np.array([it.added.get(key, 0.0) for it, _ in self.sample], dtype=np.float64)
            if key[0] == fn and key[1] in self.facts.once and np.all(amounts == weights):
                self.interp.add(fn, key[1], iterations)
                continue
            count, spread = sampled(amounts, weights, float(iterations))
            self.interp.add(key[0], key[1], count)
            self.interp.estimated(key[0], key[1], reason)
            self.interp.spread(key[0], key[1]).add(spread)
        for b in self.loop.body - self.facts.once:  # blocks the sample never entered may run later
            self.interp.estimated(fn, b, reason)


def _same_rows(a: Group, b: Group) -> bool:
    """Whether two groups hold the same rows (threads) in the same order."""
    return a.n == b.n and np.array_equal(a.origin, b.origin)


def _alike(a: Group, b: Group) -> bool:
    """Whether two groups hold the same rows with the same weights."""
    return _same_rows(a, b) and _same(a.weight, b.weight) and a.regions == b.regions


def _by_origin(g: Group) -> Group:
    """``g`` with its rows in the order of their origin when that order is not already theirs and every row
    has its own origin (rows of two iterations are then compared row by row)."""
    o = g.origin
    if g.n < 2 or bool(np.all(o[1:] > o[:-1])):
        return g
    order = np.argsort(o, kind="stable")
    if np.any(o[order][1:] == o[order][:-1]):
        return g
    return take(g, order)


def _restrict(start: _Start, g: Group) -> _Start | None:
    """An iteration's start cut to the rows of ``g`` (found by origin; None when one is not there)."""
    o = start.group.origin
    at = np.searchsorted(o, g.origin)
    if np.any(at >= len(o)) or not np.array_equal(o[np.minimum(at, len(o) - 1)], g.origin):
        return None
    if len(at) == len(o):
        return start
    group = take(start.group, at)
    state = {name: v if v is None or v.ndim == 0 else v[at] for name, v in start.state.items()}
    return _Start(group, state)


def _with_state(rows: Rows, state: State) -> Rows:
    """A scratch copy of ``rows`` with the registers and .param values of ``state``."""
    regs = dict(rows.regs)
    params = dict(rows.params)
    for name, bits in state.items():
        if "+" in name:
            sym, off = name.rsplit("+", 1)
            key = (sym, int(off))
            if key in params:
                params[key] = (bits, *params[key][1:])
        else:
            regs[name] = bits
    return Rows(rows.n, regs, dict(rows.ptr), set(), params, False, None)


def _operand_values(ins: Instruction, rows: Rows) -> list[np.ndarray] | None:
    """Source operands of a setp, cvt or wide multiply as int64 values of the type they are read as."""
    info = ins.info
    t = info.types[1] if info.opcode == "cvt" else info.dtype
    ops = ins.operands[1:2] if info.opcode == "cvt" else ins.operands[1:3]
    out = []
    for o in ops:
        try:
            if isinstance(o, Imm):
                bits = imm_bits(o.text, t)
            elif isinstance(o, Reg) and rows.regs.get(o.name) is not None and rows.ptr.get(o.name, 0) != -1:
                bits = rows.regs[o.name]
            else:
                return None
            v = from_raw(bits, t)
        except Unsupported:
            return None
        if v.dtype == U64 and np.any(v > U64(1 << 62)):
            return None
        if v.dtype.kind in "iu":
            v = v.astype(np.int64)
        out.append(np.broadcast_to(v, (rows.n,)))
    return out


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -((-a) // b)


#: true set of each comparison of d = a - b, as "d <= edge" (True) or "d > edge" (False)
_HALF_LINES = {"lt": (-1, True), "lo": (-1, True), "le": (0, True), "ls": (0, True),
               "gt": (0, False), "hi": (0, False), "ge": (-1, False), "hs": (-1, False)}


def _first_flip(cmp: str, d0: np.ndarray, dd: np.ndarray) -> np.ndarray:
    """First k >= 1 at which the comparison of ``d0 + k*dd`` with 0 changes (MAX_SKIP: never)."""
    big = np.full(np.shape(d0), MAX_SKIP, dtype=np.int64)
    safe = np.where(dd == 0, 1, dd)
    if cmp in ("eq", "ne"):
        hits = (dd != 0) & ((-d0) % safe == 0) & ((-d0) // safe >= 1)
        return np.where(d0 == 0, np.where(dd != 0, 1, big), np.where(hits, (-d0) // safe, big))
    if cmp not in _HALF_LINES:
        return np.ones(np.shape(d0), dtype=np.int64)
    edge = _HALF_LINES[cmp][0]  # the comparison is constant on d <= edge and on d > edge
    below = d0 <= edge
    rise = np.where(dd > 0, _ceil_div(edge + 1 - d0, safe), big)
    fall = np.where(dd < 0, _ceil_div(d0 - edge, -safe), big)
    return np.maximum(np.where(below, rise, fall), 1)


def _first_overflow(a0: np.ndarray, da: np.ndarray, t: str) -> np.ndarray:
    """First k >= 1 at which ``a0 + k*da`` leaves the range of type ``t`` (kept below 2**62)."""
    lo, hi = int_range(t)
    hi = hi if t[0] == "s" else min(hi, (1 << 62) - 1)
    big = np.full(np.shape(a0), MAX_SKIP, dtype=np.int64)
    up = np.where(da > 0, (hi - a0) // np.where(da > 0, da, 1) + 1, big)
    down = np.where(da < 0, (a0 - lo) // np.where(da < 0, -da, 1) + 1, big)
    return np.maximum(np.minimum(up, down), 1)
