"""Hardware counters of a manifest's launches under Nsight Compute (``collect --counters``): the order that
spreads coverage over families, ncu's CSV as it writes it, the dataset kept from an H200 run, and a clear
error where ncu is missing."""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys

from support.paths import ROOT

from ptxstatic.collect.counters import CORE_METRICS, METRICS, ordered_tasks
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.toolchain.ncu import metric_value, parse_raw_csv, profile_command

COUNTERS = ROOT / "datasets" / "h200-counters" / "microbenchmarks-counters.sqlite"

# the first lines ncu 2025.3 writes with --csv --page raw --print-units base: messages, the header, the units,
# one row per launch (values quoted, thousands separators kept)
RAW = """==PROF== Connected to process 3121 (/usr/bin/python3.12)
==PROF== Profiling "gmem_copy_f32" - 0: 0%....50%....100% - 3 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device",\
"CC","dram__bytes_read.sum","gpu__time_duration.sum","lts__t_sector_hit_rate.pct"
"","","","","","","","","","","","byte","nsecond","%"
"0","3121","python3.12","h","gmem_copy_f32","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","268,468,224","174,272","n/a"
"1","3121","python3.12","h","gmem_triad","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","536870912","223040","49.87"
==PROF== Disconnected from process 3121
"""


def test_ncu_csv_rows_in_launch_order_with_base_units():
    rows = parse_raw_csv(RAW)
    assert [r["Kernel Name"] for r in rows] == ["gmem_copy_f32", "gmem_triad"]
    assert metric_value(rows[0]["dram__bytes_read.sum"]) == 268_468_224
    assert metric_value(rows[0]["gpu__time_duration.sum"]) == 174_272
    hit = [metric_value(r["lts__t_sector_hit_rate.pct"]) for r in rows]
    assert hit == [None, 49.87]


def test_the_profiler_never_changes_clocks_and_flushes_caches():
    argv = profile_command("ncu", list(CORE_METRICS), "out.csv", ["python3", "run.py"])
    assert argv[argv.index("--clock-control") + 1] == "none" and argv[argv.index("--cache-control") + 1] == "all"
    assert argv[-2:] == ["python3", "run.py"] and argv[argv.index("--print-units") + 1] == "base"


def test_every_benchmark_gets_its_middle_launch_before_any_gets_a_second():
    manifest = load_manifest(ROOT / "microbenchmarks" / "manifest.json")
    tasks = ordered_tasks(list(manifest.benchmarks))
    assert len(tasks) == sum(len(b.launches) for b in manifest.benchmarks)
    first = tasks[: len(manifest.benchmarks)]
    assert {t.bench.name for t in first} == {b.name for b in manifest.benchmarks}
    assert all(t.spec is t.bench.launches[len(t.bench.launches) // 2] for t in first)
    # the first round interleaves the source files: no two neighbours from one file while others remain
    sources = [t.bench.source for t in first[:10]]
    assert len(set(sources)) == 10


def test_the_h200_dataset_holds_the_counters_of_446_launches():
    with sqlite3.connect(COUNTERS) as db:
        rows = db.execute("SELECT benchmark, launch, metrics, tool FROM collect_counters WHERE gpu = 'h200'").fetchall()
    assert len(rows) == 446 and all(r[3].startswith("Version 2025.3") for r in rows)
    clocks = []
    for _, launch, metrics, _ in rows:
        m = json.loads(metrics)
        assert set(m) == set(METRICS) and m["gpu__time_duration.sum"] > 0 and json.loads(launch)["grid"]
        clocks.append(m["sm__cycles_elapsed.avg.per_second"] / 1e6)
    assert 1975 < statistics.median(clocks) < 1985  # the board's default 1980 MHz; no setting was changed


def test_without_ncu_the_command_says_so_and_exits_2(tmp_path):
    env = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "collect", "--counters", "--db", str(tmp_path / "c.sqlite"),
                        "--gpu", "h200", "--arch", "sm_90", "--manifest", str(ROOT / "microbenchmarks" /
                                                                              "manifest.json")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "needs Nsight Compute (ncu)" in p.stderr and "Traceback" not in p.stderr
