"""Loop fast-forward: skip the iterations of an innermost loop whose control is affine in the iteration.

A loop qualifies when every value its branches depend on is computed, inside the loop, only by operations
that keep a value affine in the iteration number (add, sub, neg, mov, narrowing or widening cvt, and
mul/mad/shl by a loop-invariant amount), and the loop calls no function of the module (external ones such
as ``vprintf`` only return data). Branches on data (a value loaded from memory, or computed from one) do
not steer: the interpreter splits the group there by weight every iteration alike, and the fragments meet
again before the next iteration. The interpreter still runs the first iterations of a group. Once a group
has taken the same path twice (with the same weights) and the same per-iteration change of every such
register, the comparisons that steer the loop are linear in the iteration ``k``; solving them gives the
first iteration at which any branch changes direction (or a value would leave its type's range, or an
``eq``/``ne`` difference would change sign). The iterations before it are counted at once and the
registers advanced; the interpreter resumes there. Exactness is kept: the skipped iterations provably
follow the same path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptxstatic.counts.static.interp import CallSite, FunctionPlan, Group, Interpreter
from ptxstatic.counts.static.values import Rows, imm_bits
from ptxstatic.ptx.ast import Function, Imm, Instruction, Reg, VarDecl
from ptxstatic.ptx.dtypes import U64, Unsupported, from_raw, int_range, is_float, is_integer
from ptxstatic.ptx.isa import bit_width

_AFFINE_OPS = frozenset({"add", "sub", "neg", "mov", "cvt", "cvta", "mul", "mad", "shl"})
_PRED_OPS = frozenset({"and", "or", "xor", "not", "mov"})
MAX_SKIP = 1 << 40


@dataclass
class LoopFacts:
    """What the fast-forward needs about one innermost loop (computed once)."""

    header: int
    body: frozenset[int]
    defined: frozenset[str]  # every register the loop writes
    affine: frozenset[str]  # integer registers the loop writes only by affine operations
    steering: frozenset[str]  # affine registers the loop's branches depend on
    widened: frozenset[str]  # affine registers derived through a widening conversion
    observed: frozenset[int]  # setps steering the loop, and widening operations among the steering values
    data_branches: frozenset[int] = frozenset()  # blocks ending in a branch on data


@dataclass
class Trace:
    """A group's recent iterations of one loop."""

    header: int
    snapshots: list[dict[str, np.ndarray | None]] = field(default_factory=list)
    paths: list[list[tuple[int, float]]] = field(default_factory=list)  # (block, weight that entered it)
    path: list[tuple[int, float]] = field(default_factory=list)


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


def loop_facts(plan: FunctionPlan, header: int, defined: set[str]) -> LoopFacts | None:
    """Facts of the innermost loop at ``header``, or None when it cannot be fast-forwarded. ``defined``: the
    functions the module defines (a call to any other one only returns data)."""
    if header not in plan.loop_facts:
        plan.loop_facts[header] = _compute_facts(plan, header, defined)
    return plan.loop_facts[header]  # type: ignore[return-value]


def _compute_facts(plan: FunctionPlan, header: int, defined: set[str]) -> LoopFacts | None:
    cfg = plan.cfg
    loop = next((lp for lp in cfg.loops if lp.header == header), None)
    if loop is None or any(lp.header != header and lp.header in loop.body for lp in cfg.loops):
        return None
    if any(isinstance(op, CallSite) and (op.callee is None or op.callee in defined)
           for b in loop.body for op in plan.ops[b]):
        return None
    if any(plan.terminators[b].kind in ("brx", "ret") for b in loop.body):
        return None
    du = plan.def_use
    ins = plan.function.instructions
    inside = {i for b in loop.body for i in range(cfg.blocks[b].start, cfg.blocks[b].start + len(cfg.blocks[b]))}
    types = register_types(plan.function)
    defs: dict[str, list[int]] = {}
    for i in sorted(inside):
        for r in du.defs[i]:
            defs.setdefault(r, []).append(i)

    def invariant(user: int, reg: str) -> bool:
        return not any(d in inside for d in du.reaching.get((user, reg), ()))

    affine = {r for r in defs if is_integer(types.get(r, "pred"))}
    changed = True
    while changed:
        changed = False
        for r in list(affine):
            if not all(_affine_def(ins[i], i, invariant, affine) for i in defs[r]):
                affine.discard(r)
                changed = True
    widened = {r for r in affine if any(_is_widening(ins[i]) for i in defs[r])}
    changed = True
    while changed:
        changed = False
        for r in affine - widened:
            if any(u in widened for i in defs[r] for u in du.uses[i]):
                widened.add(r)
                changed = True

    # the branches' predicates: predicate logic down to setps of affine values (branches on data aside)
    observed: set[int] = set()
    steering: set[str] = set()
    data = _DataValues(ins, du)
    conds = [b for b in loop.body if plan.terminators[b].kind == "cond"]
    ends = {b: cfg.blocks[b].start + len(cfg.blocks[b]) - 1 for b in conds}
    data_branches = frozenset(b for b in conds if data.register(ends[b], plan.terminators[b].guard))
    work = [(ends[b], plan.terminators[b].guard) for b in conds if b not in data_branches]
    seen: set[int] = set()
    while work:
        user, reg = work.pop()
        for d in du.reaching.get((user, reg), ()):
            if d not in inside or d in seen:
                continue
            seen.add(d)
            i = ins[d]
            info = i.info
            if i.guard is not None:
                return None
            if info.opcode == "setp":
                if is_float(info.dtype) or any(r in defs and r not in affine for r in du.uses[d][:2]):
                    return None
                observed.add(d)
                steering.update(r for r in du.uses[d][:2] if r in defs)
                work += [(d, r) for r in du.uses[d][2:] if r in defs]
            elif info.opcode in _PRED_OPS and info.dtype == "pred":
                work += [(d, r) for r in du.uses[d] if r in defs]
            else:
                return None
    frontier = list(steering)
    while frontier:
        r = frontier.pop()
        for i in defs.get(r, ()):
            if _is_widening(ins[i]):
                observed.add(i)
            for u in du.uses[i]:
                if u in affine and u not in steering:
                    steering.add(u)
                    frontier.append(u)
    return LoopFacts(header, loop.body, frozenset(defs), frozenset(affine), frozenset(steering),
                     frozenset(widened), frozenset(observed), data_branches)


_DATA_SOURCES = frozenset({"ld", "ldu", "atom", "red", "shfl", "vote", "tex", "tld4", "suld"})


class _DataValues:
    """Which register values the interpreter always holds as data: loaded from memory (not the parameter
    space) or computed from such a value by an unguarded instruction (data absorbs every operation)."""

    def __init__(self, ins: list[Instruction], du) -> None:
        self.ins, self.du, self.memo = ins, du, {}

    def instruction(self, d: int) -> bool:
        if d not in self.memo:
            self.memo[d] = False  # a cycle is not proven data
            i = self.ins[d]
            info = i.info
            if i.guard is None:
                source = info.opcode in _DATA_SOURCES and info.space != "param"
                self.memo[d] = source or any(self.register(d, r) for r in self.du.uses[d])
        return self.memo[d]

    def register(self, user: int, reg: str) -> bool:
        defs = self.du.reaching.get((user, reg), ())
        return bool(defs) and all(self.instruction(d) for d in defs)


def _affine_def(i: Instruction, idx: int, invariant, affine: set[str]) -> bool:
    """Whether instruction ``i`` computes an affine function of affine or loop-invariant values."""
    info = i.info
    if i.guard is not None or info.opcode not in _AFFINE_OPS or is_float(info.dtype):
        return False
    if info.opcode in ("mul", "mad") and "hi" in info.other:
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


# -------------------------------------------------------------------------------------- runtime


def fast_forward(interp: Interpreter, plan: FunctionPlan, g: Group, block: int) -> None:
    """Interpreter hook, called when a group is about to run a block inside a loop."""
    trace = g.trace if isinstance(g.trace, Trace) else None
    is_header = any(lp.header == block for lp in plan.cfg.loops)
    facts = loop_facts(plan, block, interp.defined) if is_header else None
    weight = g.total_weight()
    if facts is None:
        if trace is not None and not is_header and block in plan.innermost_loop.get(trace.header, ()):
            trace.path.append((block, weight))
        else:
            g.trace = None
        return
    snap = {r: g.rows.regs.get(r) for r in facts.defined}
    if trace is None or trace.header != block:
        g.trace = Trace(block, [snap], [], [(block, weight)])
        return
    trace.paths.append(trace.path)
    trace.path = [(block, weight)]
    trace.snapshots.append(snap)
    del trace.snapshots[:-3], trace.paths[:-2]
    if len(trace.snapshots) == 3 and trace.paths[0] == trace.paths[1] and _skip(interp, plan, g, facts, trace):
        g.trace = Trace(block, [{r: g.rows.regs.get(r) for r in facts.defined}], [], [(block, weight)])


def _deltas(facts: LoopFacts, trace: Trace, types: dict[str, str]) -> dict[str, np.ndarray]:
    """Per-iteration change of each affine register whose last two iterations agree."""
    s0, s1, s2 = trace.snapshots
    out = {}
    for r in facts.affine:
        a, b, c = s0.get(r), s1.get(r), s2.get(r)
        if a is None or b is None or c is None:
            continue
        mask = _mask(types.get(r, "b64"))
        d1, d2 = (b - a) & mask, (c - b) & mask
        if np.array_equal(np.broadcast_to(d1, np.shape(d2)), d2) if np.ndim(d2) else np.all(d1 == d2):
            out[r] = d2
    return out


def _mask(t: str) -> np.uint64:
    return U64((1 << bit_width(t)) - 1) if bit_width(t) < 64 else ~U64(0)


def _skip(interp: Interpreter, plan: FunctionPlan, g: Group, facts: LoopFacts, trace: Trace) -> bool:
    """Skip as many iterations as provably follow the group's last path; whether any were skipped."""
    types = register_types(plan.function)
    deltas = _deltas(facts, trace, types)
    if not facts.steering <= deltas.keys():
        return False
    ins = plan.function.instructions
    path = trace.paths[-1]
    scratch = Rows(g.n, dict(g.rows.regs), dict(g.rows.ptr), set(), dict(g.rows.params), False, g.rows.key)
    first = _run_path(plan, path, scratch, facts)
    after_one = dict(scratch.regs)
    second = _run_path(plan, path, scratch, facts) if first is not None else None
    if first is None or second is None:
        return False
    k = np.full(g.n, MAX_SKIP, dtype=np.int64)
    for i, v0 in first.items():
        v1 = second[i]
        info = ins[i].info
        if info.opcode == "setp":
            d0 = v0[0] - v0[1]
            dd = (v1[0] - v1[1]) - d0
            k = np.minimum(k, _first_flip(info.cmp, d0, dd))
            if info.cmp in ("eq", "ne"):  # stop where a - b changes sign too (CTA classes compare signs)
                k = np.minimum(k, np.minimum(_first_flip("lt", d0, dd), _first_flip("gt", d0, dd)))
        t = info.types[1] if info.opcode == "cvt" else info.dtype
        for a0, a1 in zip(v0, v1, strict=True):
            k = np.minimum(k, _first_overflow(a0, a1 - a0, t))
    skip = int(k.min())
    if skip < 2:
        return False
    _advance(g, facts, deltas, after_one, skip, types)
    counts = interp.counts[plan.function.name]
    for b, w in path:
        counts[b] += skip * w
    return True


def _run_path(plan: FunctionPlan, path: list[tuple[int, float]], rows: Rows, facts: LoopFacts
              ) -> dict[int, list] | None:
    """Run one iteration along ``path`` on scratch rows: the typed operands of the observed instructions, or
    None when a branch would leave the path or an operand is unknown. Blocks that only a share of the weight
    entered (under a branch on data) are not run: what they write is data once the fragments meet again."""
    ins = plan.function.instructions
    seen: dict[int, list] = {}
    whole = path[0][1]
    for b, w in path:
        blk = plan.cfg.blocks[b]
        if w != whole and any(i in facts.observed for i in range(blk.start, blk.start + len(blk))):
            return None
    spine = [b for b, w in path if w == whole]
    for pos, b in enumerate(spine):
        blk = plan.cfg.blocks[b]
        for j, op in enumerate(plan.ops[b]):
            idx = blk.start + j
            if idx in facts.observed:
                vals = _operand_values(ins[idx], rows)
                if vals is None:
                    return None
                seen[idx] = vals
            if isinstance(op, CallSite):  # an external function: what it returns is data
                for key in [k for k in rows.params if k[0] in op.rets]:
                    rows.params[key] = (None, rows.params[key][1], None, False)
            else:
                op(rows)
        term = plan.terminators[b]
        expected = spine[pos + 1] if pos + 1 < len(spine) else spine[0]
        succ = term.targets[0] if term.targets else None
        if b in facts.data_branches:
            continue
        if term.kind == "cond":
            p = rows.regs.get(term.guard)
            if p is None:
                return None
            cond = (p == 0) if term.negated else (p != 0)
            if np.any(cond) and not np.all(cond):
                return None
            succ = term.targets[0] if bool(np.all(cond)) else term.targets[1]
        if succ != expected:
            return None
    return seen


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


def _advance(g: Group, facts: LoopFacts, deltas: dict[str, np.ndarray], after_one: dict, skip: int,
             types: dict[str, str]) -> None:
    """State ``skip`` iterations on: affine registers advanced, predicates as after one iteration (the skipped
    iterations all compute the same ones), everything else the loop writes becomes data."""
    rows = g.rows
    for r in facts.defined:
        tainted = r in rows.tainted
        tag = rows.ptr.get(r)
        if r in deltas and (r in facts.steering or r not in facts.widened):
            rows.put(r, (rows.regs[r] + deltas[r] * U64(skip)) & _mask(types.get(r, "b64")), tag, tainted)
        elif types.get(r) == "pred":
            rows.put(r, after_one.get(r), None, tainted)
        else:
            rows.put(r, None, None, tainted)
