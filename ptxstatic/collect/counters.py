"""``ptxstatic collect --counters``: the memory traffic and time of every launch of a manifest, read from the
GPU's hardware counters by Nsight Compute, for checking the traffic model against the GPU.

Each (benchmark, launch) runs once, uninstrumented, under ``ncu`` (:mod:`ptxstatic.toolchain.ncu`: clocks
left as they are, caches flushed before each replay pass); the counters in :data:`METRICS` are kept per
launch in the dataset's ``collect_counters`` table (one row per GPU, benchmark and launch; the values in
base units, JSON) and, with ``--counters-json``, in a JSON file. Launches are ordered to spread coverage:
one launch of every benchmark (its middle one) before the second of any, benchmarks interleaved across
source files, and the work is split into chunks of one ``ncu`` process each, so that a time budget or a
fault loses at most one chunk. Launches already in the table are skipped: a second run resumes.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.collect.compile import CompiledSource, compile_all
from ptxstatic.collect.manifest import BenchSpec, LaunchSpec, load_manifest
from ptxstatic.dataset.samples import utc_now
from ptxstatic.errors import PtxstaticError
from ptxstatic.toolchain.ncu import (
    available_metrics,
    base_name,
    metric_value,
    ncu_path,
    ncu_version,
    parse_raw_csv,
    profile_command,
)
from ptxstatic.toolchain.process import run_tool

#: counter -> what it is (Nsight Compute names, base units)
METRICS: dict[str, str] = {
    "gpu__time_duration.sum": "duration of the launch (ns)",
    "sm__cycles_elapsed.avg.per_second": "SM clock during the launch (cycles/s)",
    "dram__bytes_read.sum": "bytes read from DRAM",
    "dram__bytes_write.sum": "bytes written to DRAM",
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read by the SMs' L1/TEX",
    "lts__t_sectors_srcunit_tex_op_write.sum": "L2 sectors written by the SMs' L1/TEX",
    "lts__t_sectors_srcunit_tex_op_atom.sum": "L2 sectors of atomics from the SMs",
    "lts__t_sectors_srcunit_tex_op_red.sum": "L2 sectors of reductions from the SMs",
    "lts__t_sector_hit_rate.pct": "L2 sector hit rate (%)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global load requests (warp instructions)",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global load sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum": "global load sectors that hit in L1",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "global store requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global store sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": "local load sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": "local store sectors",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared load wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared store wavefronts",
    "smsp__inst_executed.sum": "warp instructions executed",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy (%)",
}
#: the few counters used when the device's metric list cannot be read
CORE_METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum")

SCHEMA = """
CREATE TABLE IF NOT EXISTS collect_counters (
    gpu TEXT NOT NULL, benchmark TEXT NOT NULL, launch TEXT NOT NULL, kernel TEXT NOT NULL, source TEXT NOT NULL,
    arch TEXT NOT NULL, ptx_sha256 TEXT NOT NULL, metrics TEXT NOT NULL, tool TEXT NOT NULL,
    collected_at TEXT NOT NULL, PRIMARY KEY (gpu, benchmark, launch)
);
"""
#: launches per ncu process
CHUNK = 60


@dataclass(frozen=True)
class CountersOptions:
    manifest: Path
    db: Path
    gpu: str
    arch: str
    device: str = "cuda"
    only: str | None = None
    budget_s: float = 600.0  # no launch starts after this many seconds
    json_out: Path | None = None
    jobs: int | None = None


@dataclass(frozen=True)
class Task:
    bench: BenchSpec
    spec: LaunchSpec


def ordered_tasks(benches: list[BenchSpec]) -> list[Task]:
    """Every launch, ordered to spread coverage: round by round (a benchmark's middle launch first, then the
    others outward), benchmarks of different source files interleaved within a round."""
    by_source: dict[Path, list[BenchSpec]] = {}
    for b in benches:
        by_source.setdefault(b.source, []).append(b)
    interleaved: list[BenchSpec] = []
    queues = list(by_source.values())
    while any(queues):
        for q in queues:
            if q:
                interleaved.append(q.pop(0))
    rounds: list[list[Task]] = []
    for b in interleaved:
        mid = len(b.launches) // 2
        order = sorted(range(len(b.launches)), key=lambda i: (abs(i - mid), i))
        for r, i in enumerate(order):
            while len(rounds) <= r:
                rounds.append([])
            rounds[r].append(Task(b, b.launches[i]))
    return [t for r in rounds for t in r]


def _done(db: sqlite3.Connection, gpu: str) -> set[tuple[str, str]]:
    return {(b, k) for b, k in db.execute("SELECT benchmark, launch FROM collect_counters WHERE gpu = ?", (gpu,))}


def collect_counters(opts: CountersOptions, say: Callable[[str], None] = lambda s: None) -> dict:
    """Measure the counters of every selected launch not yet in the dataset (module docstring); what was
    written and what failed."""
    ncu = ncu_path()
    if ncu is None:
        raise PtxstaticError("--counters needs Nsight Compute (ncu) on the PATH")
    deadline = time.time() + opts.budget_s
    manifest = load_manifest(opts.manifest)
    db = sqlite3.connect(opts.db)
    try:
        db.executescript(SCHEMA)
        done = _done(db, opts.gpu)
        tasks = [t for t in ordered_tasks(manifest.select(opts.only)) if (t.bench.name, t.spec.key) not in done]
        say(f"{len(tasks)} launches to measure ({len(done)} already in the dataset)")
        metrics = _metrics(ncu, say)
        tool = ncu_version(ncu)
        sources = compile_all(sorted({t.bench.source for t in tasks}), opts.arch, manifest.nvcc_flags, opts.jobs)
        rows: list[dict] = []
        failures: list[str] = []
        with tempfile.TemporaryDirectory(prefix="ptxstatic-counters-") as tmp:
            for start in range(0, len(tasks), CHUNK):
                if time.time() > deadline:
                    break
                chunk = tasks[start:start + CHUNK]
                got, failed = _chunk(ncu, metrics, chunk, sources, Path(tmp), start, opts, deadline)
                if not got and metrics != list(CORE_METRICS) and any("ncu exited" in f for f in failed):
                    say(f"ncu refused the counters ({failed[-1]}); measuring the core ones: {', '.join(CORE_METRICS)}")
                    metrics = list(CORE_METRICS)
                    got, failed = _chunk(ncu, metrics, chunk, sources, Path(tmp), start, opts, deadline)
                failures += failed
                _store(db, opts, got, tool, sources)
                rows += got
                say(f"{start + len(chunk)} of {len(tasks)}: {len(rows)} measured, {len(failures)} failed")
    finally:
        db.close()
    result = {"gpu": opts.gpu, "tool": tool, "metrics": metrics, "measured": len(rows), "failed": failures,
              "already": len(done), "in_dataset": len(done) + len(rows),
              "rows": [{k: v for k, v in r.items() if k != "task"} for r in rows]}
    if opts.json_out is not None:
        opts.json_out.write_text(json.dumps(result, indent=1))
    return result


def _metrics(ncu: str, say: Callable[[str], None]) -> list[str]:
    """:data:`METRICS` that the device offers (all of them when its list cannot be read)."""
    offered = available_metrics(ncu)
    if not {base_name(m) for m in CORE_METRICS} <= offered:
        say("ncu --query-metrics did not list the core counters: asking for every counter")
        return list(METRICS)
    kept = [m for m in METRICS if base_name(m) in offered]
    missing = [m for m in METRICS if m not in kept]
    if missing:
        say(f"counters this device does not offer: {', '.join(missing)}")
    return kept or list(CORE_METRICS)


def _chunk(ncu: str, metrics: list[str], chunk: list[Task], sources: dict, tmp: Path, start: int,
           opts: CountersOptions, deadline: float) -> tuple[list[dict], list[str]]:
    """Profile one chunk in one ncu process; the measured rows and the failures."""
    plan_tasks, failures, kept = [], [], []
    for t in chunk:
        src = sources[t.bench.source]
        if isinstance(src, PtxstaticError):
            failures.append(f"{t.bench.name}: {src}")
            continue
        ptx = tmp / f"{t.bench.source.stem}.ptx"
        if not ptx.exists():
            ptx.write_text(src.ptx)
        plan_tasks.append({"ptx": str(ptx), "kernel": t.bench.kernel, "launch": t.spec.launch.to_dict()})
        kept.append(t)
    ran = tmp / f"ran-{start}.jsonl"
    plan = {"device": opts.device, "deadline": deadline, "ran": str(ran), "tasks": plan_tasks}
    plan_path = tmp / f"plan-{start}.json"
    plan_path.write_text(json.dumps(plan))
    log = tmp / f"ncu-{start}.csv"
    argv = profile_command(ncu, metrics, str(log), [sys.executable, "-m", "ptxstatic.collect.launch_once",
                                                     str(plan_path)])
    done = run_tool(argv, max(60.0, deadline - time.time() + 120.0), "ncu")
    outcomes = [json.loads(ln) for ln in ran.read_text().splitlines()] if ran.exists() else []
    profiled = parse_raw_csv(log.read_text()) if log.exists() else []
    if not profiled and done.returncode:
        failures.append(f"ncu exited with {done.returncode}: {(done.stderr or done.stdout).strip()[-400:]}")
    rows = []
    ok = [o["task"] for o in outcomes if o.get("ok")]
    failures += [f"{kept[o['task']].bench.name}: {o.get('error')}" for o in outcomes if not o.get("ok")]
    for i, row in zip(ok, profiled, strict=False):
        t = kept[i]
        if t.bench.kernel not in row.get("Kernel Name", ""):
            failures.append(f"{t.bench.name}: ncu's row {row.get('ID')} is of {row.get('Kernel Name')!r}: "
                            "the rows no longer follow the launches")
            break
        values = {m: metric_value(row.get(m, "")) for m in metrics}
        rows.append({"task": i, "benchmark": t.bench.name, "launch": t.spec.key, "kernel": t.bench.kernel,
                     "source": t.bench.source.name, "metrics": values})
    return rows, failures


def _store(db: sqlite3.Connection, opts: CountersOptions, rows: list[dict], tool: str, sources: dict) -> None:
    with db:
        for r in rows:
            src: CompiledSource = next(s for p, s in sources.items() if p.name == r["source"])
            db.execute("INSERT OR REPLACE INTO collect_counters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (opts.gpu, r["benchmark"], r["launch"], r["kernel"], r["source"], opts.arch, src.sha256,
                        json.dumps(r["metrics"], sort_keys=True), tool, utc_now()))
