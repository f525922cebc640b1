"""PS302 register-spills: ptxas spills registers to local memory (``ptxas -v`` spill stores and loads)."""

from __future__ import annotations

from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.registry import Option, rule
from ptxstatic.rules.target import is_debug, resources, target_arch


@rule("PS302", "register-spills", Severity.WARNING,
      "ptxas spills registers to local memory (ptxas -v spill stores/loads)",
      options={"min-bytes": Option(1, "report from this many bytes of spill stores plus loads per thread")})
def register_spills(ctx: RuleContext) -> Iterator[Finding]:
    if is_debug(ctx.module) or not ctx.function.is_kernel or not ctx.instructions:
        return  # a called function's "spills" are mostly the registers its calls must save
    stats = (resources(ctx.mc) or {}).get(ctx.function.name)
    if stats is None or stats.estimated:
        return  # only ptxas knows about spills
    spilled = stats.spill_stores + stats.spill_loads
    if spilled < ctx.option("min-bytes"):
        return
    limit = _register_limit(ctx)
    message = (f"{stats.source} spills {stats.spill_stores} bytes of stores and {stats.spill_loads} bytes of loads per "
               f"thread to local memory at {stats.registers} registers")
    if limit:
        message += f" ({limit})"
    properties = {"spill_stores": stats.spill_stores, "spill_loads": stats.spill_loads,
                  "registers": stats.registers, "stack_frame": stats.stack_frame, "arch": target_arch(ctx.mc)}
    yield ctx.finding(0, message, properties=properties)


def _register_limit(ctx: RuleContext) -> str:
    """What caps the registers, as written in the kernel: ``.maxnreg`` or ``.minnctapersm`` with ``.maxntid``."""
    fn = ctx.function
    maxnreg = fn.directive("maxnreg")
    if maxnreg is not None and maxnreg.values:
        return f"capped at {maxnreg.values[0]} by .maxnreg"
    blocks, threads = fn.directive("minnctapersm"), fn.directive("maxntid")
    if blocks is not None and blocks.values and threads is not None and threads.values:
        return (f"__launch_bounds__ asks for {blocks.values[0]} blocks of {'x'.join(map(str, threads.values))} "
                "threads per SM")
    return ""
