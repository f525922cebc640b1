"""PS202 divergent-branch-in-loop: a branch on a thread-dependent condition inside a loop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ptxstatic.findings import Finding, Severity
from ptxstatic.limits import WARP_SIZE
from ptxstatic.ptx.ast import Imm, Instruction, Reg
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.places import by_line, in_toolkit_header, is_library_function, line_key
from ptxstatic.rules.registry import rule
from ptxstatic.rules.target import is_debug

if TYPE_CHECKING:
    from ptxstatic.analysis.cfg import Loop
    from ptxstatic.analysis.uniformity import ThreadDependence

#: comparisons that split ordered values at one boundary
ORDERED = frozenset({"lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"})
#: opcodes that keep the order of their thread-dependent operand (for non-negative operands)
MONOTONE = frozenset({"add", "sub", "mul", "mad", "mul24", "mad24", "shl", "shr", "div", "min", "max", "mov",
                      "cvt", "cvta"})


#: the most iterations of a remainder loop nvcc emits after unrolling (a counter started from ``x & 3`` or ``x & 7``)
REMAINDER = 7


@rule("PS202", "divergent-branch-in-loop", Severity.WARNING,
      "a branch inside a loop on a condition that differs between threads: the warp diverges every iteration")
def divergent_branch_in_loop(ctx: RuleContext) -> Iterator[Finding]:
    if is_debug(ctx.module) or is_library_function(ctx):
        return
    td = ctx.thread_dependence
    reported: dict[int, tuple[Loop, bool]] = {}
    for block, index in td.divergent.items():
        loops = [lp for lp in ctx.cfg.loops if block in lp.body]
        if block not in ctx.cfg.reachable or not loops or in_toolkit_header(ctx, index):
            continue
        inner = max(loops, key=lambda lp: lp.depth)
        exits = any(u == block for u, _ in inner.exits)
        guard = ctx.instructions[index].guard
        setps = _comparisons(ctx, index, guard.name) if guard is not None else None
        if setps and all(s not in td.dependent or _range_guard(ctx, td, s) for s in setps):
            continue
        if exits and setps and len(setps) == 1 and _remainder_exit(ctx, td, inner, setps[0]):
            continue
        if _warp_uniform(ctx, td, index):
            continue
        reported[index] = (inner, exits)
    # an unrolled loop repeats a branch: one finding per source line, or per loop and kind without line numbers
    if ctx.mc.has_line_info:
        groups = list(by_line(ctx, reported).values())
    else:
        keyed: dict[tuple[int, bool], list[int]] = {}
        for index in sorted(reported):
            loop, exits = reported[index]
            keyed.setdefault((loop.header, exits), []).append(index)
        groups = list(keyed.values())
    for group in groups:
        yield _finding(ctx, td, group[0], *reported[group[0]])


def _finding(ctx: RuleContext, td: ThreadDependence, index: int, loop: Loop, exits: bool) -> Finding:
    sources = td.sources(index)
    depends = " and ".join(sources) if len(sources) <= 2 else ", ".join(sources[:-1]) + " and " + sources[-1]
    loaded = _loads_data(ctx, td, index)
    if loaded:
        depends = f"data each thread loads (addresses from {depends})"
    if exits:
        message = (f"the loop's exit condition depends on {depends}: the threads of a warp leave after different "
                   "numbers of iterations and the others idle until the last one is done")
    else:
        message = (f"branch inside a loop on a condition that depends on {depends}: the threads of a warp can take "
                   "different paths, run one after the other, in every iteration")
    header = ctx.cfg.blocks[loop.header]
    first = next((header.start + k for k, ins in enumerate(header.instructions) if ins.loc is not None),
                 header.start if header.instructions and not ctx.mc.has_line_info else None)
    same_line = first is not None and line_key(ctx, first) == line_key(ctx, index)
    notes = [ctx.note(first, "in the loop whose body starts here")] if first is not None and not (exits or same_line) \
        else []
    return ctx.finding(index, message, notes=notes, properties={
        "kind": "exit" if exits else "branch", "depends_on": sources, "data": loaded, "loop_depth": loop.depth})


def _loads_data(ctx: RuleContext, td: ThreadDependence, index: int) -> bool:
    """Whether the condition at ``index`` is computed from a value loaded from memory at a per-thread address."""
    todo, seen = [index], {index}
    while todo:
        i = todo.pop()
        for r in ctx.du.uses[i]:
            for d in ctx.du.reaching.get((i, r), []):
                if d in td.dependent and d not in seen:
                    if ctx.instructions[d].info.opcode == "ld" and ctx.instructions[d].info.space != "param":
                        return True
                    seen.add(d)
                    todo.append(d)
    return False


def _comparisons(ctx: RuleContext, at: int, predicate: str, depth: int = 0) -> list[int] | None:
    """The ``setp`` instructions that decide ``predicate`` at instruction ``at``, through ``and``/``or``/``not``
    of predicates; None when something else decides it."""
    defs = ctx.du.reaching.get((at, predicate), [])
    if len(defs) != 1 or depth > 8:
        return None
    ins = ctx.instructions[defs[0]]
    if ins.info.opcode == "setp":
        return [defs[0]]
    if ins.info.opcode not in ("and", "or", "not") or ins.info.dtype != "pred":
        return None
    out: list[int] = []
    for r in ctx.du.uses[defs[0]]:
        found = _comparisons(ctx, defs[0], r, depth + 1)
        if found is None:
            return None
        out += found
    return out


def _compared(ctx: RuleContext, setp: int) -> list[Reg | Imm]:
    return [op for op in ctx.instructions[setp].operands[1:] if isinstance(op, Reg | Imm)]


def _range_guard(ctx: RuleContext, td: ThreadDependence, setp: int) -> bool:
    """Whether ``setp`` orders a value that grows or shrinks steadily with the thread index against a uniform
    bound (``i < n`` with ``i = blockIdx.x * blockDim.x + threadIdx.x``, ``threadIdx.x < stride``): the threads
    of a warp split at one boundary, so only the warp straddling it diverges (a bounds check, a grid-, block-
    or warp-stride loop, a tree reduction)."""
    if ctx.instructions[setp].info.cmp not in ORDERED:
        return False
    ops = _compared(ctx, setp)
    if len(ops) != 2:
        return False
    return any(isinstance(value, Reg) and _uniform(ctx, td, setp, bound) and _monotone(ctx, td, setp, value.name)
               for value, bound in ((ops[0], ops[1]), (ops[1], ops[0])))


def _monotone(ctx: RuleContext, td: ThreadDependence, at: int, reg: str) -> bool:
    """Whether every thread-dependent definition behind ``reg`` (read at ``at``) is a monotone step on the way
    from the thread index: additions, multiplications, shifts, copies, conversions, and masks that keep at
    least a warp's width of low bits; no loads, parities or values merged after divergent branches."""
    todo = [(at, reg)]
    seen: set[int] = set()
    while todo:
        user, r = todo.pop()
        for d in ctx.du.reaching.get((user, r), []):
            if d not in td.dependent or d in seen:
                continue
            seen.add(d)
            ins = ctx.instructions[d]
            if d in td.merged or not _monotone_step(ins):
                return False
            todo += [(d, u) for u in ctx.du.uses[d]]
    return True


def _monotone_step(ins: Instruction) -> bool:
    op = ins.info.opcode
    if op in MONOTONE:
        return not (op == "cvt" and any(t.startswith("f") for t in ins.info.types))
    if op in ("and", "rem"):  # x & (2^k - 1) or x % 2^k with 2^k >= 32: in order within a warp
        width = {"and": 1, "rem": 0}[op]
        return any(isinstance(o, Imm) and int(o.value) + width >= WARP_SIZE and
                   (int(o.value) + width) & (int(o.value) + width - 1) == 0 for o in ins.operands[1:])
    return False


def _warp_uniform(ctx: RuleContext, td: ThreadDependence, index: int) -> bool:
    """Whether the condition at ``index`` depends on the thread only through the warp index: every path back to
    the thread index passes through ``x >> k`` (k >= 5) or ``x / 32m`` of a value that steps with it (the
    lanes of a warp share ``threadIdx.x / 32`` when the block's x extent is a multiple of 32)."""
    from ptxstatic.analysis.uniformity import PER_THREAD_RESULTS, THREAD_SPECIALS

    todo, seen, cut = [index], {index}, False
    while todo:
        i = todo.pop()
        for r in ctx.du.uses[i]:
            for d in ctx.du.reaching.get((i, r), []):
                if d not in td.dependent or d in seen:
                    continue
                seen.add(d)
                ins = ctx.instructions[d]
                if _warp_step(ctx, td, d):
                    cut = True
                    continue
                reads_thread = any(isinstance(op, Reg) and op.name.startswith(THREAD_SPECIALS)
                                   for op in ins.operands[1:])
                if reads_thread or d in td.merged or ins.info.opcode in PER_THREAD_RESULTS or ins.info.opcode == "ld":
                    return False
                todo.append(d)
    return cut


def _warp_step(ctx: RuleContext, td: ThreadDependence, d: int) -> bool:
    """``x >> k`` (k >= 5), ``x / 32m`` or ``x & M`` with no bit of M below 32, of a value that steps with the
    thread index: the same for the 32 lanes of a warp."""
    ins = ctx.instructions[d]
    op = ins.info.opcode
    imm = next((o for o in ins.operands[2:] if isinstance(o, Imm)), None)
    if op not in ("shr", "div", "and") or imm is None or not isinstance(ins.operands[1], Reg):
        return False
    k = imm.value
    if not isinstance(k, int):
        return False
    by_warp = {"shr": k >= 5, "div": k > 0 and k % WARP_SIZE == 0, "and": k != 0 and k % WARP_SIZE == 0}[op]
    return by_warp and _monotone(ctx, td, d, ins.operands[1].name)


def _remainder_exit(ctx: RuleContext, td: ThreadDependence, loop: Loop, setp: int) -> bool:
    """Whether the exit decided by ``setp`` counts a remainder loop nvcc emits after unrolling: an induction
    variable started from ``x & N`` with N at most :data:`REMAINDER`, against a uniform bound."""
    ops = _compared(ctx, setp)
    for i, op in enumerate(ops):
        bound = ops[1 - i] if len(ops) == 2 else None
        if not isinstance(op, Reg) or bound is None or not _uniform(ctx, td, setp, bound):
            continue
        starts = _induction_starts(ctx, td, loop, setp, op.name)
        if starts and all(_small(ctx.instructions[d]) for d in starts):
            return True
    return False


def _small(ins: Instruction) -> bool:
    """``and.b32 r, x, N`` with N at most :data:`REMAINDER`: a value below the unrolling factor."""
    ops = ins.operands[1:]
    return ins.info.opcode == "and" and any(isinstance(o, Imm) and 0 <= int(o.value) <= REMAINDER for o in ops)


def _uniform(ctx: RuleContext, td: ThreadDependence, at: int, op: object) -> bool:
    if isinstance(op, Imm):
        return True
    if not isinstance(op, Reg):
        return False
    defs = ctx.du.reaching.get((at, op.name), [])
    return bool(defs) and not any(d in td.dependent for d in defs)


def _induction_starts(ctx: RuleContext, td: ThreadDependence, loop: Loop, at: int, reg: str) -> list[int] | None:
    """The definitions outside ``loop`` that start ``reg`` (read at instruction ``at``) if it is an induction
    variable of the loop: its definitions inside are additions of a uniform step or copies, leading back to
    themselves around the loop; else None."""
    todo = [d for d in ctx.du.reaching.get((at, reg), []) if ctx.cfg.block_of(d) in loop.body]
    seen: set[int] = set()
    starts: list[int] = []
    cycle = False
    while todo:
        d = todo.pop()
        if d in seen:
            cycle = True
            continue
        seen.add(d)
        source = _stepped_source(ctx, td, d)
        if source is None:
            return None
        for e in ctx.du.reaching.get((d, source), []):
            (todo if ctx.cfg.block_of(e) in loop.body else starts).append(e)
    return starts if cycle else None


def _stepped_source(ctx: RuleContext, td: ThreadDependence, d: int) -> str | None:
    """The register that definition ``d`` steps (``add``/``sub`` of a uniform step, or an integer copy or
    conversion), else None."""
    ins = ctx.instructions[d]
    ops = ins.operands[1:]
    copy = ins.info.opcode == "mov" or (ins.info.opcode == "cvt" and not any(t.startswith("f") for t in ins.info.types))
    if copy and len(ops) == 1 and isinstance(ops[0], Reg):
        return ops[0].name
    if ins.info.opcode not in ("add", "sub") or len(ops) != 2:
        return None
    for value, step in ((ops[0], ops[1]), (ops[1], ops[0])):
        if not isinstance(value, Reg):
            continue
        if isinstance(step, Imm):
            return value.name
        if isinstance(step, Reg) and _uniform(ctx, td, d, step):
            return value.name
    return None
