"""Absolute time on an NVIDIA H200 against its measurements, as a user gets it: each launch's PTX (the
microbenchmarks compiled by nvcc for sm_90), static block counts, the launch's memory traffic and the
bottleneck model with the parameters shipped for the H200 (``predict --gpu h200`` with the launch). Two
tables, per family (a manifest source file) and overall: the default-clock dataset (time of repeated launches
by ``collect``; launches whose static block counts differ from the GPU's are the data-dependent ones, shown
apart), and the hardware-counter dataset's durations for the launches the first lacks (the memory families);
then both together without the data-dependent ones (the accuracy target's table). Columns: launches, within
25%, within 2x, the 90% interval holding the measurement, and the median of predicted / measured. Then the
board power of the launches whose 1 s samples give a usable power (as ``train power`` selects them), with the
power model shipped for the H200: launches, median error, within 10%, in the 90% interval, median predicted /
measured. Everything printed is measured in this run.

Run: ``python benchmarks/h200_absolute.py [--data DIR] [--counters DB]`` (needs nvcc on the PATH; the
default-clock dataset is ``../shared/data/h200-default-clocks`` beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ptxstatic.block_counts import BlockCounts
from ptxstatic.collect.compile import compile_all
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Launch
from ptxstatic.models.evaluation.measured_launches import measured_powers, measured_times
from ptxstatic.models.inference.board_power import launch_power
from ptxstatic.models.inference.bottleneck import launch_time
from ptxstatic.models.inference.loading import bottleneck_parameters, power_parameters
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "microbenchmarks" / "manifest.json"
#: the tables' names for where a time comes from (``measured_times``' sources)
DATASETS = {"collect": "default clocks", "counters": "counters"}


def table(title: str, results: list[tuple[str, float, float, float, float]]) -> None:
    """Per family: (family, measured, predicted, low, high) summarised."""
    print(f"\n{title}")
    print(f"{'family':18s} {'launches':>8s} {'≤25%':>6s} {'≤2x':>6s} {'in 90% int.':>11s} {'median pred/meas':>17s}")
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        groups[r[0]].append(r)
    for name, rs in [*sorted(groups.items()), ("overall", results)]:
        ratios = [p / m for _, m, p, _, _ in rs]
        inside = sum(lo <= m <= hi for _, m, _, lo, hi in rs)
        print(f"{name:18s} {len(rs):8d} {sum(abs(x - 1) <= 0.25 for x in ratios) / len(rs):6.0%} "
              f"{sum(0.5 <= x <= 2 for x in ratios) / len(rs):6.0%} {inside / len(rs):11.0%} "
              f"{statistics.median(ratios):17.2f}")


def power_table(results: list[tuple[str, float, float, float, float]]) -> None:
    """Per family: (family, measured W, predicted W, low, high) summarised."""
    print(f"\nboard power, 1 s samples: {len(results)} launches")
    print(f"{'family':18s} {'launches':>8s} {'median err':>10s} {'≤10%':>6s} {'in 90% int.':>11s} "
          f"{'median pred/meas':>17s}")
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        groups[r[0]].append(r)
    for name, rs in [*sorted(groups.items()), ("overall", results)]:
        errors = [abs(p - m) / m for _, m, p, _, _ in rs]
        inside = sum(lo <= m <= hi for _, m, _, lo, hi in rs)
        print(f"{name:18s} {len(rs):8d} {statistics.median(errors):10.1%} "
              f"{sum(e <= 0.1 for e in errors) / len(rs):6.0%} {inside / len(rs):11.0%} "
              f"{statistics.median(p / m for _, m, p, _, _ in rs):17.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "h200-default-clocks")
    ap.add_argument("--counters", type=Path, default=ROOT / "datasets" / "h200-counters" /
                    "microbenchmarks-counters.sqlite")
    args = ap.parse_args(argv)
    collect_db = args.data / "microbenchmarks-short.sqlite"
    times = measured_times([collect_db] if collect_db.is_file() else [],
                           [args.counters] if args.counters.is_file() else [], "h200")
    measured = [(b, key, t, DATASETS[source], counts) for (b, key), (t, source, counts) in times.items()]
    if not measured:
        print(f"no measurements under {args.data} or at {args.counters}")
        return 0
    figures, params, power = gpu_figures("h200"), bottleneck_parameters("h200"), power_parameters("h200")
    one_second = args.data / "microbenchmarks-1s.sqlite"
    powers = measured_powers([one_second], "h200") if one_second.is_file() and power is not None else {}
    spec = load_manifest(MANIFEST)
    benches = {b.name: b for b in spec.benchmarks}
    sources = compile_all(sorted({benches[b].source for b, *_ in measured if b in benches}), "sm_90", spec.nvcc_flags)
    print(f"{len(measured)} launches; parameters: {params.fitted_on or 'defaults'}")
    results: dict[str, list] = defaultdict(list)
    watts: list[tuple[str, float, float, float, float]] = []
    for b, key, t, dataset, gpu_counts in measured:
        bench = benches.get(b)
        src = sources.get(bench.source) if bench else None
        if src is None or isinstance(src, PtxstaticError):
            continue
        bound = bind(src.module, bench.kernel, Launch.from_dict(json.loads(key)))
        counts = estimate_counts(bound).counts
        data_dependent = gpu_counts is not None and not _same(counts, BlockCounts.from_dict(json.loads(gpu_counts)))
        traffic = launch_traffic(bound, counts.counts, figures)
        work = launch_work(src.module, counts, figures, traffic)
        est = launch_time(work, figures, *figures.default_clocks, params)
        label = f"{dataset}, data-dependent control" if data_dependent else dataset
        results[label].append((bench.source.stem, t, est.time_ms, est.low_ms, est.high_ms))
        if power is not None and (b, key) in powers:
            pw = launch_power(work, figures, *figures.default_clocks, params, power)
            watts.append((bench.source.stem, powers[(b, key)][0], pw.power_w, pw.low_w, pw.high_w))
    for label in sorted(results):
        table(f"{label}: {len(results[label])} launches", results[label])
    decided = [r for label, rs in results.items() if "data-dependent" not in label for r in rs]
    table(f"every launch whose control the launch decides (the target's): {len(decided)} launches", decided)
    ratios = sorted(abs(p / m - 1) for _, m, p, _, _ in decided)
    print(f"median error {statistics.median(ratios):.1%}; within 25 %: {sum(x <= 0.25 for x in ratios)}, "
          f"within 2x: {sum(0.5 <= p / m <= 2 for _, m, p, _, _ in decided)}, "
          f"in the 90 % interval: {sum(lo <= m <= hi for _, m, _, lo, hi in decided)} of {len(decided)}")
    if watts:
        power_table(watts)
    return 0


def _same(a: BlockCounts, b: BlockCounts) -> bool:
    """Whether two launches' counts agree in every block (to a thousandth)."""
    for fn, blocks in b.counts.items():
        mine = a.counts.get(fn, {})
        for block, n in blocks.items():
            if not math.isclose(mine.get(block, 0.0), n, rel_tol=1e-3, abs_tol=0.5):
                return False
    return True


if __name__ == "__main__":
    sys.exit(main())
