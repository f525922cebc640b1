"""PS502 memory-or-compute-bound: the share of a kernel's time that follows the memory clock on the target GPU.

With a launch in the configuration: the bottleneck estimate of that launch (its traffic through L1, L2 and
DRAM and its work, :func:`ptxstatic.rules.energy.launch_timing`), the same figures ``predict`` gives.
Without: the roofline ratio of the loop-weighted program (off-chip bytes against issue cycles, caches
ignored), said to be that.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.energy import energy_gpu, launch_timing
from ptxstatic.rules.registry import Option, rule
from ptxstatic.rules.target import is_debug

_RESOURCE = {"core": "the core", "dram": "DRAM", "l2": "L2", "l1": "L1"}


@rule("PS502", "memory-or-compute-bound", Severity.NOTE,
      "the kernel is memory-bound or compute-bound on the target GPU (its configured launch's traffic, else the "
      "roofline of its loop-weighted program)",
      options={"memory-bound": Option(0.6, "memory-bound from this share of the time following the memory clock"),
               "compute-bound": Option(0.35, "compute-bound up to this share of the time following the memory "
                                             "clock")},
      opt_in=True)
def memory_or_compute_bound(ctx: RuleContext) -> Iterator[Finding]:
    from ptxstatic.features.intensity import DEFAULT_TRIPS, intensity_features, loop_weighted_runs
    from ptxstatic.hardware.figures import known_figures

    fn = ctx.function
    figures = known_figures(energy_gpu(ctx))
    if not fn.is_kernel or figures is None or not figures.has_rates or is_debug(ctx.module) or not ctx.instructions:
        return
    timing = launch_timing(ctx)
    properties: dict = {"gpu": figures.name}
    if timing is not None:
        t = timing.at_reference
        share = t.memory_share
        times = ", ".join(f"{_RESOURCE[k]} {v:.3g} ms" for k, v in t.resources_ms.items())
        basis = (f"the configured launch takes {t.time_ms:.3g} ms at memory {t.f_mem_mhz:g} MHz and core "
                 f"{t.f_core_mhz:g} MHz, bound by {_RESOURCE[t.bound]} ({times}; bottleneck estimate from its "
                 "memory traffic)")
        properties.update(model="bottleneck", bound=t.bound, time_ms=round(t.time_ms, 6),
                          resources_ms={k: round(v, 6) for k, v in t.resources_ms.items()})
    else:
        ratio = math.expm1(intensity_features(loop_weighted_runs(fn), figures)["dram_to_issue"])
        share = ratio / (1.0 + ratio)
        basis = (f"no launch configured: memory time {ratio:.2g}× issue time by the roofline at the published peaks "
                 f"(memory {figures.memory_mhz} MHz, core {figures.max_core_mhz} MHz) of the program order with "
                 f"{DEFAULT_TRIPS:g} iterations per loop level, caches ignored")
        properties.update(model="roofline", memory_to_issue=round(ratio, 4))
    if share >= ctx.option("memory-bound"):
        kind, advice = "memory-bound", "a lower core clock costs little time"
    elif share <= ctx.option("compute-bound"):
        kind, advice = "compute-bound", "a lower memory clock costs little time"
    else:
        return
    message = f"{kind} on {figures.name}: memory-bound share {share:.2f}; {basis}; {advice}"
    yield ctx.finding(0, message, properties={"class": kind, "memory_share": round(share, 4), **properties})
