"""PS402 fp64-on-weak-gpu: much of a kernel's issue time is fp64 arithmetic on a GPU whose fp64 is slow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ptxstatic.findings import Finding, Severity
from ptxstatic.ptx import isa
from ptxstatic.ptx.ast import Instruction
from ptxstatic.rules.checks.accidental_double import is_fp64_arithmetic
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.places import LOOP_WEIGHT, hottest, is_library_function, loop_depth
from ptxstatic.rules.registry import Option, rule
from ptxstatic.rules.target import is_debug, target_arch, target_name

if TYPE_CHECKING:
    from ptxstatic.hardware.issue_rates import IssueRates


def _cycles(ins: Instruction, rates: IssueRates) -> float:
    """SM issue cycles per thread of one instruction: fp64 division and square root at the fp64 rate."""
    from ptxstatic.hardware.issue_rates import issue_rate

    info = ins.info
    if info.group == isa.SPECIAL and info.dtype == "f64":
        return 1.0 / rates.fp64
    return 1.0 / issue_rate(info, rates)


@rule("PS402", "fp64-on-weak-gpu", Severity.WARNING,
      "fp64 arithmetic takes much of a kernel's issue time on a target GPU with low fp64 throughput",
      options={"max-fp64-ratio": Option(0.125, "a GPU whose fp64:fp32 throughput is at most this has weak fp64"),
               "min-share": Option(0.5, "report from this share of the kernel's loop-weighted issue cycles")})
def fp64_on_weak_gpu(ctx: RuleContext) -> Iterator[Finding]:
    from ptxstatic.hardware.issue_rates import ISSUE_RATES

    arch = target_arch(ctx.mc)
    rates = ISSUE_RATES.get(arch or "")
    if rates is None or rates.fp64 / rates.fp32 > ctx.option("max-fp64-ratio"):
        return
    if is_debug(ctx.module) or is_library_function(ctx):
        return
    fp64 = [i for i, ins in enumerate(ctx.instructions) if is_fp64_arithmetic(ins)]
    if not fp64:
        return
    weight = [LOOP_WEIGHT ** loop_depth(ctx, i) for i in range(len(ctx.instructions))]
    total = sum(w * _cycles(ins, rates) for w, ins in zip(weight, ctx.instructions, strict=True))
    share = sum(weight[i] * _cycles(ctx.instructions[i], rates) for i in fp64) / total
    if share < ctx.option("min-share"):
        return
    in_loops = sum(loop_depth(ctx, i) > 0 for i in fp64)
    ratio = rates.fp64 / rates.fp32
    message = (f"fp64 arithmetic is {share:.0%} of this function's issue cycles (loop-weighted) on "
               f"{target_name(ctx.mc)}, where fp64 runs at 1/{round(1 / ratio)} of fp32 ({rates.fp64:g} vs "
               f"{rates.fp32:g} results per clock per SM): {len(fp64)} fp64 instructions, {in_loops} inside loops")
    yield ctx.finding(hottest(ctx, fp64), message, properties={
        "arch": arch, "fp64_share": round(share, 4), "fp64_ratio": ratio, "fp64_instructions": len(fp64),
        "in_loops": in_loops})
