"""PS303 occupancy-limited: registers or shared memory keep the resident warps per SM low."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ptxstatic.errors import PtxstaticError
from ptxstatic.findings import Finding, Severity
from ptxstatic.hardware.occupancy import ARCHS, Residency, residency
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.registry import Option, rule
from ptxstatic.rules.target import block_size, is_debug, resources, target_arch, target_name

if TYPE_CHECKING:
    from ptxstatic.features.resources import KernelResources


@rule("PS303", "occupancy-limited", Severity.WARNING,
      "registers or shared memory per block limit the resident warps per SM on the target GPU",
      options={"min-occupancy": Option(0.5, "report below this fraction of the SM's maximum resident warps")})
def occupancy_limited(ctx: RuleContext) -> Iterator[Finding]:
    fn = ctx.function
    arch = target_arch(ctx.mc)
    if not fn.is_kernel or is_debug(ctx.module) or arch is None or not ctx.instructions:
        return
    stats = (resources(ctx.mc) or {}).get(fn.name)
    if stats is None:
        return
    threads, threads_from = block_size(fn, ctx.mc)
    dynamic = ctx.config.launch.shared_bytes if ctx.config.launch is not None else 0
    try:
        r = residency(arch, threads, stats.registers, stats.shared_bytes + dynamic)
    except PtxstaticError:
        return
    if r.limited_by not in ("registers", "shared") or r.occupancy >= ctx.option("min-occupancy"):
        return
    yield ctx.finding(0, _message(ctx, r, stats, threads, dynamic), properties={
        "arch": arch, "limited_by": r.limited_by, "registers": stats.registers,
        "shared_bytes": stats.shared_bytes + dynamic, "threads_per_block": threads, "threads_from": threads_from,
        "blocks_per_sm": r.blocks_per_sm, "warps_per_sm": r.warps_per_sm, "max_warps_per_sm": r.max_warps_per_sm,
        "occupancy": round(r.occupancy, 4), "estimated": stats.estimated, "resources": stats.source})


def _message(ctx: RuleContext, r: Residency, stats: KernelResources, threads: int, dynamic: int) -> str:
    if r.limited_by == "registers":
        what = f"{stats.registers} registers/thread × {threads} threads/block"
    else:
        what = f"{stats.shared_bytes + dynamic} bytes of shared memory/block"
        if dynamic:
            what += f" ({stats.shared_bytes} static + {dynamic} dynamic)"
    estimated = " (estimated from the PTX)" if stats.estimated else ""
    text = (f"occupancy limited by {'registers' if r.limited_by == 'registers' else 'shared memory'} on "
            f"{target_name(ctx.mc)}: {what}{estimated} allow {r.blocks_per_sm} block(s)/SM = {r.warps_per_sm} of "
            f"{r.max_warps_per_sm} warps ({r.occupancy:.0%})")
    better = _enough(r, stats, threads, dynamic, ctx.option("min-occupancy"))
    return f"{text}; {better}" if better else text


def _enough(r: Residency, stats: KernelResources, threads: int, dynamic: int, goal: float) -> str:
    """The most of the limiting resource that would reach ``goal`` occupancy, if lowering it alone can."""
    arch = ARCHS[r.arch]
    if r.limited_by == "registers":
        for regs in range(stats.registers - 1, 15, -1):
            if residency(r.arch, threads, regs, stats.shared_bytes + dynamic).occupancy >= goal:
                return f"at most {regs} registers/thread reach {goal:.0%}"
        return ""
    step = arch.shared_unit
    for size in range((stats.shared_bytes + dynamic) // step * step, -1, -step):
        if residency(r.arch, threads, stats.registers, size).occupancy >= goal:
            return f"at most {size} bytes/block reach {goal:.0%}"
    return ""
