"""PS201 barrier-under-divergence: a CTA barrier that only some threads of the block reach."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ptxstatic.findings import Finding, Severity
from ptxstatic.ptx.ast import Instruction, Sym
from ptxstatic.rules.context import ModuleContext, RuleContext
from ptxstatic.rules.registry import rule

if TYPE_CHECKING:
    from ptxstatic.analysis.uniformity import ThreadDependence

_CONSEQUENCE = "(deadlock or undefined behaviour)"


def is_cta_barrier(ins: Instruction) -> bool:
    """``bar.sync`` / ``barrier.sync`` / ``bar.red`` over the whole CTA: not ``bar.arrive``, not a warp or
    cluster barrier, and without a thread count (a barrier with a count is meant for a subset of warps)."""
    info = ins.info
    if info.opcode not in ("bar", "barrier") or "arrive" in info.other or info.scope not in ("", "cta"):
        return False
    return len(ins.operands) == (3 if "red" in info.other else 1)


def _callee(ins: Instruction) -> str | None:
    if not ins.opcode.startswith("call"):
        return None
    target = next((o for o in ins.operands if isinstance(o, Sym)), None)
    return target.name if target is not None else None


def _waiting_functions(mc: ModuleContext) -> set[str]:
    """Functions that execute a CTA barrier themselves or through the functions they call."""
    from ptxstatic.analysis.graphs import ancestors

    direct = {name for name, fn in mc.defined.items() if any(is_cta_barrier(i) for i in fn.instructions)}
    out = set(direct)
    for name in direct:
        out |= ancestors(mc.callers, name)
    return out


@rule("PS201", "barrier-under-divergence", Severity.WARNING,
      "a CTA barrier reached only under a condition that differs between the threads of the block")
def barrier_under_divergence(ctx: RuleContext) -> Iterator[Finding]:
    td: ThreadDependence | None = None
    for i, ins in enumerate(ctx.instructions):
        callee = _callee(ins)
        if not is_cta_barrier(ins) and (callee is None or
                                        callee not in ctx.mc.memo("PS201.waiting", lambda: _waiting_functions(ctx.mc))):
            continue
        td = td or ctx.thread_dependence
        block = td.block_of[i]
        if block not in ctx.cfg.reachable:
            continue
        guarded = td.guard_dependent(i)
        controllers = td.divergent_controllers(block)
        if guarded or controllers:
            yield _finding(ctx, td, i, callee, controllers if not guarded else [])


def _finding(ctx: RuleContext, td: ThreadDependence, index: int, callee: str | None,
             controllers: list[int]) -> Finding:
    ins = ctx.instructions[index]
    what = f"call to `{ctx.mc.demangled(callee)}`, which waits at a CTA barrier," if callee else f"`{ins.opcode}`"
    block = td.block_of[index]
    in_loop = [x for x in controllers if any(block in lp.body and x in lp.body and any(u == x for u, _ in lp.exits)
                                             for lp in ctx.cfg.loops)]
    if not controllers:
        kind, decided_at = "predicate", index
    elif in_loop:
        kind, decided_at = "loop", td.divergent[in_loop[0]]
    else:
        kind, decided_at = "condition", td.divergent[controllers[0]]
    sources = td.sources(decided_at)
    depends = " and ".join(sources) if len(sources) <= 2 else ", ".join(sources[:-1]) + " and " + sources[-1]
    if kind == "predicate":
        message = f"{what} is predicated on a value that depends on {depends}: threads whose predicate is false " \
                  f"skip it {_CONSEQUENCE}"
        notes = []
    elif kind == "loop":
        message = f"{what} is inside a loop whose trip count depends on {depends}: threads leave the loop after " \
                  f"different numbers of barriers {_CONSEQUENCE}"
        notes = [ctx.note(decided_at, "the loop's exit condition is decided here")]
    else:
        message = f"{what} is under a condition that depends on {depends}: threads that skip it leave the others " \
                  f"waiting {_CONSEQUENCE}"
        notes = [ctx.note(decided_at, "the condition is decided here")]
    properties = {"kind": kind, "barrier": ins.opcode, "depends_on": sources,
                  "branch_ptx_line": ctx.instructions[decided_at].line}
    if callee:
        properties["callee"] = callee
    return ctx.finding(index, message, notes=notes, properties=properties)
