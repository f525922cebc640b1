"""A GPU's measured launches as ``predict`` sees them: what the absolute time and board power models are fitted
on (:mod:`ptxstatic.models.training.bottleneck`, :mod:`ptxstatic.models.training.board_power`) and scored
on (:mod:`ptxstatic.models.evaluation.absolute`).

An observation is one measured launch of a manifest: its work and traffic computed as ``predict`` computes
them (the module compiled for the GPU's architecture, the launch bound, block counts from the GPU's
instrumented run where the dataset has them, else static) and its measured time, from ``collect`` datasets
(``collect_samples``, at default clocks) and from hardware-counter datasets (``collect_counters``'
durations under Nsight Compute) for launches the former lack.

Board power, where a sample has it, is used as follows:

* a sample whose power a newer ``collect`` found steady (``power_steady``) counts fully, one it did not
  counts :data:`UNRELIABLE_WEIGHT`; a sample of an older ``collect`` without that judgement counts fully
  when its two readings (the energy counter and the sampled power) agree, and
  :data:`UNRELIABLE_WEIGHT` when its warnings say they differ;
* a sample whose measuring loop was shorter than :data:`MIN_POWER_LOOP_S` is left out: the energy counter
  updates too rarely for its power to mean anything (where the sample states its power's resolution, one
  worse than :data:`MAX_POWER_RESOLUTION` is left out instead).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.block_counts import BlockCounts
from ptxstatic.collect.compile import compile_all
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.work import LaunchWork, launch_work
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic


@dataclass(frozen=True)
class Observation:
    benchmark: str
    family: str  # the manifest source file's stem
    launch: str  # canonical JSON
    time_ms: float
    source: str  # "collect" or "counters"
    exact: bool  # block counts measured on the GPU, or static and exact
    work: LaunchWork


def measured_times(collect_dbs: list[Path], counters_dbs: list[Path], gpu: str) -> dict[tuple[str, str], tuple]:
    """(benchmark, launch) -> (time ms, source, GPU block counts JSON or None): collect samples first, then
    the counters' durations for launches no sample has."""
    out: dict[tuple[str, str], tuple] = {}
    for path in collect_dbs:
        with sqlite3.connect(path) as db:
            rows = db.execute("SELECT s.benchmark, s.launch, s.time_ms, k.block_counts FROM collect_samples s "
                              "JOIN collect_kernels k ON k.benchmark = s.benchmark AND k.launch = s.launch "
                              "WHERE s.status = 'ok' AND s.gpu = ?", (gpu,)).fetchall()
        for b, launch, t, counts in rows:
            out.setdefault((b, launch), (float(t), "collect", counts))
    for path in counters_dbs:
        with sqlite3.connect(path) as db:
            rows = db.execute("SELECT benchmark, launch, metrics FROM collect_counters WHERE gpu = ?", (gpu,))
            for b, launch, metrics in rows.fetchall():
                duration = json.loads(metrics).get("gpu__time_duration.sum")
                if duration:
                    out.setdefault((b, launch), (float(duration) / 1e6, "counters", None))
    return out


def observations(manifest: Path, collect_dbs: list[Path], counters_dbs: list[Path], figures: GpuFigures,
                 progress: Callable[[str], None] = lambda s: None) -> list[Observation]:
    """Every measured launch of ``manifest`` on ``figures``'s GPU, with its work and traffic."""
    spec = load_manifest(manifest)
    times = measured_times(collect_dbs, counters_dbs, figures.name)
    benches = {b.name: b for b in spec.benchmarks}
    wanted = [(benches[b], launch) for b, launch in times if b in benches]
    sources = compile_all(sorted({b.source for b, _ in wanted}), figures.arch, spec.nvcc_flags)
    out = []
    for n, (bench, key) in enumerate(sorted(wanted, key=lambda w: (w[0].name, w[1]))):
        src = sources[bench.source]
        if isinstance(src, PtxstaticError):
            continue
        t, source, gpu_counts = times[(bench.name, key)]
        bound = bind(src.module, bench.kernel, Launch.from_dict(json.loads(key)))
        if gpu_counts is not None:
            counts, exact = BlockCounts.from_dict(json.loads(gpu_counts)), True
        else:
            est = estimate_counts(bound)
            counts, exact = est.counts, bool(est.summary()["exact"])
        traffic = launch_traffic(bound, counts.counts, figures)
        work = launch_work(src.module, counts, figures, traffic)
        out.append(Observation(bench.name, bench.source.stem, key, t, source, exact, work))
        progress(f"{n + 1}/{len(wanted)} {bench.name}")
    return out


#: weight of a sample whose power the dataset flags as unreliable
UNRELIABLE_WEIGHT = 0.5
#: shortest measuring loop whose energy-counter power is used (seconds)
MIN_POWER_LOOP_S = 0.5
#: worst relative resolution of a sample's power that is used, where the sample states it
MAX_POWER_RESOLUTION = 0.1
#: the warning an older ``collect`` wrote when its two power readings disagreed
DISAGREEMENT = "differs from the energy counter"


@dataclass(frozen=True)
class PowerObservation:
    observation: Observation
    power_w: float
    weight: float  # 1, or UNRELIABLE_WEIGHT for power the dataset flags


def _weight(row: sqlite3.Row) -> float | None:
    """The sample's weight (module docstring); None: left out."""
    keys = row.keys()
    resolution = row["power_resolution"] if "power_resolution" in keys else None
    if resolution is not None:
        if resolution > MAX_POWER_RESOLUTION:
            return None
    elif row["loop_s"] is None or row["loop_s"] < MIN_POWER_LOOP_S:
        return None
    steady = row["power_steady"] if "power_steady" in keys else None
    if steady is not None:
        return 1.0 if steady else UNRELIABLE_WEIGHT
    flagged = any(DISAGREEMENT in w for w in json.loads(row["warnings"] or "[]"))
    return UNRELIABLE_WEIGHT if flagged else 1.0


def measured_powers(collect_dbs: list[Path], gpu: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(benchmark, launch) -> (power W, weight): of the usable samples, the best-weighted, then the longest."""
    best: dict[tuple[str, str], tuple[float, float, float]] = {}
    for path in collect_dbs:
        with sqlite3.connect(path) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute("SELECT * FROM collect_samples WHERE status = 'ok' AND gpu = ? AND power_w > 0",
                              (gpu,)).fetchall()
        for row in rows:
            weight = _weight(row)
            if weight is None:
                continue
            key, rank = (row["benchmark"], row["launch"]), (weight, float(row["loop_s"] or 0.0))
            if key not in best or rank > best[key][1:]:
                best[key] = (float(row["power_w"]), *rank)
    return {k: (p, w) for k, (p, w, _) in best.items()}


def power_observations(obs: list[Observation], powers: dict[tuple[str, str], tuple[float, float]]
                       ) -> list[PowerObservation]:
    """The observations with a usable power measurement."""
    return [PowerObservation(o, *powers[(o.benchmark, o.launch)]) for o in obs if (o.benchmark, o.launch) in powers]
