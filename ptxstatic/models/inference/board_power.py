"""Board power of one launch from its work, its traffic and its estimated time (numpy only).

A board draws its idle power plus, for each of its units, an energy per unit of work: power is
``idle_w`` plus, for each *activity*, its weight (watts at full use) times the activity. An activity is the
fraction of the launch's time a unit is in use, from the same work, traffic and resource times that the
bottleneck time model (:mod:`ptxstatic.models.inference.bottleneck`) computes, the launch's time being that
model's (its resources' overlapped times plus the launch overhead):

* ``issue`` and one per pipe (``alu``, ``fma``, ``fp64``, ``xu``, ...): the busiest SM's scheduler or pipe
  clocks over the launch's time, times the share of SMs the grid occupies (a grid of 13 CTAs on 132 SMs
  leaves nine SMs in ten idle);
* ``dram``, ``l2``, ``l1``: each memory level's time over the launch's time; the L2's is the time it moves
  sectors, not the time its atomic units serialise atomics (atomics on a few lines keep one slice's atomic
  unit busy while the rest of the chip waits: measured on the H200, such launches draw within 20 W of the
  least any launch drew);

all capped at 1. The weights are non-negative and fitted on a GPU's measured board power at its default
clocks (``trained/<gpu>/power``, the card saying on what and how well); the interval is the spread of the
fit's errors on benchmark families it was not fitted on. Power follows the time model: where that model is
far off, the power is too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ptxstatic.features.work import LaunchWork
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.models.inference.bottleneck import (
    BottleneckParameters,
    busiest_sm,
    l2_times,
    launch_seconds,
    resource_times,
)

MODEL = "activity power"
#: the memory levels' activities (the core's are ``issue`` and the work's pipes)
MEMORY_LEVELS = ("dram", "l2", "l1")


@dataclass(frozen=True)
class PowerParameters:
    idle_w: float  # the board's power with no activity (fitted: what the activities do not explain)
    weights: dict[str, float]  # watts at full use of each activity
    error_low: float = 0.8  # multiplicative interval of the fit's errors on held-out families (90 %)
    error_high: float = 1.25
    fitted_on: str = ""
    activities: tuple[str, ...] = field(default=())  # the activities the fit saw, in its order

    def to_dict(self) -> dict:
        d = asdict(self)
        d["activities"] = list(self.activities)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> PowerParameters:
        return cls(float(d["idle_w"]), {str(k): float(v) for k, v in d["weights"].items()},
                   float(d["error_low"]), float(d["error_high"]), str(d.get("fitted_on", "")),
                   tuple(str(a) for a in d.get("activities", d["weights"])))


@dataclass(frozen=True)
class PowerEstimate:
    power_w: float
    low_w: float
    high_w: float
    activities: dict[str, float]
    parameters: str

    def to_dict(self) -> dict:
        return {"power_model": MODEL, "power_parameters": self.parameters, "power_w": round(self.power_w, 2),
                "power_w_low": round(self.low_w, 2), "power_w_high": round(self.high_w, 2),
                "activities": {k: round(v, 4) for k, v in self.activities.items()}}


def activities(work: LaunchWork, figures: GpuFigures, f_mem_mhz: float, f_core_mhz: float,
               params: BottleneckParameters) -> dict[str, float]:
    """Each unit's fraction of the launch's time in use (module docstring)."""
    times = resource_times(work, figures, f_mem_mhz, f_core_mhz, params)
    busy = launch_seconds(times, params)
    _, share = busiest_sm(work, figures)
    occupied = min(1.0, max(work.ctas, 1) / figures.sms)
    core_busy = share / (f_core_mhz * 1e6) * occupied
    out = {"issue": work.issue_cycles * core_busy}
    out.update({pipe: cycles * core_busy for pipe, cycles in sorted(work.pipe_cycles.items())})
    out.update({level: times[level] for level in MEMORY_LEVELS})
    if work.traffic is not None:
        out["l2"] = l2_times(work.traffic, figures, f_core_mhz, params)[0]
    return {k: min(1.0, v / busy) if busy > 0 else 0.0 for k, v in out.items()}


def launch_power(work: LaunchWork, figures: GpuFigures, f_mem_mhz: float, f_core_mhz: float,
                 time_params: BottleneckParameters, params: PowerParameters) -> PowerEstimate:
    """The board power while ``work`` runs at the given clocks, with its interval."""
    act = activities(work, figures, f_mem_mhz, f_core_mhz, time_params)
    power = params.idle_w + sum(w * act.get(k, 0.0) for k, w in params.weights.items())
    return PowerEstimate(power, power * params.error_low, power * params.error_high, act,
                         params.fitted_on or "unfitted")
