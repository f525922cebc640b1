"""Host-side cost of ``ptxstatic collect`` next to the GPU time it budgets, measured in one run.

For every ``--every``-th launch of the suite: compiling the sources with nvcc, and per sample the
bookkeeping collect does around the GPU work (features from block counts, the kernel's sequence, and the
SQLite transaction with the measurement and the sample row). Static block counts
(:func:`ptxstatic.counts.estimate_counts`, not timed) stand in for the instrumented run's, and a
synthetic measurement for the GPU's. Printed as ratios to the time the samples spend in measured loops
(``min_seconds`` each), so that the numbers mean the same on any machine.

Run: ``python benchmarks/collect_host.py [--every N]`` (needs nvcc on the PATH).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ptxstatic.collect.compile import compile_all
from ptxstatic.collect.features import kernel_record
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.dataset.samples import Sample, SampleStore, utc_now
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement
from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.occupancy import gpu_spec
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.toolchain.ptxas import ptxas_stats

MICROBENCHMARKS = Path(__file__).resolve().parents[1] / "microbenchmarks"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=8, help="take every N-th launch of the manifest (default 8)")
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args(argv)
    manifest = load_manifest(MICROBENCHMARKS / "manifest.json")
    tasks = [(b, i, s) for b in manifest.benchmarks for i, s in enumerate(b.launches)][:: max(1, args.every)]
    budget = sum(s.min_seconds for _, _, s in tasks)

    t = time.perf_counter()
    sources = compile_all({b.source for b, _, _ in tasks}, args.arch, manifest.nvcc_flags)
    compile_s = time.perf_counter() - t
    if any(isinstance(s, PtxstaticError) for s in sources.values()):
        print("compilation failed", file=sys.stderr)
        return 1
    ptxas = {p: ptxas_stats(s.ptx, args.arch) for p, s in sources.items()}  # type: ignore[union-attr]

    per_sample: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = DatasetStore(Path(tmp) / "bench.sqlite", create=True)
        samples = SampleStore(store)
        with store.transaction():
            store.add_gpu("bench", [])
        for b, i, spec in tasks:
            source = sources[b.source]
            counts = estimate_counts(bind(source.module, b.kernel, spec.launch), max_work=2e7).counts  # type: ignore[union-attr]
            t = time.perf_counter()
            record = kernel_record(source, b.kernel, counts, gpu_spec("h100"), ptxas[b.source], b.source.name)  # type: ignore[arg-type]
            sample = Sample("bench", b.name, spec.key, "default", "ok", utc_now(), utc_now(), f_mem=2619,
                            f_core=1755, time_ms=1.0, power_w=300.0)
            samples.write(sample, manifest.suite, i, record, ClockConfig(2619, 1755, True),
                          Measurement(2619, 1755, 1.0, 300.0, 300.0, 1000))
            per_sample.append(time.perf_counter() - t)
        store.close()
    report = {
        "samples": len(tasks), "measured_loop_seconds": budget,
        "compile_over_loops": compile_s / budget,
        "bookkeeping_over_loops": sum(per_sample) / budget,
        "bookkeeping_median_over_min_seconds": statistics.median(per_sample) / statistics.median(
            s.min_seconds for _, _, s in tasks),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
