"""Time, power and energy of one prepared launch: warm-up, repeats until power is steady, a trace of the board.

Once per run, :func:`probe` runs the first kernel while reading the board every :data:`TRACE_INTERVAL_S`
and measures how often the energy counter updates and how long the power reading takes to follow a new
kernel (:mod:`ptxstatic.collect.power`); :class:`BoardTiming` sizes every sample from that.

Per sample (:func:`measure`), with the board traced throughout: a short warm-up of growing chunks gives the
time per launch; then *repeats*, back-to-back timed loops of :meth:`BoardTiming.repeat_seconds` each (long
enough for the counter to update several times and for the readings' spacing to be within half the
precision), until the last :data:`REPEATS` agree on power within the precision or
``REPEATS + EXTRA_REPEATS`` have run. Repeats before those are the power warm-up. Each repeat is split into
up to :data:`REPEAT_CHUNKS` chunks timed by CUDA events; chunks further than ``MAD_K`` scaled median absolute
deviations from the median are outliers and the time per launch is the mean of the rest.

The power a sample keeps, in order of trust: the energy counter between its updates inside each kept repeat
(its error is the trace's spacing over the span); the counter's first and last readings in the kept repeats
(when it updates too seldom to give two updates per repeat: error up to one update); the board's power
readings taken at least the averaging window after the kernel started (no energy counter). The readings
are a cross-check of the counter otherwise. The sample says which it kept and why (:attr:`Timing.trust`).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

from ptxstatic.collect.power import (
    CounterPower,
    averaging_window,
    combined,
    counter_at_ends,
    counter_edges,
    counter_power,
    sampled_power,
    spread,
    update_period,
)
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import LIMITING, Board, Gpu, Telemetry, throttle_names

WARMUP_FRACTION = 0.02  # of min_seconds, the length of the warm-up chunk that gives the time per launch
REPEATS = 3  # repeats kept per sample
EXTRA_REPEATS = 4  # more repeats a sample may run while its power is not steady
REPEAT_CHUNKS = 16  # timed chunks per repeat
MIN_LAUNCHES = 5  # per repeat
MAD_K = 3.5  # outliers: farther than MAD_K * 1.4826 * MAD from the median
POWER_PRECISION = 0.02  # default: repeats agree within this fraction, and the counter's timing within half of it
TRACE_INTERVAL_S = 0.001  # seconds between readings of the energy counter
PROBE_SLICE_S = 0.1  # the probe's loops
PROBE_MAX_S = 3.0
PROBE_UPDATES = 8  # counter updates the probe waits for
FLAT = 0.02  # the probe's power reading has settled when its last third stays within this fraction
CROSS_CHECK = 0.15  # warn when the readings and the counter's power differ by more than this fraction


def mad_keep(values: list[float], k: float = MAD_K) -> list[bool]:
    """Which values are inliers by the median-absolute-deviation rule (all, when fewer than three)."""
    if len(values) < 3:
        return [True] * len(values)
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    limit = k * 1.4826 * mad
    return [abs(v - med) <= limit for v in values]


def repeat_plan(per_launch_s: float, seconds: float) -> tuple[int, int]:
    """(chunks, launches per chunk) covering at least ``seconds`` and ``MIN_LAUNCHES`` launches."""
    launches = max(MIN_LAUNCHES, math.ceil(seconds / max(per_launch_s, 1e-9)))
    chunks = min(REPEAT_CHUNKS, launches)
    return chunks, math.ceil(launches / chunks)


@dataclass(frozen=True)
class BoardTiming:
    """What :func:`probe` measured of the board."""

    interval_s: float  # the trace's spacing
    counter: bool  # the board has an energy counter
    period_s: float | None  # its update period (None: no counter, or it updated too seldom to tell)
    window_s: float | None  # the power reading's averaging window (None: not observed)
    updates_seen: int  # counter updates the probe saw

    @property
    def continuous(self) -> bool:
        """The counter updates at least as often as the trace reads it."""
        return self.period_s is not None and self.period_s < 1.5 * self.interval_s

    def repeat_seconds(self, min_seconds: float, precision: float) -> float:
        """One repeat: a share of ``min_seconds``, at least three counter periods, and long enough that the
        span between its first and last update (two periods shorter at worst) holds the timing error of the
        readings within half the precision."""
        seconds = min_seconds / REPEATS
        if self.period_s is not None:
            seconds = max(seconds, 3 * self.period_s, 2 * self.period_s + 2 * self.interval_s / precision)
        return seconds

    def to_dict(self) -> dict:
        return {"trace_interval_s": self.interval_s, "energy_counter": self.counter,
                "counter_period_s": self.period_s, "power_window_s": self.window_s,
                "counter_updates_seen": self.updates_seen}


def board_words(board: dict) -> str:
    """What :meth:`BoardTiming.to_dict` says, in words."""
    period, window = board["counter_period_s"], board["power_window_s"]
    counter = ("no energy counter" if not board["energy_counter"] else
               f"energy counter updates every {period:.3f} s" if period is not None else
               f"energy counter updated only {board['counter_updates_seen']} times in the probe")
    return counter + (f"; power readings average over about {window:.2f} s" if window is not None else
                      "; the power readings' averaging window was not observed")


def _flat(readings: list[Telemetry], start: float, now: float) -> bool:
    """The power readings of the last third since ``start`` stay within :data:`FLAT` of their median."""
    tail = [r.power_w for r in readings if r.power_w is not None and r.t >= now - (now - start) / 3]
    if not tail:
        return True
    mid = statistics.median(tail)
    return all(abs(p - mid) <= FLAT * mid for p in tail)


@dataclass
class Repeat:
    """One timed loop: its start and end on the board's clock, and its chunks."""

    a: float
    b: float
    times_ms: list[float]
    per_chunk: int


@dataclass
class _Loops:
    """The timed loops of one sample, with the wall time they took."""

    gpu: Gpu
    board: Board
    prepared: int
    wall_s: float = 0.0
    board_s: float = 0.0

    def run(self, chunks: int, per_chunk: int) -> Repeat:
        a, w = self.board.now(), time.monotonic()
        times = self.gpu.time(self.prepared, chunks, per_chunk)
        self.wall_s += time.monotonic() - w
        b = self.board.now()
        self.board_s += b - a
        return Repeat(a, b, times, per_chunk)


def warm_up(loops: _Loops, hint_repeats: int, min_seconds: float) -> float:
    """Seconds per launch, from a first launch and then chunks grown until one lasts long enough."""
    target = WARMUP_FRACTION * min_seconds
    loops.run(1, 1)
    n = max(1, round(hint_repeats * WARMUP_FRACTION)) if hint_repeats else 1
    for _ in range(8):
        seconds = loops.run(1, n).times_ms[0] / 1e3
        if seconds >= target / 2 or n >= 1 << 24:
            break
        n = min(1 << 24, max(2 * n, math.ceil(n * target / max(seconds, 1e-9))))
    return seconds / n


def probe(gpu: Gpu, board: Board, prepared: int, hint_repeats: int, min_seconds: float,
          interval_s: float = TRACE_INTERVAL_S) -> BoardTiming:
    """Warm the kernel up, then run it in slices of :data:`PROBE_SLICE_S`, reading the board every
    ``interval_s``, until the counter has updated :data:`PROBE_UPDATES` times and the power reading has
    settled, or :data:`PROBE_MAX_S`: the counter's update period and the reading's averaging window."""
    loops = _Loops(gpu, board, prepared)
    board.start_trace(interval_s)
    try:
        start = board.now()
        n = max(1, math.ceil(PROBE_SLICE_S / max(warm_up(loops, hint_repeats, min_seconds), 1e-9)))
        while True:
            loops.run(1, n)
            readings, now = board.trace(), board.now()
            counter = any(r.energy_mj is not None for r in readings)
            if now - start >= PROBE_MAX_S or (_flat(readings, start, now) and now - start >= 3 * PROBE_SLICE_S
                                              and (not counter or len(counter_edges(readings)) >= PROBE_UPDATES)):
                break
    finally:
        readings = board.stop_trace()
    edges = counter_edges(readings)
    return BoardTiming(interval_s, counter, update_period(edges), averaging_window(readings, start), len(edges))


@dataclass
class Timing:
    """The outcome of one measured sample."""

    time_ms: float  # per launch: mean of the inlier chunks of the kept repeats
    median_ms: float
    mad_ms: float
    launches: int  # in the kept repeats
    chunks: int
    kept: int
    loop_s: float  # the kept repeats' length on the board's clock
    energy_mj: float  # over the kept repeats
    power_w: float
    power_source: str  # "energy-counter" or "sampled"
    sampled_power_w: float | None  # mean of the board's power readings taken after its averaging window
    power_samples: int
    power_spread: float | None  # relative standard deviation of those readings
    repeats: int  # kept
    repeat_spread: float | None  # (max - min) / mean of the kept repeats' power
    steady: bool  # the kept repeats agree within the precision
    warmup_s: float  # board seconds before the kept repeats (kernel and power warm-up)
    resolution: float | None  # relative bound on the kept power's error from the counter's timing
    counter_updates: int | None  # counter updates the kept power spans
    trust: str  # which power reading is kept, and why
    measured_s: float  # board seconds of every timed loop of the sample
    loop_wall_s: float  # wall seconds the device spent in them
    telemetry: list[Telemetry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def energy_per_launch_mj(self) -> float:
        return self.power_w * self.time_ms


def _judged(readings: list[Telemetry], repeats: list[Repeat], timing: BoardTiming, valid_from: float
            ) -> list[float | None]:
    """Each repeat's power as steadiness is judged: the counter between its updates where the period is known,
    else the mean of the power readings taken after ``valid_from``."""
    if timing.counter and timing.period_s is not None:
        edges = counter_edges(readings, timing.continuous)
        parts = [counter_power(edges, r.a, r.b) for r in repeats]
        return [p.watts if p else None for p in parts]
    means = [sampled_power(readings, max(r.a, valid_from), r.b) for r in repeats]
    return [sum(m) / len(m) if m else None for m in means]


def _agree(powers: list[float | None], precision: float) -> float | None:
    """The spread of the last :data:`REPEATS` powers, None when one is missing or there are fewer."""
    last = powers[-REPEATS:]
    if len(last) < REPEATS or any(p is None for p in last):
        return None
    return spread(last)  # type: ignore[arg-type]


def measure(gpu: Gpu, board: Board, prepared: int, hint_repeats: int, min_seconds: float, timing: BoardTiming,
            precision: float = POWER_PRECISION, deadline: float | None = None) -> Timing:
    """Warm up, then repeat timed loops until their power agrees (module docstring). ``deadline``
    (``time.monotonic()``) ends the extra repeats early."""
    loops = _Loops(gpu, board, prepared)
    board.start_trace(timing.interval_s)
    try:
        start = board.now()
        valid_from = start + (timing.window_s or 0.0)
        chunks, per_chunk = repeat_plan(warm_up(loops, hint_repeats, min_seconds),
                                        timing.repeat_seconds(min_seconds, precision))
        repeats: list[Repeat] = []
        while True:
            repeats.append(loops.run(chunks, per_chunk))
            agreed = _agree(_judged(board.trace(), repeats, timing, valid_from), precision)
            if len(repeats) >= REPEATS and (
                    (agreed is not None and agreed <= precision) or len(repeats) >= REPEATS + EXTRA_REPEATS
                    or (deadline is not None and time.monotonic() + loops.wall_s / len(repeats) > deadline)):
                break
    finally:
        readings = board.stop_trace()
    return _reduce(readings, repeats, start, timing, precision, loops)


def _kept_power(readings: list[Telemetry], kept: list[Repeat], timing: BoardTiming
                ) -> tuple[float, str, float | None, int | None, str] | None:
    """(watts, source, resolution, updates, how) from the energy counter, None without one that moved."""
    if not timing.counter:
        return None
    edges = counter_edges(readings, timing.continuous)
    parts = [counter_power(edges, r.a, r.b) for r in kept] if timing.period_s is not None else []
    if parts and all(parts):
        c: CounterPower = combined(parts)  # type: ignore[arg-type]
        return (c.watts, "energy-counter", c.resolution, c.updates,
                f"energy counter between its updates: {c.updates} updates over {c.span_s:.3f} s "
                f"(update period {timing.period_s:.3f} s), timing within {c.resolution:.2%}")
    ends = counter_at_ends(readings, kept[0].a, kept[-1].b)
    if ends is None:
        return None
    period = f"{timing.period_s:.3f} s" if timing.period_s is not None else "unknown"
    return (ends[0], "energy-counter", timing.period_s / ends[1] if timing.period_s else None, None,
            f"energy counter at the repeats' ends, off by up to one update (period {period}): it updated fewer "
            "than twice within a repeat")


def _reduce(readings: list[Telemetry], repeats: list[Repeat], start: float, timing: BoardTiming, precision: float,
            loops: _Loops) -> Timing:
    """The sample from its repeats and its trace."""
    kept = repeats[-REPEATS:]
    a, b = kept[0].a, kept[-1].b
    per = [t / r.per_chunk for r in kept for t in r.times_ms]
    keep = mad_keep(per)
    inliers = [t for t, k in zip(per, keep) if k]
    med = statistics.median(per)
    mad = statistics.median(abs(t - med) for t in per)
    valid_from = start + (timing.window_s or 0.0)
    powers = sampled_power(readings, max(a, valid_from), b)
    sampled = sum(powers) / len(powers) if powers else None
    judged = _judged(readings, kept, timing, valid_from)
    repeat_spread = _agree(judged, precision)
    steady = repeat_spread is not None and repeat_spread <= precision
    warnings: list[str] = []
    counter = _kept_power(readings, kept, timing)
    if counter is not None:
        power, source, resolution, updates, how = counter
        if sampled is not None and abs(sampled / power - 1) > CROSS_CHECK:
            warnings.append(f"power readings {sampled:.1f} W differ from the energy counter's {power:.1f} W by more "
                            f"than {CROSS_CHECK:.0%}")
    elif sampled is not None:
        power, source, resolution, updates = sampled, "sampled", None, None
        how = (f"the board's power readings after its {timing.window_s:.2f} s averaging window"
               if timing.window_s else "the board's power readings (averaging window not observed)")
        warnings.append("no energy-counter reading for this loop: power is the mean of the board's power readings")
    else:
        raise PtxstaticError("the board reports neither an energy counter nor power readings")
    warmup = a - start
    agreement = (f"{len(kept)} repeats within {repeat_spread:.2%}" if steady else
                 f"the last {len(kept)} of {len(repeats)} repeats still differ by "
                 + (f"{repeat_spread:.2%}" if repeat_spread is not None else "an unknown amount")
                 + f" (more than {precision:.0%}): power not steady")
    if not steady:
        warnings.append(agreement)
    during = [r for r in readings if a <= r.t <= b]
    limited = conditions(during).throttle & LIMITING
    if limited:
        warnings.append(f"clocks were limited during the loop: {', '.join(throttle_names(limited))}")
    loop_s = sum(r.b - r.a for r in kept)
    return Timing(
        sum(inliers) / len(inliers), med, mad, sum(len(r.times_ms) * r.per_chunk for r in kept), len(per),
        len(inliers), loop_s, power * loop_s * 1e3, power, source, sampled, len(powers),
        statistics.pstdev(powers) / sampled if sampled and len(powers) > 1 else None, len(kept), repeat_spread,
        steady, warmup, resolution, updates, f"{how}; {agreement} after {warmup:.2f} s of warm-up",
        loops.board_s, loops.wall_s, during, warnings)


@dataclass(frozen=True)
class Conditions:
    """What the board reported during a loop: clocks, temperature, throttle reasons."""

    sm_clock_mhz: float | None
    sm_clock_min_mhz: int | None
    sm_clock_max_mhz: int | None
    mem_clock_mhz: float | None
    temperature_c: float | None
    temperature_max_c: int | None
    throttle: int


def conditions(samples: list[Telemetry]) -> Conditions:
    """Medians of the clocks, mean and maximum temperature, and every throttle reason seen."""
    sm = [s.sm_clock_mhz for s in samples if s.sm_clock_mhz is not None]
    mem = [s.mem_clock_mhz for s in samples if s.mem_clock_mhz is not None]
    temp = [s.temperature_c for s in samples if s.temperature_c is not None]
    throttle = 0
    for s in samples:
        throttle |= s.throttle
    return Conditions(
        statistics.median(sm) if sm else None, min(sm) if sm else None, max(sm) if sm else None,
        statistics.median(mem) if mem else None,
        sum(temp) / len(temp) if temp else None, max(temp) if temp else None, throttle,
    )
