"""PS502 memory-or-compute-bound: the roofline ratio of memory time to issue time of a kernel."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.energy import energy_gpu
from ptxstatic.rules.registry import Option, rule
from ptxstatic.rules.target import is_debug


@rule("PS502", "memory-or-compute-bound", Severity.NOTE,
      "the kernel is memory-bound or compute-bound on the target GPU (roofline of its loop-weighted program)",
      options={"memory-bound": Option(2.0, "memory-bound from this ratio of memory time to issue time"),
               "compute-bound": Option(0.5, "compute-bound up to this ratio of memory time to issue time")},
      opt_in=True)
def memory_or_compute_bound(ctx: RuleContext) -> Iterator[Finding]:
    from ptxstatic.features.intensity import DEFAULT_TRIPS, intensity_features, loop_weighted_runs
    from ptxstatic.hardware.figures import known_figures

    fn = ctx.function
    figures = known_figures(energy_gpu(ctx))
    if not fn.is_kernel or figures is None or not figures.has_rates or is_debug(ctx.module) or not ctx.instructions:
        return
    ratio = math.expm1(intensity_features(loop_weighted_runs(fn), figures)["dram_to_issue"])
    if ratio >= ctx.option("memory-bound"):
        kind, advice = "memory-bound", "a lower core clock costs little time"
    elif ratio <= ctx.option("compute-bound"):
        kind, advice = "compute-bound", "a lower memory clock costs little time"
    else:
        return
    message = (f"{kind} on {figures.name}: memory time {ratio:.2g}× issue time (roofline at the published peaks, "
               f"memory {figures.memory_mhz} MHz and core {figures.max_core_mhz} MHz, of the program order with "
               f"{DEFAULT_TRIPS:g} iterations per loop level, caches ignored); {advice}")
    yield ctx.finding(0, message, properties={"class": kind, "memory_to_issue": round(ratio, 4),
                                              "gpu": figures.name, "model": "roofline"})
