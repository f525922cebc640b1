"""Absolute time of one launch from first principles: a roofline estimate with its bounds (numpy only).

From the launch's work (:mod:`ptxstatic.features.work`: issue cycles at the published issue rates and
off-chip bytes, both summed over every thread) and the GPU's published figures
(:mod:`ptxstatic.hardware.issue_rates`), at given memory and core clocks:

* issue time ``T_c``: the busiest SM's share of the issue cycles over the core clock; CTAs are spread
  evenly, so the busiest SM runs ``ceil(CTAs / SMs)`` of them (a launch of fewer CTAs than SMs leaves SMs
  idle);
* memory time ``T_m``: the off-chip bytes over the DRAM bandwidth at the memory clock, at
  :data:`BANDWIDTH_SHARE` of the published peak (an assumption: what streaming kernels sustain, not a
  vendor figure);
* the estimate is ``(T_c^p + T_m^p)^(1/p) + launch overhead``, with ``p`` the overlap exponent of the GPU's
  physical DVFS model where one is loaded (learned on its training surfaces), else the roofline maximum.

Its interval runs from the roofline at the published peaks (perfect overlap, every figure reached, the
shortest launch overhead) to no overlap of issue and memory time at the lowest sustained bandwidth share
and the longest overhead. Not modelled, so outside what the interval promises: data served by the caches
(a kernel that reuses data can run faster than the lower bound), latency with too few warps to hide it,
tensor-core throughput, and host-side gaps between launches. No measurement has checked it: the GTX
Titan X training data records no launches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ptxstatic.features.work import LaunchWork
from ptxstatic.hardware.figures import GpuFigures

#: assumed share of the peak DRAM bandwidth a streaming kernel sustains: (lowest, point)
BANDWIDTH_SHARE = (0.7, 0.8)
#: assumed launch overhead, microseconds: (lowest, point, highest) (the usual range of measured CUDA launch
#: latencies; not a published figure)
LAUNCH_OVERHEAD_US = (2.0, 5.0, 10.0)
MODEL = "roofline"


@dataclass(frozen=True)
class RooflineEstimate:
    gpu: str
    f_mem_mhz: float
    f_core_mhz: float
    time_ms: float
    low_ms: float
    high_ms: float
    issue_ms: float
    memory_ms: float
    overhead_ms: float
    overlap: float | None  # p, or None for the maximum

    @property
    def bound(self) -> str:
        """What limits the launch: issue or memory."""
        return "memory" if self.memory_ms > self.issue_ms else "issue"

    def to_dict(self) -> dict:
        return {
            "model": MODEL, "estimate": True, "gpu_figures": self.gpu, "f_mem_mhz": self.f_mem_mhz,
            "f_core_mhz": self.f_core_mhz, "time_ms": round(self.time_ms, 6), "time_ms_low": round(self.low_ms, 6),
            "time_ms_high": round(self.high_ms, 6), "issue_ms": round(self.issue_ms, 6),
            "memory_ms": round(self.memory_ms, 6), "overhead_ms": round(self.overhead_ms, 6), "bound": self.bound,
            "overlap": self.overlap,
        }


def roofline_time(work: LaunchWork, figures: GpuFigures, f_mem_mhz: float, f_core_mhz: float,
                  overlap: float | None = None) -> RooflineEstimate:
    """The estimate of ``work`` on ``figures``'s GPU at the given clocks (see the module docstring)."""
    per_cta = work.issue_cycles / max(work.ctas, 1)
    busiest = math.ceil(max(work.ctas, 1) / figures.sms)
    issue_s = busiest * per_cta / (f_core_mhz * 1e6)
    peak_s = work.offchip_bytes / figures.bandwidth(f_mem_mhz)
    low_share, share = BANDWIDTH_SHARE
    memory_s = peak_s / share
    lo_o, o, hi_o = (x * 1e-6 for x in LAUNCH_OVERHEAD_US)
    if overlap is None:
        busy = max(issue_s, memory_s)
    else:
        scale = max(issue_s, memory_s) or 1.0  # p-norm computed on ratios, so no overflow for large p
        busy = scale * ((issue_s / scale) ** overlap + (memory_s / scale) ** overlap) ** (1.0 / overlap)
    return RooflineEstimate(
        figures.name, f_mem_mhz, f_core_mhz, (busy + o) * 1e3, (max(issue_s, peak_s) + lo_o) * 1e3,
        (issue_s + peak_s / low_share + hi_o) * 1e3, issue_s * 1e3, memory_s * 1e3, o * 1e3, overlap)
