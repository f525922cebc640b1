"""Per-sample overhead of ``ptxstatic collect`` beyond its measuring time, measured on the fake device in one run.

``collect`` runs a manifest of small kernels (``--families`` source files, each compiled by nvcc, three kernels
and three launches each) on the fake device paced at real time (``time_scale`` 1: its timed loops last as
long as on a GPU) with a slow energy counter (one update per 0.1 s) and a 0.5 s power-averaging window, so
that samples are sized as on a recent NVIDIA board. Every second a sample costs outside the device's timed
loops is overhead: waiting for its source, loading, buffers, the instrumented counting run, features, the
board trace's analysis, the SQLite transaction (the dataset's ``overhead_s``). The fake runs each kernel on
the PTX emulator, which stands in for the GPU's runs and costs more than they do; it is timed apart (each
launch emulated as collect does: plain and instrumented) and taken out.

The small kernels have small buffers. Filling buffers is host work on a real GPU too, so the script also
works out what the microbenchmark suite's 556 launches have to fill, in collect's order and through the
cache of recent fills (each launch is packed twice: its instrumented run, then its measured one), and
prices it at the CPU seconds per byte of each kind of fill measured here.

Printed as JSON: seconds per sample (medians and 90th percentiles), and the projection for the suite's 556
launches at 1 s (without the host fills, and with their CPU seconds).

Run: ``python benchmarks/collect_overhead.py [--families 4] [--min-seconds 1]`` (needs nvcc).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ptxstatic.collect.compile import compile_source  # noqa: E402
from ptxstatic.collect.manifest import load_manifest  # noqa: E402
from ptxstatic.collect.measure import REPEATS, WARMUP_FRACTION, BoardTiming  # noqa: E402
from ptxstatic.collect.plan import ordered  # noqa: E402
from ptxstatic.collect.runner import CollectOptions, collect  # noqa: E402
from ptxstatic.counts.instrumentation.ptx_pass import instrument  # noqa: E402
from ptxstatic.emulator import emulate  # noqa: E402
from ptxstatic.gpu.args import FillCache, host_fill  # noqa: E402
from ptxstatic.gpu.fake import ENV  # noqa: E402
from ptxstatic.launch import Buffer  # noqa: E402
from ptxstatic.limits import HOST_FILL_CACHE_BYTES  # noqa: E402
from ptxstatic.ptx.parser import parse_text  # noqa: E402

KERNELS = r"""
extern "C" __global__ void chain(float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i * 1e-3f;
    for (int k = 0; k < iters; ++k) x = fmaf(x, 0.999f, 1e-3f);
    if (i < n) out[i] = x;
}
extern "C" __global__ void copy(const float* in, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}
extern "C" __global__ void stencil(const float* in, float* out, int n) {
    __shared__ float tile[66];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
    if (threadIdx.x == 0) { tile[0] = 0.0f; tile[65] = 0.0f; }
    __syncthreads();
    if (i < n) out[i] = 0.25f * tile[threadIdx.x] + 0.5f * tile[threadIdx.x + 1] + 0.25f * tile[threadIdx.x + 2];
}
"""
SUITE_LAUNCHES = 556  # the microbenchmark suite's launches


def _buf(count: int, output: bool = False, fill: str = "zeros") -> dict:
    return {"dtype": "f32", "count": count, "fill": fill, "seed": 1, "output": output}


def _launches(kernel: str) -> list[dict]:
    out = []
    for blocks in (2, 4, 8):
        n = blocks * 64
        args = {"chain": [_buf(n, True), n, 16], "copy": [_buf(n, fill="random"), _buf(n, True), n],
                "stencil": [_buf(n, fill="random"), _buf(n, True), n]}[kernel]
        out.append({"grid": [blocks], "block": [64], "args": {str(i): a for i, a in enumerate(args)}})
    return out


def write_suite(d: Path, families: int, min_seconds: float) -> Path:
    """``families`` copies of the kernels' source (each compiled on its own, as the suite's files are)."""
    benches = []
    for f in range(families):
        (d / f"family{f}.cu").write_text(KERNELS)
        benches += [{"name": f"f{f}_{k}", "source": f"family{f}.cu", "kernel": k, "launches": _launches(k)}
                    for k in ("chain", "copy", "stencil")]
    path = d / "manifest.json"
    path.write_text(json.dumps({"suite": "overhead", "nvcc_flags": "-lineinfo", "min_seconds": min_seconds,
                                "benchmarks": benches}))
    return path


def _q90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) >= 10 else max(values)


def emulation_seconds(manifest: Path) -> dict[tuple[str, str], float]:
    """Seconds the fake spends emulating each (kernel, launch) as collect runs it: plain and instrumented."""
    loaded = load_manifest(manifest)
    source = compile_source(loaded.benchmarks[0].source, "sm_90", loaded.nvcc_flags)
    counted = parse_text(instrument(source.module, source_text=source.ptx).text)
    out = {}
    for b in loaded.benchmarks:
        for spec in b.launches:
            if (b.kernel, spec.key) not in out:
                t = time.perf_counter()
                emulate(source.module, b.kernel, spec.launch)
                emulate(counted, b.kernel, spec.launch)
                out[(b.kernel, spec.key)] = time.perf_counter() - t
    return out


def fills(sample_bytes: int) -> dict:
    """Host CPU seconds filling the suite's buffers as collect packs them: every launch in collect's order, packed
    twice (its instrumented run, then its measured run), through the cache of recent fills. What has to be
    filled follows from the cache's policy on the buffers' sizes (nothing is allocated for that); the CPU
    seconds per byte of each kind of fill (fill, type) are measured on one buffer of ``sample_bytes``."""
    suite = load_manifest(ROOT / "microbenchmarks" / "manifest.json")
    cache = FillCache(HOST_FILL_CACHE_BYTES)
    asked: dict[tuple[str, str], int] = defaultdict(int)
    made: dict[tuple[str, str], int] = defaultdict(int)

    def size(b: Buffer) -> int:
        return b.count * host_fill(Buffer(b.dtype, 1)).itemsize

    def make(b: Buffer) -> range:
        made[(b.fill, b.dtype)] += size(b)
        return range(size(b))  # stands in for the bytes: the cache only needs their length

    for *_, spec in ordered([None], list(suite.benchmarks), set()):
        for _ in range(2):
            for b in (a for a in spec.launch.args.values() if isinstance(a, Buffer)):
                asked[(b.fill, b.dtype)] += size(b)
                cache.get(b, make)
    seconds_per_byte = {}
    for fill, dtype in asked:
        buf = Buffer(dtype, sample_bytes // host_fill(Buffer(dtype, 1)).itemsize, fill, 1.0, seed=1)
        c = time.process_time()
        host_fill(buf).tobytes()
        seconds_per_byte[(fill, dtype)] = (time.process_time() - c) / size(buf)
    cpu = sum(n * seconds_per_byte[k] for k, n in made.items())
    return {"bytes_asked": sum(asked.values()), "bytes_filled": sum(made.values()),
            "cpu_s_without_cache": sum(n * seconds_per_byte[k] for k, n in asked.items()), "cpu_s": cpu,
            "cpu_s_per_sample": cpu / SUITE_LAUNCHES,
            "mb_per_cpu_s": {f"{f} {d}": 1e-6 / s for (f, d), s in sorted(seconds_per_byte.items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", type=int, default=4, help="source files of three kernels and nine launches")
    ap.add_argument("--min-seconds", type=float, default=1.0, help="measuring time per sample (default 1)")
    ap.add_argument("--fill-sample", type=int, default=64 << 20, help="bytes each kind of fill is timed on")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ptxstatic-collect-overhead-") as tmp:
        d = Path(tmp)
        (d / "board.json").write_text(json.dumps({"time_scale": 1.0, "energy_period_s": 0.1, "power_window_s": 0.5}))
        os.environ[ENV] = str(d / "board.json")
        manifest = write_suite(d, args.families, args.min_seconds)
        started = time.monotonic()
        summary = collect(CollectOptions(manifest, d / "bench.sqlite", "bench", "fake", started=started))
        total = time.monotonic() - started
        con = sqlite3.connect(d / "bench.sqlite")
        rows = con.execute("SELECT benchmark, launch, wall_s, overhead_s, measured_s FROM collect_samples "
                           "WHERE status = 'ok'").fetchall()
        con.close()
        emulated = emulation_seconds(manifest)
    walls, overheads, measured = ([r[i] for r in rows] for i in (2, 3, 4))
    emulation = [emulated[(b.split("_", 1)[1], lk)] for b, lk, *_ in rows]
    own = [o - e for o, e in zip(overheads, emulation)]
    board = summary.board or {}
    timing = BoardTiming(board.get("trace_interval_s", 0.001), True, board.get("counter_period_s"), None, 0)
    nominal = REPEATS * timing.repeat_seconds(1.0, 0.02) + WARMUP_FRACTION * 1.0
    once = total - sum(walls)
    host = fills(args.fill_sample)
    per_sample = nominal + max(0.0, statistics.median(own))
    report = {
        "samples": len(rows), "failed": summary.failed, "min_seconds": args.min_seconds, "run_wall_s": total,
        "once_per_run_s": once, "board": board,
        "per_sample": {
            "wall_median_s": statistics.median(walls), "measured_median_s": statistics.median(measured),
            "overhead_median_s": statistics.median(overheads), "overhead_p90_s": _q90(overheads),
            "fake_emulation_median_s": statistics.median(emulation),
            "overhead_without_emulation_median_s": statistics.median(own),
            "overhead_without_emulation_p90_s": _q90(own),
            "overhead_over_measuring": statistics.median(overheads) / statistics.median(measured),
        },
        "suite_host_fills": host,
        "suite_projection_at_1s": {
            "nominal_measuring_s": nominal, "per_sample_s": per_sample,
            "minutes": (SUITE_LAUNCHES * per_sample + once) / 60,
            "with_host_fills_cpu_minutes": (SUITE_LAUNCHES * per_sample + once + host["cpu_s"]) / 60,
        },
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
