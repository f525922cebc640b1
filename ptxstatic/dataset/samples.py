"""Per-sample records of ``ptxstatic collect``, in three tables of the dataset file (``docs/collect.md``).

``collect_runs`` has one row per invocation (device, driver, settings changed, outcome);
``collect_kernels`` ties each (benchmark, launch) of a manifest to its store benchmark and keeps the block
counts its features came from; ``collect_samples`` has one row per (GPU, benchmark, launch, clock setting)
with everything measured, or the error when it failed. Every sample is written in one transaction together
with its store rows (benchmark, kernel, features, clock configuration, measurement), so that an interrupted
run loses nothing it had finished and a restarted run skips exactly those samples.

The collect tables have their own version (``meta`` key ``collect_schema_version``). Version 2 added the
columns of :data:`ADDED` to ``collect_samples`` (how far the power can be trusted, what the sample cost);
opening a dataset for writing adds them (NULL in the rows measured before), and the readers here take a
version-1 dataset as it is, so that read-only datasets of either version load.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime

from ptxstatic.analysis.sequence import Run
from ptxstatic.block_counts import BlockCounts
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement

SCHEMA = """
CREATE TABLE IF NOT EXISTS collect_runs (
    id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
    gpu TEXT NOT NULL, device TEXT NOT NULL, info TEXT NOT NULL, settings_changed TEXT NOT NULL DEFAULT '[]',
    manifest TEXT NOT NULL, manifest_sha256 TEXT NOT NULL, written INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS collect_kernels (
    benchmark_id INTEGER PRIMARY KEY REFERENCES benchmarks(id), benchmark TEXT NOT NULL, launch TEXT NOT NULL,
    source TEXT NOT NULL, kernel TEXT NOT NULL, arch TEXT NOT NULL, ptx_sha256 TEXT NOT NULL,
    block_counts TEXT NOT NULL, UNIQUE (benchmark, launch)
);
CREATE TABLE IF NOT EXISTS collect_samples (
    id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES collect_runs(id), gpu TEXT NOT NULL,
    benchmark TEXT NOT NULL, launch TEXT NOT NULL, setting TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), error TEXT,
    benchmark_id INTEGER REFERENCES benchmarks(id), f_mem INTEGER, f_core INTEGER,
    time_ms REAL, time_median_ms REAL, time_mad_ms REAL, launches INTEGER, chunks INTEGER, chunks_kept INTEGER,
    loop_s REAL, energy_mj REAL, power_w REAL, power_source TEXT, sampled_power_w REAL, power_samples INTEGER,
    sm_clock_mhz REAL, sm_clock_min_mhz INTEGER, sm_clock_max_mhz INTEGER, mem_clock_mhz REAL,
    temperature_c REAL, temperature_max_c INTEGER, throttle_reasons INTEGER, throttle_names TEXT,
    registers INTEGER, static_shared_bytes INTEGER, local_bytes INTEGER,
    warnings TEXT NOT NULL DEFAULT '[]', started_at TEXT NOT NULL, finished_at TEXT NOT NULL,
    UNIQUE (gpu, benchmark, launch, setting)
);
"""
#: columns of ``collect_samples`` added in version 2 of the collect tables, in order
ADDED = {
    "power_repeats": "INTEGER", "power_repeat_spread": "REAL", "power_steady": "INTEGER", "power_warmup_s": "REAL",
    "power_resolution": "REAL", "counter_period_s": "REAL", "counter_updates": "INTEGER", "power_window_s": "REAL",
    "power_trust": "TEXT", "measured_s": "REAL", "wall_s": "REAL", "overhead_s": "REAL",
}
SCHEMA_KEY, SCHEMA_VERSION = "collect_schema_version", 2
DEFAULT_SETTING = "default"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class KernelRecord:
    """What the instrumented run of one (benchmark, launch) gave: counts, features, the static sequence."""

    counts: BlockCounts
    features: dict[str, float]
    runs: list[Run]
    source: str
    kernel: str
    arch: str
    ptx_sha256: str


@dataclass
class Sample:
    """One row of ``collect_samples`` (the identity, the outcome, and the measured values when ok)."""

    gpu: str
    benchmark: str
    launch: str
    setting: str
    status: str
    started_at: str
    finished_at: str
    error: str | None = None
    benchmark_id: int | None = None
    f_mem: int | None = None
    f_core: int | None = None
    time_ms: float | None = None
    time_median_ms: float | None = None
    time_mad_ms: float | None = None
    launches: int | None = None
    chunks: int | None = None
    chunks_kept: int | None = None
    loop_s: float | None = None
    energy_mj: float | None = None
    power_w: float | None = None
    power_source: str | None = None
    sampled_power_w: float | None = None
    power_samples: int | None = None
    sm_clock_mhz: float | None = None
    sm_clock_min_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: float | None = None
    temperature_c: float | None = None
    temperature_max_c: int | None = None
    throttle_reasons: int | None = None
    throttle_names: str | None = None
    registers: int | None = None
    static_shared_bytes: int | None = None
    local_bytes: int | None = None
    warnings: str = "[]"
    run_id: int | None = None
    power_repeats: int | None = None  # repeats the power comes from
    power_repeat_spread: float | None = None  # (max - min) / mean of their power
    power_steady: int | None = None  # 1: they agreed within the run's precision; 0: the cap came first
    power_warmup_s: float | None = None  # board seconds of warm-up before them
    power_resolution: float | None = None  # relative bound on the power's error from the counter's timing
    counter_period_s: float | None = None  # the energy counter's update period, measured on the board
    counter_updates: int | None = None  # counter updates the power spans
    power_window_s: float | None = None  # the board's power-averaging window, measured (None: not observed)
    power_trust: str | None = None  # which reading the power is, and why
    measured_s: float | None = None  # board seconds of every timed loop of the sample
    wall_s: float | None = None  # wall seconds spent on the sample (not the board probe nor waiting for its source)
    overhead_s: float | None = None  # of those, the seconds outside the device's timed loops


SAMPLE_COLUMNS = [f.name for f in fields(Sample)]


class SampleStore:
    """The collect tables of one dataset, written next to the store's own tables."""

    def __init__(self, store: DatasetStore) -> None:
        self.store = store
        self.db = store.db
        with store.transaction():
            self.db.executescript(SCHEMA)
            have = columns(self.db, "collect_samples")
            for name, kind in ADDED.items():
                if name not in have:
                    self.db.execute(f"ALTER TABLE collect_samples ADD COLUMN {name} {kind}")
            store.set_meta(SCHEMA_KEY, str(SCHEMA_VERSION))

    # ------------------------------------------------------------------------------------------ runs
    def begin_run(self, gpu: str, device: str, info: dict, manifest: str, manifest_sha256: str) -> int:
        """A new run; runs still marked running were killed (one collect at a time per dataset)."""
        with self.store.transaction():
            self.db.execute("UPDATE collect_runs SET status = 'killed' WHERE status = 'running'")
            return int(self.db.execute(
                "INSERT INTO collect_runs (started_at, status, gpu, device, info, manifest, manifest_sha256) "
                "VALUES (?, 'running', ?, ?, ?, ?, ?)",
                (utc_now(), gpu, device, json.dumps(info, sort_keys=True), manifest, manifest_sha256),
            ).lastrowid)

    def end_run(self, run_id: int, status: str, settings_changed: list[str], board: dict | None = None) -> None:
        """The run's outcome (``finished``, ``budget``: stopped with samples left, ``interrupted``); ``board``
        (what the run measured of the board) joins its ``info``."""
        with self.store.transaction():
            (info,) = self.db.execute("SELECT info FROM collect_runs WHERE id = ?", (run_id,)).fetchone()
            self.db.execute(
                "UPDATE collect_runs SET finished_at = ?, status = ?, settings_changed = ?, info = ?, "
                "written = (SELECT COUNT(*) FROM collect_samples WHERE run_id = ?), "
                "failed = (SELECT COUNT(*) FROM collect_samples WHERE run_id = ? AND status = 'failed') "
                "WHERE id = ?",
                (utc_now(), status, json.dumps(settings_changed),
                 json.dumps(json.loads(info) | {"board_timing": board}, sort_keys=True), run_id, run_id, run_id),
            )

    # --------------------------------------------------------------------------------------- lookups
    def done(self, gpu: str, retry_failed: bool = False) -> set[tuple[str, str, str]]:
        """(benchmark, launch, setting) of the samples already recorded for ``gpu``."""
        sql = "SELECT benchmark, launch, setting FROM collect_samples WHERE gpu = ?"
        if retry_failed:
            sql += " AND status = 'ok'"
        return {(b, lk, s) for b, lk, s in self.db.execute(sql, (gpu,))}

    def kernel_benchmark(self, benchmark: str, launch: str) -> int | None:
        """The store benchmark holding this (benchmark, launch)'s kernel and features, if recorded."""
        row = self.db.execute("SELECT benchmark_id FROM collect_kernels WHERE benchmark = ? AND launch = ?",
                              (benchmark, launch)).fetchone()
        return int(row[0]) if row else None

    def sample(self, gpu: str, benchmark: str, launch: str, setting: str) -> Sample | None:
        row = self.db.execute(
            f"SELECT {', '.join(SAMPLE_COLUMNS)} FROM collect_samples WHERE gpu = ? AND benchmark = ? AND "
            "launch = ? AND setting = ?", (gpu, benchmark, launch, setting)).fetchone()
        return Sample(*row) if row else None

    # ---------------------------------------------------------------------------------------- writes
    def _store_name(self, suite: str, benchmark: str, index: int) -> str:
        """A fresh store benchmark name: ``NAME_INDEX`` (numeric suffixes keep one family per kernel)."""
        taken = {b.name for b in self.store.benchmarks(suite)}
        name, extra = f"{benchmark}_{index}", 0
        while name in taken:
            extra += 1
            name = f"{benchmark}_{index}_{extra}"
        return name

    def _add_kernel(self, suite: str, benchmark: str, index: int, launch: str, record: KernelRecord) -> int:
        bench_id = self.store.add_benchmark(suite, self._store_name(suite, benchmark, index),
                                            f"{record.source}:{record.kernel}")
        self.store.add_kernel(bench_id, 0, record.kernel, record.runs, record.features)
        self.db.execute(
            "INSERT INTO collect_kernels VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bench_id, benchmark, launch, record.source, record.kernel, record.arch, record.ptx_sha256,
             json.dumps(record.counts.to_dict(), sort_keys=True)),
        )
        return bench_id

    def write(self, sample: Sample, suite: str, index: int, record: KernelRecord | None,
              config: ClockConfig | None, measurement: Measurement | None) -> None:
        """One transaction: the kernel record (first time only), the clock configuration, the measurement
        and the sample row, replacing an earlier failed row of the same sample."""
        with self.store.transaction():
            if record is not None and sample.benchmark_id is None:
                sample.benchmark_id = self._add_kernel(suite, sample.benchmark, index, sample.launch, record)
            if measurement is not None and config is not None and sample.benchmark_id is not None:
                known = {(c.f_mem, c.f_core) for c in self.store.clocks(sample.gpu)}
                if (config.f_mem, config.f_core) not in known:
                    info = self.store.gpu_info(sample.gpu)
                    self.store.add_gpu(sample.gpu, [config], **info)
                self.store.add_measurements(sample.benchmark_id, sample.gpu, [measurement], sample.launch)
            self.db.execute("DELETE FROM collect_samples WHERE gpu = ? AND benchmark = ? AND launch = ? AND "
                            "setting = ? AND status = 'failed'",
                            (sample.gpu, sample.benchmark, sample.launch, sample.setting))
            values = asdict(sample)
            self.db.execute(
                f"INSERT INTO collect_samples ({', '.join(SAMPLE_COLUMNS)}) VALUES "
                f"({', '.join('?' * len(SAMPLE_COLUMNS))})", [values[c] for c in SAMPLE_COLUMNS],
            )



def _spread(values: list[float]) -> dict[str, float] | None:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)} if values else None


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The columns a table of this dataset has (a version-1 dataset lacks :data:`ADDED`)."""
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def dataset_stats(store: DatasetStore, gpu: str, limiting: int) -> dict:
    """What the collect tables hold for ``gpu``: sample outcomes, kernels, clocks, value ranges, quality."""
    db = store.db
    have = columns(db, "collect_samples")
    wanted = ["benchmark", "launch", "setting", "f_mem", "f_core", "time_ms", "power_w", "time_mad_ms",
              "time_median_ms", "power_source", "throttle_reasons", "warnings", "loop_s", "power_steady",
              "power_repeat_spread", "power_resolution", "overhead_s"]
    select = ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)
    ok = [dict(zip(wanted, r)) for r in db.execute(
        f"SELECT {select} FROM collect_samples WHERE gpu = ? AND status = 'ok'", (gpu,))]
    failed = db.execute("SELECT COUNT(*) FROM collect_samples WHERE gpu = ? AND status = 'failed'", (gpu,)).fetchone()
    clocks: dict[str, int] = {}
    sources: dict[str, int] = {}
    for r in ok:
        key = f"{r['f_mem']}:{r['f_core']}"
        clocks[key] = clocks.get(key, 0) + 1
        sources[r["power_source"]] = sources.get(r["power_source"], 0) + 1
    steady = [r["power_steady"] for r in ok]
    return {
        "gpu": gpu,
        "samples_ok": len(ok), "samples_failed": int(failed[0]),
        "benchmarks": len({r["benchmark"] for r in ok}), "launches": len({(r["benchmark"], r["launch"]) for r in ok}),
        "settings": sorted({r["setting"] for r in ok}),
        "clock_configs": dict(sorted(clocks.items())),
        "time_ms": _spread([r["time_ms"] for r in ok]), "power_w": _spread([r["power_w"] for r in ok]),
        "energy_per_launch_mj": _spread([r["time_ms"] * r["power_w"] for r in ok]),
        "time_relative_mad": _spread([r["time_mad_ms"] / r["time_median_ms"] for r in ok if r["time_median_ms"]]),
        "power_source": sources,
        "power_steady": {"steady": steady.count(1), "not_steady": steady.count(0), "unknown": steady.count(None)},
        "power_repeat_spread": _spread([r["power_repeat_spread"] for r in ok if r["power_repeat_spread"] is not None]),
        "power_resolution": _spread([r["power_resolution"] for r in ok if r["power_resolution"] is not None]),
        "overhead_s": _spread([r["overhead_s"] for r in ok if r["overhead_s"] is not None]),
        "throttled_samples": sum(1 for r in ok if (r["throttle_reasons"] or 0) & limiting),
        "samples_with_warnings": sum(1 for r in ok if json.loads(r["warnings"])),
        "measured_seconds": sum(r["loop_s"] or 0.0 for r in ok),
    }
