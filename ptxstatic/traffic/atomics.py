"""Over how many cache lines a launch's global atomics spread, which decides how many L2 slices do them.

Every line of global memory belongs to one L2 slice (by a hash of its address), and a slice's atomic unit
does the operations on its lines one request after another: atomics that all hit one counter are done by
one slice, atomics spread over megabytes by all of them. From the sample's global atomic requests:

* the **effective number of lines**: the inverse Simpson index of the atomic sectors per 128-byte line
  (``n`` equally loaded lines count ``n``; one hot line among cold ones about 1);
* **extrapolated to the launch** by how the lines grow with the sampled CTAs: CTAs that touch lines of
  their own (``global_id % slots`` over many slots) multiply them in proportion to the launch's CTAs, CTAs
  that share lines (a histogram, one counter) not at all, and in between a power of the CTAs' ratio (the
  growth the sample shows: ``distinct lines of all sampled CTAs = mean per CTA × sampled ** e``);
* at most the lines of the buffers the atomics touch.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from ptxstatic.analysis.memory_access import SECTOR_BYTES, sectors_of
from ptxstatic.traffic.sample import LaunchSample


def atomic_lines(sample: LaunchSample, line_bytes: int, ranges: dict[str, int], launch_ctas: int) -> float:
    """The effective number of ``line_bytes`` lines the launch's global atomics spread over (module docstring;
    0 without global atomics); ``ranges``: each buffer parameter's bytes, ``launch_ctas``: the grid's CTAs."""
    per_cta: dict[int, Counter] = defaultdict(Counter)
    buffers: set[str | None] = set()
    for r in sample.requests:
        if r.kind != "atomic" or r.space != "global":
            continue
        per_cta[r.cta].update((sectors_of(r.addresses, r.width) * SECTOR_BYTES // line_bytes).tolist())
        buffers.add(sample.buffer_of(int(r.addresses[0]), ranges))
    if not per_cta:
        return 0.0
    total: Counter = Counter()
    for lines in per_cta.values():
        total.update(lines)
    loads = np.array(list(total.values()), dtype=float)
    effective = float(loads.sum() ** 2 / (loads ** 2).sum())
    sampled = len(per_cta)
    exponent = 1.0  # of the CTAs ratio: 1 when each sampled CTA has lines of its own, 0 when they share them
    if sampled > 1:
        mean_distinct = sum(len(c) for c in per_cta.values()) / sampled
        exponent = math.log(max(1.0, len(total) / mean_distinct)) / math.log(sampled)
    lines = effective * (max(launch_ctas, sampled) / sampled) ** exponent
    if None not in buffers:
        lines = min(lines, sum(-(-ranges[b] // line_bytes) for b in buffers))
    return max(1.0, lines)


def busy_slices(lines: float, slices: float) -> float:
    """How many of ``slices`` L2 slices the atomics on ``lines`` equally loaded lines keep busy at once: the
    lines over the expected load of the busiest slice when each line lands on a slice at random (Poisson
    approximation of balls in bins; for many lines per slice, the mean plus ``sqrt(2 mean ln slices)``)."""
    if lines <= 1.0:
        return 1.0
    mean = lines / slices
    if mean > 100.0:
        return lines / (mean + math.sqrt(2.0 * mean * math.log(slices)))
    k = np.arange(0, int(mean + 12.0 * math.sqrt(mean) + 30.0))
    log_factorial = np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    log_pmf = k * math.log(mean) - mean - log_factorial
    cdf = np.minimum(np.cumsum(np.exp(log_pmf)), 1.0)
    busiest = float(np.sum(1.0 - cdf ** slices))
    return lines / max(1.0, busiest)
