"""Absolute time of one launch from its work and its memory traffic: a bottleneck model (numpy only).

From the launch's work (:mod:`ptxstatic.features.work`) and traffic (:mod:`ptxstatic.traffic`), on a GPU's
published figures (:mod:`ptxstatic.hardware.figures`) at given memory and core clocks, the time each
resource of the GPU needs:

* **core**: on the busiest SM (CTAs are spread evenly, ``ceil(CTAs / SMs)`` on it), the larger of the
  schedulers' clocks (a slot per fp32 or fp16 arithmetic instruction, the FMA pipe's, and ``issue_scale``
  slots per other PTX instruction; the control of a one-block loop that ptxas unrolls runs once every
  ``loop_unroll`` trips) and the busiest pipe's
  (the integer, special-function and tensor pipes scaled by ``alu_scale``, ``xu_scale`` and
  ``tensor_scale``), and the latency
  bound: in each round of resident CTAs, one warp's dependent-latency path (its waits for arithmetic,
  memory, the special-function unit and branches scaled by ``latency_scale``, ``memory_latency_scale``,
  ``special_latency_scale``, ``control_latency_scale``), which few warps cannot hide;
* **DRAM**: the DRAM bytes of a launch among others (every written byte written back) over the bandwidth
  at the memory clock, at ``dram_share`` of its peak;
* **L2**: the L2 sectors (32 bytes) read and written over ``l2_bytes_per_clock`` bytes per core clock for the
  whole chip, the stores' sectors beyond what their bytes would fill (written in part, a request each) again
  over ``l2_partial_write_bytes_per_clock``, plus the atomic sectors over
  ``l2_atomic_sectors_per_slice_clock`` times the slices they keep busy: a line's atomics are done by its
  slice's atomic unit one request after another, so atomics on one counter run on one slice and atomics spread
  over many lines on up to as many slices as the GPU's L2 holds ``l2_bytes_per_slice`` (a size that carries
  over to another GPU's L2; no vendor publishes it) (:mod:`ptxstatic.traffic.atomics`; on the H200 the same
  atomic loop took 0.1 to 2.4 ns per atomic sector from megabytes of slots to sixteen);
* **L1 and shared memory**: the busiest SM's L1 sectors at ``l1_sectors_per_clock``, shared-memory
  wavefronts at ``shared_wavefronts_per_clock`` and the constant cache's extra passes for ``ld.const``
  requests whose lanes read different addresses at ``constant_addresses_per_clock`` per core clock.

The estimate is the launch overhead plus the ``overlap``-norm of those times (``p`` large: the slowest
resource alone; ``p`` = 1: no overlap). L2, L1, shared memory and the core follow the core clock; DRAM the
memory clock. The parameters of a GPU are fitted on its measurements (``trained/<gpu>/bottleneck``, with
the model card saying on what and how well); a GPU without them uses :data:`DEFAULT_PARAMETERS`, the
H200's fit, and says so. The interval combines the traffic's and the counts' own ranges with the spread of
the fit's errors on launches it was not fitted on.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ptxstatic.features.work import LaunchWork
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.traffic.atomics import busy_slices
from ptxstatic.traffic.caches import SECTOR
from ptxstatic.traffic.model import LaunchTraffic

MODEL = "bottleneck"
RESOURCES = ("core", "dram", "l2", "l1")


@dataclass(frozen=True)
class BottleneckParameters:
    dram_share: float = 0.8  # of the peak DRAM bandwidth a streaming kernel sustains
    l2_bytes_per_clock: float = 2 * 2560.0  # the whole chip's L2 bandwidth, bytes per core clock
    l2_partial_write_bytes_per_clock: float = 2 * 2560.0  # ... for stores' sectors beyond their bytes' worth
    l2_atomic_sectors_per_slice_clock: float = 0.5  # atomic sectors one L2 slice's atomic unit does per core clock
    l2_bytes_per_slice: float = 256 * 1024  # L2 bytes of one slice: the GPU's L2 over it is its slice count
    l1_sectors_per_clock: float = 4.0  # per SM
    shared_wavefronts_per_clock: float = 1.0  # per SM
    constant_addresses_per_clock: float = 1.0  # per SM: distinct addresses the constant cache serves
    latency_scale: float = 1.0  # of the arithmetic latencies of the dependent path
    memory_latency_scale: float = 1.0
    special_latency_scale: float = 1.0
    control_latency_scale: float = 1.0
    issue_scale: float = 1.0  # issue slots per PTX instruction outside the FMA pipe (ptxas adds, fuses, drops)
    alu_scale: float = 1.0  # clocks of the integer pipe relative to the published rates
    xu_scale: float = 1.0  # ... of the special-function and conversion pipe
    tensor_scale: float = 1.0  # ... of the tensor cores (mma.sync and wmma reach less than the published rate)
    loop_unroll: float = 4.0  # trips of a one-block loop per pass of the loop control, once ptxas has unrolled it
    overlap: float = 4.0  # p of the p-norm of the resources' times
    overhead_us: float = 3.0
    error_low: float = 0.75  # multiplicative interval of the fit's errors on held-out launches (90 %)
    error_high: float = 1.35
    fitted_on: str = ""  # what the parameters were fitted on ("" for the defaults)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> BottleneckParameters:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


DEFAULT_PARAMETERS = BottleneckParameters()


@dataclass(frozen=True)
class TimeEstimate:
    gpu: str
    f_mem_mhz: float
    f_core_mhz: float
    time_ms: float
    low_ms: float
    high_ms: float
    resources_ms: dict[str, float]
    overhead_ms: float
    parameters: str  # which parameters made it
    dram_wait_ms: float = 0.0  # of the core's time, its warps' waits for DRAM (when the latency path bounds it)

    @property
    def bound(self) -> str:
        """The resource that takes longest."""
        return max(RESOURCES, key=lambda k: self.resources_ms[k])

    @property
    def memory_share(self) -> float:
        """The share of the clock-dependent time that follows the memory clock, against the part that follows
        the core clock (the core, L2, L1), at these clocks: DRAM's time, and, when DRAM bounds the launch, the
        core's waits for DRAM too (queued behind its bandwidth; a launch bound elsewhere waits out a latency
        that the core's side of the memory system sets)."""
        r = self.resources_ms
        core = max(r["core"], r["l2"], r["l1"])
        waits = min(self.dram_wait_ms, r["core"]) if r["dram"] >= core and r["core"] >= core else 0.0
        return (r["dram"] + waits) / (r["dram"] + core) if r["dram"] + core > 0 else 0.0

    def to_dict(self) -> dict:
        return {
            "model": MODEL, "estimate": True, "gpu_figures": self.gpu, "parameters": self.parameters,
            "f_mem_mhz": self.f_mem_mhz, "f_core_mhz": self.f_core_mhz, "time_ms": round(self.time_ms, 6),
            "time_ms_low": round(self.low_ms, 6), "time_ms_high": round(self.high_ms, 6),
            "resources_ms": {k: round(v, 6) for k, v in self.resources_ms.items()},
            "overhead_ms": round(self.overhead_ms, 6), "bound": self.bound,
            "dram_wait_ms": round(self.dram_wait_ms, 6), "memory_share": round(self.memory_share, 4),
        }


def busiest_sm(work: LaunchWork, figures: GpuFigures) -> tuple[int, float]:
    """The CTAs on the busiest SM (CTAs spread evenly) and its share of the launch's CTAs."""
    ctas = max(work.ctas, 1)
    on_busiest = math.ceil(ctas / figures.sms)
    return on_busiest, on_busiest / ctas


def core_cycles(work: LaunchWork, figures: GpuFigures, params: BottleneckParameters) -> tuple[float, float]:
    """The busiest SM's core clocks (its throughput or, with few warps, the rounds of resident CTAs times one
    warp's dependent path), and of them the clocks its warps wait for DRAM beyond an L2 hit (none unless the
    path bounds it)."""
    on_busiest, share = busiest_sm(work, figures)
    rounds = math.ceil(on_busiest / max(1, work.resident_ctas))
    scale = {"alu": params.alu_scale, "xu": params.xu_scale, "tensor": params.tensor_scale}
    unrolled = 1.0 - 1.0 / params.loop_unroll  # the share of the loop control that unrolling removes
    loop = work.loop_control
    pipes = [(v - unrolled * loop.get(k, 0.0)) * scale.get(k, 1.0) for k, v in work.pipe_cycles.items()]
    compute = max([issue_cycles(work, params), *pipes])
    waits = {"issue": 1.0, "arithmetic": params.latency_scale, "memory": params.memory_latency_scale,
             "dram": params.memory_latency_scale, "special": params.special_latency_scale,
             "control": params.control_latency_scale, "loop_issue": 1.0 / params.loop_unroll,
             "loop_control": params.control_latency_scale / params.loop_unroll}
    path = rounds * sum(v * waits.get(k, 1.0) for k, v in work.path_cycles.items())
    if path <= share * compute:
        return share * compute, 0.0
    return path, rounds * work.path_cycles.get("dram", 0.0) * waits["dram"]


def resource_times(work: LaunchWork, figures: GpuFigures, f_mem_mhz: float, f_core_mhz: float,
                   params: BottleneckParameters, which: str = "value") -> dict[str, float]:
    """Seconds each resource needs (module docstring); ``which`` picks the traffic's ``value``, ``low`` or
    ``high``."""
    clock = f_core_mhz * 1e6
    share = busiest_sm(work, figures)[1]
    core = core_cycles(work, figures, params)[0] / clock
    out = {"core": core, "dram": 0.0, "l2": 0.0, "l1": 0.0}
    t = work.traffic
    if t is not None:
        pick = lambda e: getattr(e, which)  # noqa: E731
        out["dram"] = pick(t.steady_dram_bytes) / (figures.bandwidth(f_mem_mhz) * params.dram_share)
        out["l2"] = sum(l2_times(t, figures, f_core_mhz, params, which))
        out["l1"] = share * (pick(t.l1_sectors) / params.l1_sectors_per_clock
                             + pick(t.shared_wavefronts) / params.shared_wavefronts_per_clock
                             + pick(t.constant_replays) / params.constant_addresses_per_clock) / clock
    else:
        out["dram"] = work.offchip_bytes / (figures.bandwidth(f_mem_mhz) * params.dram_share)
    return out


def l2_times(traffic: LaunchTraffic, figures: GpuFigures, f_core_mhz: float, params: BottleneckParameters,
             which: str = "value") -> tuple[float, float]:
    """Seconds the L2 needs to move the launch's sectors (read, written, and written in part) and, apart, its
    slices' atomic units to do its atomics one request after another (module docstring)."""
    pick = lambda e: getattr(e, which)  # noqa: E731
    clock = f_core_mhz * 1e6
    slices = figures.l2_bytes / params.l2_bytes_per_slice
    atomic_rate = params.l2_atomic_sectors_per_slice_clock * busy_slices(traffic.l2_atomic_lines, slices)
    data = ((pick(traffic.l2_read_sectors) + pick(traffic.l2_write_sectors)) * SECTOR / params.l2_bytes_per_clock
            + pick(traffic.l2_partial_write_sectors) * SECTOR / params.l2_partial_write_bytes_per_clock)
    return data / clock, pick(traffic.l2_atomic_sectors) / atomic_rate / clock


def issue_cycles(work: LaunchWork, params: BottleneckParameters) -> float:
    """The schedulers' clocks, summed over SMs: a slot per instruction of the FMA pipe (fp32 and fp16
    arithmetic map one to one onto machine instructions), ``issue_scale`` slots per other instruction, once
    ptxas has unrolled one-block loops (their loop control runs once every ``loop_unroll`` trips)."""
    unrolled = 1.0 - 1.0 / params.loop_unroll
    loop = work.loop_control
    fma = work.fma_issue_cycles - unrolled * loop.get("fma_issue", 0.0)
    return fma + params.issue_scale * (work.issue_cycles - unrolled * loop.get("issue", 0.0) - fma)


def combine(times: dict[str, float], p: float) -> float:
    """The p-norm of the resources' times (computed on ratios to the largest, so large p cannot overflow)."""
    top = max(times.values())
    if top <= 0:
        return 0.0
    return top * sum((v / top) ** p for v in times.values()) ** (1.0 / p)


def launch_seconds(times: dict[str, float], params: BottleneckParameters) -> float:
    """The launch's modelled time from its resources' times: their ``overlap``-norm plus the launch overhead."""
    return combine(times, params.overlap) + params.overhead_us * 1e-6


def launch_time(work: LaunchWork, figures: GpuFigures, f_mem_mhz: float, f_core_mhz: float,
                params: BottleneckParameters = DEFAULT_PARAMETERS) -> TimeEstimate:
    """The estimate of ``work`` on ``figures``'s GPU at the given clocks, with its interval."""
    overhead = params.overhead_us * 1e-6
    times = resource_times(work, figures, f_mem_mhz, f_core_mhz, params)
    low = combine(resource_times(work, figures, f_mem_mhz, f_core_mhz, params, "low"), params.overlap)
    high = combine(resource_times(work, figures, f_mem_mhz, f_core_mhz, params, "high"), params.overlap)
    which = params.fitted_on or f"default parameters (the H200's fit), not fitted on {figures.name}"
    waits = core_cycles(work, figures, params)[1] / (f_core_mhz * 1e6)
    return TimeEstimate(figures.name, f_mem_mhz, f_core_mhz, launch_seconds(times, params) * 1e3,
                        (low * params.error_low + overhead) * 1e3, (high * params.error_high + overhead) * 1e3,
                        {k: v * 1e3 for k, v in times.items()}, overhead * 1e3, which, waits * 1e3)
