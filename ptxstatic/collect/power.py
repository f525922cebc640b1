"""Board power from a trace of readings: the energy counter's updates, its update period, the power reading's
averaging window, and the power of a loop to a stated precision.

A board's energy counter does not count continuously: it changes every *update period* (about 100 ms on
recent NVIDIA boards), and a reading taken between updates still holds the last update's value. Reading it
just before and just after a loop, as a stopwatch would, is wrong by up to one update's energy at each end,
which for a short loop is tens of percent. A trace reads the counter every millisecond or so; an *edge* is a
reading whose value differs from the reading before, so the update happened between the two readings. The
energy between two edges over the time between them is the power between two updates, and its error is the
readings' spacing, not the update period (:func:`counter_power`).

The board's power reading (NVML's power usage) is a mean over an *averaging window*: for that long after a
kernel starts it still holds the power of whatever ran before. :func:`averaging_window` measures it from the
step response when a kernel starts on a board that drew clearly less before.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

from ptxstatic.gpu.device import Telemetry

#: a step in the power reading smaller than this fraction of the new level cannot show the averaging window
WINDOW_STEP = 0.05
#: the power reading has settled when it stays within this fraction of the step from its final value
SETTLED = 0.1


@dataclass(frozen=True)
class Edge:
    """One update of the energy counter, as a trace saw it."""

    t: float  # when it happened, best estimate: midway between the reading before and the reading that saw it
    half_gap: float  # how far from ``t`` it can have happened
    energy_mj: float  # the counter after the update


def counter_edges(readings: list[Telemetry], continuous: bool = False) -> list[Edge]:
    """The counter's updates in a trace, oldest first (none without an energy counter). ``continuous``: the
    counter updates at least as often as the trace reads it, so each reading's value is the energy at its time."""
    edges: list[Edge] = []
    prev: Telemetry | None = None
    for r in readings:
        if r.energy_mj is None:
            continue
        if prev is not None and r.energy_mj != prev.energy_mj:
            edges.append(Edge(r.t, 0.0, r.energy_mj) if continuous else
                          Edge((prev.t + r.t) / 2, (r.t - prev.t) / 2, r.energy_mj))
        prev = r
    return edges


def update_period(edges: list[Edge]) -> float | None:
    """The counter's update period: the median spacing of its updates (None with fewer than three)."""
    if len(edges) < 3:
        return None
    return statistics.median(b.t - a.t for a, b in itertools.pairwise(edges))


def averaging_window(readings: list[Telemetry], start: float) -> float | None:
    """Seconds the board's power reading takes to follow a kernel that started at ``start``, taken as the window
    of a moving mean (which reaches 1 - :data:`SETTLED` of a step at that fraction of its window); None when the
    reading moved by less than :data:`WINDOW_STEP` (nothing to see) or never settled."""
    powered = [r for r in readings if r.power_w is not None and r.t >= start]
    if len(powered) < 3:
        return None
    first = powered[0].power_w
    tail = powered[-max(1, len(powered) // 5):]
    final = statistics.median(r.power_w for r in tail)  # type: ignore[misc]
    step = abs(final - first)  # type: ignore[operator]
    if step < WINDOW_STEP * abs(final):
        return None
    settled = None
    for r in reversed(powered):
        if abs(r.power_w - final) > SETTLED * step:  # type: ignore[operator]
            break
        settled = r.t
    if settled is None or settled <= start or settled >= powered[-1].t:
        return None
    return (settled - start) / (1 - SETTLED)


@dataclass(frozen=True)
class CounterPower:
    """Power between the counter's first and last update inside a loop."""

    watts: float
    span_s: float  # between those updates
    updates: int  # update intervals spanned
    resolution: float  # relative bound on the error from when the updates were seen
    energy_mj: float  # between those updates


def counter_power(edges: list[Edge], a: float, b: float) -> CounterPower | None:
    """Power from the updates that surely happened within ``[a, b]``; None with fewer than two of them."""
    inside = [e for e in edges if e.t - e.half_gap >= a and e.t + e.half_gap <= b]
    if len(inside) < 2 or inside[-1].t <= inside[0].t:
        return None
    first, last = inside[0], inside[-1]
    span = last.t - first.t
    energy = last.energy_mj - first.energy_mj
    return CounterPower(energy / 1e3 / span, span, len(inside) - 1, (first.half_gap + last.half_gap) / span, energy)


def combined(parts: list[CounterPower]) -> CounterPower:
    """Several loops' counter power as one: energy over time, the resolution of the sum."""
    span = sum(p.span_s for p in parts)
    energy = sum(p.energy_mj for p in parts)
    error = sum(p.resolution * p.span_s for p in parts)
    return CounterPower(energy / 1e3 / span, span, sum(p.updates for p in parts), error / span, energy)


def counter_at_ends(readings: list[Telemetry], a: float, b: float) -> tuple[float, float] | None:
    """(watts, seconds) from the first and last counter readings within ``[a, b]``, updates or not."""
    inside = [r for r in readings if r.energy_mj is not None and a <= r.t <= b]
    if len(inside) < 2 or inside[-1].t <= inside[0].t or inside[-1].energy_mj == inside[0].energy_mj:
        return None
    span = inside[-1].t - inside[0].t
    return (inside[-1].energy_mj - inside[0].energy_mj) / 1e3 / span, span  # type: ignore[operator]


def sampled_power(readings: list[Telemetry], a: float, b: float) -> list[float]:
    """The board's power readings taken within ``[a, b]``."""
    return [r.power_w for r in readings if r.power_w is not None and a <= r.t <= b]


def spread(values: list[float]) -> float:
    """(max - min) / mean: how far apart repeated readings are (0 for one)."""
    mean = sum(values) / len(values)
    return (max(values) - min(values)) / mean if mean else math.inf
