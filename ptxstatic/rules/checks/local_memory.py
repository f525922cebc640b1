"""PS301 local-memory: a per-thread array the compiler placed in local memory (``ld.local``/``st.local``)."""

from __future__ import annotations

from collections.abc import Iterator

from ptxstatic.findings import Finding, Note, Severity
from ptxstatic.ptx.ast import VarDecl
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.places import hottest, is_library_function, loop_depth
from ptxstatic.rules.registry import rule
from ptxstatic.rules.target import is_debug, measured_resources

#: lines named in notes besides the finding's own
MAX_NOTES = 4


@rule("PS301", "local-memory", Severity.WARNING,
      "a per-thread array lives in local memory (off-chip, cached in L1): ld.local/st.local")
def local_memory(ctx: RuleContext) -> Iterator[Finding]:
    if is_debug(ctx.module) or is_library_function(ctx):
        return
    accesses = [i for i, ins in enumerate(ctx.instructions)
                if ins.info.space == "local" and ins.info.opcode in ("ld", "st")]
    if not accesses or _argument_buffer(ctx, accesses):
        return
    stats = measured_resources(ctx.mc, ctx.function.name)
    if stats is not None and stats.stack_frame == 0:
        return  # ptxas kept the array in registers after all
    depth = {i: loop_depth(ctx, i) for i in accesses}
    at = hottest(ctx, accesses)
    loads = sum(ctx.instructions[i].info.opcode == "ld" for i in accesses)
    depot = sum(d.dims[0] or 0 for s in ctx.function.statements
                if isinstance(s, VarDecl) and s.space == "local" for d in s.names if d.dims)
    message = (f"{depot} bytes per thread in local memory: {loads} ld.local and {len(accesses) - loads} st.local "
               f"in the PTX, {sum(depth[i] > 0 for i in accesses)} of them inside loops")
    properties = {"depot_bytes": depot, "loads": loads, "stores": len(accesses) - loads}
    if stats is not None:
        message += f"; {stats.source} keeps a {stats.stack_frame}-byte stack frame"
        properties["stack_frame"] = stats.stack_frame
        properties["arch"] = stats.arch
    yield ctx.finding(at, message, notes=_other_lines(ctx, accesses, at), properties=properties)


def _argument_buffer(ctx: RuleContext, accesses: list[int]) -> bool:
    """Whether the local memory is only written, for a callee that gets its generic address (``cvta.local``):
    the argument buffer of ``printf`` or of an array passed to a function that is not inlined."""
    if any(ctx.instructions[i].info.opcode == "ld" for i in accesses):
        return False
    return any(ins.info.opcode == "cvta" and ins.info.space == "local" for ins in ctx.instructions) and \
        any(ins.info.opcode == "call" for ins in ctx.instructions)


def _other_lines(ctx: RuleContext, accesses: list[int], at: int) -> list[Note]:
    """A note at each other source line (at most :data:`MAX_NOTES`) that reads or writes local memory."""
    def line(i: int) -> int | None:
        loc = ctx.instructions[i].loc
        return loc.line if loc is not None else None

    notes, seen = [], {line(at)}
    for i in accesses:
        if line(i) is not None and line(i) not in seen and len(notes) < MAX_NOTES:
            seen.add(line(i))
            verb = "read" if ctx.instructions[i].info.opcode == "ld" else "written"
            notes.append(ctx.note(i, f"local memory is {verb} here too"))
    return notes
