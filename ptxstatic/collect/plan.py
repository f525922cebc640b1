"""The order of a run's samples and, under ``collect --budget``, how many of them still fit.

Order: clock setting by clock setting, and within one the launches round by round, so that coverage spreads
before launches repeat (:func:`ptxstatic.collect.counters.ordered_tasks`: the middle launch of every
benchmark first, benchmarks of different source files, the families, interleaved).

Budget: nothing about a sample's cost is guessed. A sample costs its measuring (the board seconds it asks
for, stretched by what warm-ups and extra repeats added so far, at the wall-clock pace the device's loops
have kept) plus its overhead: every other second the run spent on it (loading, buffers, the instrumented
run, features, the transaction), as measured on the samples before it. The first sample runs when its
measuring fits; after that a sample starts only when the high (90th percentile) estimate of its cost and
:data:`~ptxstatic.limits.BUDGET_RESERVE_S` for closing still fit before the deadline.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from ptxstatic.collect.clock_settings import Pair, setting_name
from ptxstatic.collect.counters import ordered_tasks
from ptxstatic.collect.manifest import BenchSpec, LaunchSpec
from ptxstatic.limits import BUDGET_RESERVE_S

Task = tuple[Pair | None, BenchSpec, int, LaunchSpec]


def ordered(pairs: list[Pair | None], benches: list[BenchSpec], done: set[tuple[str, str, str]]) -> list[Task]:
    """The samples not in ``done`` ((benchmark, launch, setting) already recorded), in measuring order."""
    order = ordered_tasks(benches)
    return [(pair, t.bench, t.bench.launches.index(t.spec), t.spec) for pair in pairs for t in order
            if (t.bench.name, t.spec.key, setting_name(pair)) not in done]


def _high(values: list[float]) -> float:
    """The 90th percentile (the largest of fewer than ten)."""
    if len(values) < 10:
        return max(values)
    return statistics.quantiles(values, n=10)[-1]


@dataclass
class Budget:
    """A run's time limit and what its samples have cost so far."""

    seconds: float
    started: float = field(default_factory=time.monotonic)
    overheads: list[float] = field(default_factory=list)  # per sample: wall seconds beyond the device's loops
    loop_wall_s: float = 0.0  # wall seconds of the device's timed loops
    measured_s: float = 0.0  # board seconds of those loops
    nominal_s: float = 0.0  # what the samples asked for

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def record(self, wall_s: float, loop_wall_s: float, measured_s: float, nominal_s: float) -> None:
        """One sample's cost: its wall time, the part of it in timed loops, their board seconds, what it asked."""
        self.overheads.append(max(0.0, wall_s - loop_wall_s))
        self.loop_wall_s += loop_wall_s
        self.measured_s += measured_s
        self.nominal_s += nominal_s

    def estimate(self, nominal_s: float) -> float:
        """High estimate of the wall seconds a sample asking for ``nominal_s`` of measuring takes."""
        stretch = self.measured_s / self.nominal_s if self.nominal_s else 1.0
        pace = self.loop_wall_s / self.measured_s if self.measured_s else 1.0
        return nominal_s * stretch * pace + (_high(self.overheads) if self.overheads else 0.0)

    def fits(self, nominal_s: float) -> bool:
        return self.estimate(nominal_s) + BUDGET_RESERVE_S <= self.left()

    def overhead(self) -> dict[str, float] | None:
        """Median and high per-sample overhead measured so far."""
        if not self.overheads:
            return None
        return {"median_s": statistics.median(self.overheads), "high_s": _high(self.overheads)}

    def outlook(self, remaining: list[float]) -> str:
        """How many of the samples left (their nominal seconds, in order) fit in the time left, in words."""
        left, fit = self.left() - BUDGET_RESERVE_S, 0
        for nominal in remaining:
            left -= self.estimate(nominal)
            if left < 0:
                break
            fit += 1
        o = self.overhead() or {"median_s": 0.0, "high_s": 0.0}
        return (f"per-sample overhead measured: median {o['median_s']:.2f} s, high {o['high_s']:.2f} s; "
                f"{fit} of the {len(remaining)} samples left fit in the {self.left():.0f} s left")
