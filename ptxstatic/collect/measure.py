"""Time, power and energy of one prepared launch: warm-up, a repeat loop of at least ``min_seconds``, events.

The warm-up launches once, then times growing chunks until one lasts ``WARMUP_FRACTION`` of the sample,
which gives the time per launch and so the repeat count. The repeat loop is split into up to ``MAX_CHUNKS``
chunks, each timed by a pair of CUDA events; chunks further than ``MAD_K`` scaled median absolute deviations
from the median are dropped as outliers and the time per launch is the mean of the rest. The board's
total-energy counter is read just before and after the loop: power = energy / loop time on the board's
clock. A thread samples power, clocks, temperature and throttle reasons during the loop; the sampled mean
power is kept as a cross-check, and stands in for the energy counter where the board has none.
"""

from __future__ import annotations

import math
import statistics
import threading
from dataclasses import dataclass, field

from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import LIMITING, Board, Gpu, Telemetry, throttle_names

WARMUP_FRACTION = 0.1  # of min_seconds, the length of the warm-up chunk that sets the repeat count
MAX_CHUNKS = 50
MIN_LAUNCHES = 5
MAD_K = 3.5  # outliers: farther than MAD_K * 1.4826 * MAD from the median
SAMPLE_INTERVAL_S = 0.02
CROSS_CHECK = 0.15  # warn when sampled and counter power differ by more than this fraction


def mad_keep(values: list[float], k: float = MAD_K) -> list[bool]:
    """Which values are inliers by the median-absolute-deviation rule (all, when fewer than three)."""
    if len(values) < 3:
        return [True] * len(values)
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    limit = k * 1.4826 * mad
    return [abs(v - med) <= limit for v in values]


def repeat_plan(per_launch_s: float, min_seconds: float) -> tuple[int, int]:
    """(chunks, launches per chunk) covering at least ``min_seconds`` and ``MIN_LAUNCHES`` launches."""
    launches = max(MIN_LAUNCHES, math.ceil(min_seconds / max(per_launch_s, 1e-9)))
    chunks = min(MAX_CHUNKS, launches)
    return chunks, math.ceil(launches / chunks)


def warm_up(gpu: Gpu, prepared: int, hint_repeats: int, min_seconds: float) -> float:
    """Seconds per launch, from a first launch and then chunks grown until one lasts long enough."""
    target = WARMUP_FRACTION * min_seconds
    gpu.time(prepared, 1, 1)
    n = max(1, round(hint_repeats * WARMUP_FRACTION)) if hint_repeats else 1
    for _ in range(8):
        seconds = gpu.time(prepared, 1, n)[0] / 1e3
        if seconds >= target / 2 or n >= 1 << 24:
            break
        n = min(1 << 24, max(2 * n, math.ceil(n * target / max(seconds, 1e-9))))
    return seconds / n


class Sampler:
    """Reads the board every ``interval`` seconds on a thread, between :meth:`start` and :meth:`stop`."""

    def __init__(self, board: Board, interval: float = SAMPLE_INTERVAL_S) -> None:
        self.board = board
        self.interval = interval
        self.samples: list[Telemetry] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ptxstatic-telemetry")

    def _loop(self) -> None:
        while True:
            self.samples.append(self.board.telemetry())
            if self._stop.wait(self.interval):
                return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> list[Telemetry]:
        self._stop.set()
        self._thread.join()
        self.samples.append(self.board.telemetry())
        return self.samples


@dataclass
class Timing:
    """The outcome of one measured repeat loop."""

    time_ms: float  # per launch: mean of the inlier chunks
    median_ms: float
    mad_ms: float
    launches: int
    chunks: int
    kept: int
    loop_s: float
    energy_mj: float | None  # over the whole loop (None without an energy counter)
    power_w: float
    power_source: str  # "energy-counter" or "sampled"
    sampled_power_w: float | None
    power_samples: int
    power_spread: float | None  # relative standard deviation of the sampled power
    telemetry: list[Telemetry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def energy_per_launch_mj(self) -> float:
        return self.power_w * self.time_ms


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def measure(gpu: Gpu, board: Board, prepared: int, hint_repeats: int, min_seconds: float) -> Timing:
    """Warm up, then time the repeat loop and measure its energy (see the module docstring)."""
    per_launch = warm_up(gpu, prepared, hint_repeats, min_seconds)
    chunks, per_chunk = repeat_plan(per_launch, min_seconds)
    sampler = Sampler(board)
    e0, t0 = board.energy_mj(), board.now()
    sampler.start()
    try:
        times = gpu.time(prepared, chunks, per_chunk)
    finally:
        samples = sampler.stop()
    t1, e1 = board.now(), board.energy_mj()
    per = [t / per_chunk for t in times]
    keep = mad_keep(per)
    kept = [t for t, k in zip(per, keep) if k]
    med = statistics.median(per)
    mad = statistics.median(abs(t - med) for t in per)
    warnings: list[str] = []
    powers = [s.power_w for s in samples if s.power_w is not None]
    sampled = _mean(powers)
    spread = statistics.pstdev(powers) / sampled if sampled and len(powers) > 1 else None
    loop_s = t1 - t0
    energy = e1 - e0 if e0 is not None and e1 is not None else None
    if energy is not None and energy > 0 and loop_s > 0:
        power, source = energy / 1e3 / loop_s, "energy-counter"
        if sampled is not None and abs(sampled / power - 1) > CROSS_CHECK:
            warnings.append(f"sampled power {sampled:.1f} W differs from the energy counter's {power:.1f} W by "
                            f"more than {CROSS_CHECK:.0%}")
    else:
        if sampled is None:
            raise PtxstaticError("the board reports neither an energy counter nor power readings")
        power, source = sampled, "sampled"
        warnings.append("no energy-counter reading for this loop: power is the mean of sampled power readings"
                        if energy is None else "the energy counter did not advance during the loop: power is "
                        "the mean of sampled power readings")
        energy = power * loop_s * 1e3
    limited = conditions(samples).throttle & LIMITING
    if limited:
        warnings.append(f"clocks were limited during the loop: {', '.join(throttle_names(limited))}")
    return Timing(sum(kept) / len(kept), med, mad, chunks * per_chunk, chunks, len(kept), loop_s, energy, power,
                  source, sampled, len(powers), spread, samples, warnings)



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
        statistics.median(mem) if mem else None, _mean([float(t) for t in temp]), max(temp) if temp else None,
        throttle,
    )
