"""Classes of CTAs that take the same path: exact counts of any grid without interpreting every CTA.

When a kernel's control flow depends on ``%ctaid`` only through values affine in it (``add``, ``sub``,
``mov``, integer ``cvt``, ``mul``/``mad``/``shl`` by values that do not depend on it, and ``selp`` or guards on
predicates, which are the same throughout a class since their comparisons are watched), every comparison
that steers a thread is, along one path, an affine function of the CTA coordinates. The set of CTAs on
one side of such a comparison is then convex, so when the corner CTAs of a box of the grid take the same
path for every thread (the same sign of ``a - b`` at every comparison that depends on the CTA index, which
:mod:`ptxstatic.counts.static.agree` checks while they run together), every CTA inside the box takes that
path too, and the box counts as its size times one corner. Boxes whose corners disagree are cut where the
comparison changes sign; a grid with a partial last tile in each dimension ends up as a handful of boxes.

:func:`cta_affinity` finds the comparisons to watch and, when the dependence is not affine, the
instruction that makes it so (then agreeing corners would prove nothing: the estimator interprets every CTA
or a flagged sample instead).
That the compared values do not wrap around their type between the corners is checked, not assumed: the
probe CTAs give each value's step per CTA, and the line through the first corner must meet the value at every
corner in unbounded integers (:mod:`ptxstatic.counts.static.agree`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.registers import defs_uses
from ptxstatic.counts.static.agree import Divergent
from ptxstatic.ptx.ast import Addr, Function, Instruction, Module, Reg, Sym, Tup
from ptxstatic.ptx.dtypes import is_float, is_integer
from ptxstatic.ptx.isa import bit_width

_AFFINE = frozenset({"add", "sub", "neg", "mov", "cvt", "cvta", "mul", "mad", "shl", "selp"})
_DATA = frozenset({"ld", "ldu", "atom", "red", "shfl", "vote", "tex", "tld4", "suld", "match", "activemask"})
_LOGIC = frozenset({"and", "or", "xor", "not", "mov"})

Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # inclusive (lo, hi) along x, y, z


@dataclass
class Affinity:
    """Comparisons to watch per function, and why the CTA dependence is not affine (None: it is)."""

    watch: dict[str, frozenset[int]] = field(default_factory=dict)
    reason: str | None = None

    @property
    def uniform(self) -> bool:
        """Whether every CTA takes the same path: no comparison nor transfer depends on the CTA index other
        than through data (values loaded from memory, the same for every CTA in the interpreter)."""
        return self.reason is None and not any(self.watch.values())


def _is_data(ins: Instruction) -> bool:
    info = ins.info
    return info.opcode in _DATA and info.space != "param"


def _dependent_operands(ins: Instruction, dependent: set[str]) -> list[int]:
    """Positions (among the sources) of the operands whose value depends on the CTA index."""
    return [k for k, o in enumerate(ins.operands[1:])
            if isinstance(o, Reg) and (o.name.startswith("%ctaid") or o.name in dependent)]


def _affine(ins: Instruction, dependent: set[str]) -> bool:
    """Whether an instruction computes a value affine in its CTA-dependent operands, given that every
    predicate that depends on the CTA index is the same throughout a class (its comparisons are watched):
    a guard or a ``selp`` then picks the same operand for every CTA of the class."""
    info = ins.info
    if info.opcode not in _AFFINE or not is_integer(info.dtype or "b64"):
        return False
    if info.opcode == "cvt" and not all(is_integer(t) for t in info.types):
        return False
    if info.opcode in ("mul", "mad") and "hi" in info.other:
        return False
    varying = _dependent_operands(ins, dependent)
    if info.opcode in ("mul", "mad"):
        return len([k for k in varying if k < 2]) <= 1
    return not (info.opcode == "shl" and 1 in varying)


def _data(ins: list[Instruction], regs: list[tuple[list[str], list[str]]], known: frozenset[int],
          unknown: set[str]) -> set[int]:
    """Instructions whose result is data in the interpreter: loads of memory (other than the ``known`` ones),
    atomics, shuffles, ..., loads of the parameters ``unknown`` (not given), and unguarded instructions reading
    a register that only such instructions write (any data operand makes the result data)."""
    sources = {i for i, x in enumerate(ins) if (_is_data(x) and i not in known) or _param_symbol(x, 1) in unknown}
    writers: dict[str, list[int]] = {}
    for i, (defs, _) in enumerate(regs):
        for r in defs:
            writers.setdefault(r, []).append(i)
    data = set(sources)
    changed = True
    while changed:
        changed = False
        held = {r for r, ws in writers.items() if all(w in data for w in ws)}
        for i, (defs, uses) in enumerate(regs):
            if i not in data and defs and ins[i].guard is None and not ins[i].opcode.startswith("call") and any(
                    r in held for r in uses):
                data.add(i)
                changed = True
    return data


def _dependent(ins: list[Instruction], regs: list[tuple[list[str], list[str]]], symbols: set[str],
               data: set[int]) -> tuple[set[int], set[str], dict[str, list[int]]]:
    """Instructions reading a value derived from ``%ctaid`` (or loaded from one of the parameter-space
    ``symbols`` that carry one) other than through data, the registers holding such values, and the readers
    of each register. Registers rather than reaching definitions: a register written anywhere from such a
    value counts everywhere (a superset, and linear in the function's size)."""
    readers: dict[str, list[int]] = {}
    for i, (_, uses) in enumerate(regs):
        for r in uses:
            readers.setdefault(r, []).append(i)
    work = [i for i, (_, uses) in enumerate(regs)
            if any(r.startswith("%ctaid") for r in uses) or _param_symbol(ins[i], 1) in symbols]
    dep, dependent = set(work), set()
    while work:
        i = work.pop()
        if i in data:
            continue
        for r in regs[i][0]:
            if r not in dependent:
                dependent.add(r)
                fresh = [u for u in readers.get(r, ()) if u not in dep]
                dep.update(fresh)
                work += fresh
    return {i for i in dep if i not in data}, dependent, readers


def _param_symbol(ins: Instruction, position: int) -> str:
    """The parameter-space symbol a ``ld.param`` (position 1) or ``st.param`` (position 0) addresses."""
    if not ins.opcode.startswith(("ld.param", "st.param")) or len(ins.operands) <= position:
        return ""
    addr = ins.operands[position]
    return addr.base.name if isinstance(addr, Addr) and isinstance(addr.base, Sym) else ""


def _compared(i: int, ins: list[Instruction], regs: list[tuple[list[str], list[str]]],
              readers: dict[str, list[int]], dep: set[int]) -> bool:
    """Whether what instruction ``i`` writes reaches a comparison through CTA-dependent instructions."""
    seen, work = {i}, [i]
    while work:
        for u in (u for r in regs[work.pop()][0] for u in readers.get(r, ())):
            if u in dep and u not in seen:
                if ins[u].info.opcode in ("setp", "set"):
                    return True
                seen.add(u)
                work.append(u)
    return False


@dataclass
class _Function:
    """What the analysis of one function found: watched comparisons, why the dependence is not affine, and
    the parameter-space symbols it stores a CTA-dependent value to (call arguments, returned values)."""

    watch: frozenset[int]
    reason: str | None
    stored: set[str]


def _function_affinity(fn: Function, symbols: set[str], known: frozenset[int], unknown: set[str]) -> _Function:
    """Watched comparisons of one function and the first reason its CTA dependence is not affine;
    ``symbols``: its parameters (and the values its calls return) that carry a CTA-dependent value; ``known``:
    its loads of known memory (what they read depends on their address); ``unknown``: its parameters the
    launch does not give (data)."""
    ins = fn.instructions
    regs = [defs_uses(x) for x in ins]
    data = _data(ins, regs, known, unknown)
    dep, dependent, readers = _dependent(ins, regs, symbols, data)
    watch, bad, reason, stored = set(), set(), None, set()
    for i in sorted(dep):
        x = ins[i]
        op, full = x.info.opcode, x.opcode
        if op in ("setp", "set"):
            if is_float(x.info.dtype if op == "setp" else x.info.types[-1]):
                bad.add(i)
            watch.add(i)
        elif ((op == "cvt" and len(x.info.types) > 1 and is_integer(x.info.types[1])
               and bit_width(x.info.types[0]) > bit_width(x.info.types[1]))
              or (op in ("mul", "mad") and "wide" in x.info.other)) and _compared(i, ins, regs, readers, dep):
            watch.add(i)  # a widening on the way to a comparison: it must not have wrapped in its narrow type
            if not _affine(x, dependent):
                bad.add(i)
        elif full.startswith("st.param"):
            stored.add(_param_symbol(x, 0))
        elif full.startswith(("brx", "call")):
            reason = reason or f"{full} at line {x.line} depends on the CTA index"
        elif full.startswith(("bra", "ret", "exit", "st", "ld.param")):
            continue  # transfers on watched predicates; stores define nothing; a parameter holds what was stored
        elif i in known or (not (x.info.dtype == "pred" and op in _LOGIC and x.guard is None)
                            and not _affine(x, dependent)):
            bad.add(i)
    seen, work = set(bad), list(bad)
    while work and reason is None:
        i = work.pop()
        if i in watch or ins[i].opcode.startswith(("bra", "brx", "call", "st.param")):
            origin = min(bad)
            reason = f"{ins[origin].opcode} at line {ins[origin].line} is not affine in the CTA index"
        for u in (u for r in regs[i][0] for u in readers.get(r, ())):
            if u not in seen and u not in data:
                seen.add(u)
                work.append(u)
    return _Function(frozenset(watch), reason, stored)


def _calls(fn: Function, defined: dict[str, Function]) -> list[tuple[Function, list[str], list[str]]]:
    """Direct calls of defined functions: (callee, argument symbols, return symbols)."""
    out = []
    for x in fn.instructions:
        if not x.opcode.startswith("call"):
            continue
        ops = list(x.operands)
        rets = [o.name for o in ops.pop(0).items if isinstance(o, Sym)] if ops and isinstance(ops[0], Tup) else []
        target = ops.pop(0) if ops else None
        args = [o.name for o in ops[0].items if isinstance(o, Sym)] if ops and isinstance(ops[0], Tup) else []
        if isinstance(target, Sym) and target.name in defined:
            out.append((defined[target.name], args, rets))
    return out


def cta_affinity(module: Module, kernel: Function,
                 known: Callable[[Function], frozenset[int]] = lambda fn: frozenset(),
                 unknown: frozenset[str] = frozenset()) -> Affinity:
    """The comparisons depending on ``%ctaid`` in the kernel and the functions it calls, and whether that
    dependence is affine. A CTA-dependent call argument makes the callee's parameter CTA-dependent, and a
    CTA-dependent returned value the caller's load of it; the functions are analysed again until that
    settles. ``known``: the loads of a function that read known memory (a load at a CTA-dependent address
    then reads a CTA-dependent value, not affine in the CTA index); ``unknown``: the kernel's parameters the
    launch does not give (their values are data: a comparison with one is on data, not on the CTA index)."""
    defined = {f.name: f for f in module.functions if f.body is not None}
    symbols: dict[str, set[str]] = {kernel.name: set()}
    while True:
        out, found = Affinity(), {}
        todo = [kernel]
        while todo:
            fn = todo.pop()
            if fn.name in found:
                continue
            found[fn.name] = _function_affinity(fn, symbols.setdefault(fn.name, set()), known(fn),
                                                set(unknown) if fn is kernel else set())
            todo += [callee for callee, _, _ in _calls(fn, defined)]
        grown = False
        for name, result in found.items():
            out.watch[name] = result.watch
            out.reason = out.reason or result.reason
            for callee, args, rets in _calls(defined[name], defined):
                params = [d.name for decl in callee.params or () for d in decl.names]
                returns = {d.name for decl in callee.returns for d in decl.names}
                new = {p for p, a in zip(params, args, strict=False) if a in result.stored}
                if found.get(callee.name) is not None and found[callee.name].stored & returns:
                    new_rets = set(rets) - symbols[name]
                    symbols[name] |= new_rets
                    grown = grown or bool(new_rets)
                grown = grown or bool(new - symbols[callee.name])
                symbols[callee.name] |= new
        if not grown:
            return out


# ----------------------------------------------------------------------------------------- search


def corners(box: Box) -> list[tuple[int, int, int]]:
    """The distinct corner coordinates of a box, its first corner first."""
    (x0, x1), (y0, y1), (z0, z1) = box
    return sorted({(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)})


def points(box: Box) -> list[tuple[int, int, int]]:
    """The corners of a box and its probes: its first corner's neighbours along each axis it spans (the
    values at them give each CTA-dependent value's step per CTA, :mod:`ptxstatic.counts.static.agree`)."""
    out = corners(box)
    for axis in range(3):
        lo, hi = box[axis]
        if hi > lo:
            probe = list(out[0])
            probe[axis] += 1
            if tuple(probe) not in out:
                out.append(tuple(probe))  # type: ignore[arg-type]
    return out


def size(box: Box) -> int:
    return int(np.prod([hi - lo + 1 for lo, hi in box]))


def cut(box: Box, axis: int, at: int) -> tuple[Box, Box]:
    """The box cut across ``axis`` after coordinate ``at``."""
    lo, hi = box[axis]
    first, second = list(box), list(box)
    first[axis], second[axis] = (lo, at), (at + 1, hi)
    return tuple(first), tuple(second)  # type: ignore[return-value]


def split(box: Box, cs: list[tuple[int, int, int]], differences: dict[int, float]) -> tuple[Box, Box]:
    """Two boxes covering ``box``, cut where a disagreeing comparison changes sign: ``a - b`` is affine in
    the CTA coordinates, so between two corners that differ along one axis it crosses zero where linear
    interpolation of its corner values says (the middle of the longest side when no such pair exists)."""
    for i, j in ((i, j) for i in differences for j in differences if i < j):
        p, q = cs[i], cs[j]
        axes = [a for a in range(3) if p[a] != q[a]]
        di, dj = differences[i], differences[j]
        if len(axes) == 1 and np.sign(di) != np.sign(dj):
            a = axes[0]
            lo, hi = box[a]
            t = p[a] + (q[a] - p[a]) * di / (di - dj)
            return cut(box, a, min(max(int(np.floor(t)), lo), hi - 1))
    axis = max(range(3), key=lambda a: box[a][1] - box[a][0])
    return cut(box, axis, (box[axis][0] + box[axis][1]) // 2)


@dataclass
class Search:
    """Outcome of :func:`search`: boxes proven alike, boxes counted from their corners without proof."""

    proven: int = 0  # CTAs in boxes whose corners agreed (or single CTAs)
    unproven: int = 0  # CTAs counted from corners that disagreed once the CTA budget was spent
    runs: int = 0  # corner CTAs interpreted
    probes: int = 0  # probe CTAs interpreted besides them
    classes: list[Box] = field(default_factory=list)  # the boxes counted
    boxes: int = 0


def search(grid: tuple[int, int, int], run: Callable[[list[tuple[int, int, int]], int, bool], None],
           max_ctas: int) -> Search:
    """Count every CTA of ``grid`` by classes: ``run(ctas, size, check)`` interprets the corner CTAs
    together, adds their counts times ``size / len(ctas)`` (the box's CTAs per corner) and, with ``check``,
    raises :class:`Divergent` (adding nothing) when they disagree; a box is checked with its probes too
    (:func:`points`). After ``max_ctas`` corner CTAs, boxes are counted from their corners."""
    out = Search()
    stack: list[Box] = [tuple((0, n - 1) for n in grid)]  # type: ignore[list-item]
    while stack:
        box = stack.pop()
        cs = points(box)
        n = size(box)
        if 1 < n <= len(cs) and out.runs + n <= max_ctas:  # as cheap to count one by one as to check
            (x0, x1), (y0, y1), (z0, z1) = box
            stack += [((x, x), (y, y), (z, z)) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)
                      for z in range(z0, z1 + 1)]
            continue
        n_corners = len(corners(box))
        checked = len(cs) > 1 and out.runs + n_corners <= max_ctas
        if not checked:
            cs = corners(box)
        out.runs += n_corners
        out.probes += len(cs) - n_corners
        try:
            run(cs, n, checked)
        except Divergent as diverged:
            stack += split(box, cs, diverged.differences)
            continue
        out.boxes += 1
        out.classes.append(box)
        if checked or len(cs) == 1:
            out.proven += n
        else:
            out.unproven += n
    return out
