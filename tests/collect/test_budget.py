"""``collect --budget``: the priority order, the cost model built from measured samples, and a run on the fake
device paced at real time (``time_scale`` 1: its loops take as long as they say) that ends inside its budget,
leaves a resumable dataset, and is completed by the next run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.kernels import HAND, hand_launch

from ptxstatic.collect.manifest import load_manifest
from ptxstatic.collect.plan import Budget, ordered
from ptxstatic.collect.runner import CollectOptions, collect
from ptxstatic.gpu.fake import ENV
from ptxstatic.limits import BUDGET_RESERVE_S

FAMILIES = {"a": ["a1", "a2"], "b": ["b1"], "c": ["c1", "c2"]}  # source file -> its benchmarks


def manifest(d: Path, launches: int = 3, min_seconds: float = 0.1) -> Path:
    """Three families (source files) of the hand kernel, ``launches`` launches per benchmark."""
    benches = []
    for family, names in FAMILIES.items():
        (d / f"{family}.ptx").write_text(HAND)
        benches += [{"name": n, "source": f"{family}.ptx", "kernel": "hand",
                     "launches": [hand_launch(1 + i, 64, 64 * (1 + i)).to_dict() for i in range(launches)]}
                    for n in names]
    path = d / "manifest.json"
    path.write_text(json.dumps({"suite": "t", "min_seconds": min_seconds, "benchmarks": benches}))
    return path


def test_order_spreads_over_families_and_benchmarks_before_repeating_launches(tmp_path):
    benches = load_manifest(manifest(tmp_path)).benchmarks
    tasks = ordered([None], list(benches), set())
    names = [(b.name, i) for _, b, i, _ in tasks]
    # round 1: every benchmark's middle launch, the families interleaved; then the launches around it
    assert names[:5] == [("a1", 1), ("b1", 1), ("c1", 1), ("a2", 1), ("c2", 1)]
    assert {n for n, i in names[5:]} == {"a1", "a2", "b1", "c1", "c2"} and {i for _, i in names[5:]} == {0, 2}
    assert [i for _, i in names[5:10]] == [0] * 5
    # what is done is left out, and a clock sweep repeats the order per setting
    done = {("b1", benches[2].launches[1].key, "default")}
    assert ("b1", 1) not in [(b.name, i) for _, b, i, _ in ordered([None], list(benches), done)]
    swept = ordered([(2619, 1755), (1593, 1005)], list(benches), set())
    assert [p for p, *_ in swept] == [(2619, 1755)] * 15 + [(1593, 1005)] * 15


def test_the_cost_of_a_sample_comes_from_the_samples_measured_before():
    budget = Budget(100.0)
    assert budget.estimate(1.0) == 1.0  # nothing measured yet: the measuring alone (loops as long as asked)
    for overhead in (0.1, 0.2, 0.15):
        budget.record(wall_s=1.2 + overhead, loop_wall_s=1.2, measured_s=1.2, nominal_s=1.0)
    # the loops ran 1.2 s for every 1.0 s asked (warm-up, repeats) at the board's pace; the largest overhead
    assert budget.estimate(1.0) == pytest.approx(1.2 + 0.2)
    assert budget.overhead() == {"median_s": pytest.approx(0.15), "high_s": pytest.approx(0.2)}
    budget.started = time.monotonic() - 100.0 + 1.0 + BUDGET_RESERVE_S
    assert budget.fits(0.1) and not budget.fits(1.0)
    slow = Budget(100.0)
    slow.record(wall_s=0.5, loop_wall_s=0.0, measured_s=1.0, nominal_s=1.0)  # a device whose loops cost no wall
    assert slow.estimate(2.0) == pytest.approx(0.5)


def test_a_budgeted_run_ends_in_time_with_the_first_launches_first_and_resumes(tmp_path, monkeypatch):
    board = tmp_path / "board.json"
    board.write_text(json.dumps({"time_scale": 1.0}))
    monkeypatch.setenv(ENV, str(board))
    path, db = manifest(tmp_path), tmp_path / "d.sqlite"
    budget = 6.0
    started = time.monotonic()
    summary = collect(CollectOptions(path, db, "fake", "fake", budget_s=budget, started=started))
    elapsed = time.monotonic() - started
    assert elapsed <= budget and summary.elapsed_s <= budget
    assert summary.left > 0 and summary.written + summary.left == summary.total == 15
    assert summary.overhead is not None and summary.overhead["median_s"] < 0.3
    con = sqlite3.connect(db)
    measured = [(b, json.loads(lk)["grid"][0] - 1) for b, lk in con.execute(
        "SELECT benchmark, launch FROM collect_samples ORDER BY id")]
    order = [(b.name, i) for _, b, i, _ in ordered([None], list(load_manifest(path).benchmarks), set())]
    assert measured == order[:len(measured)]  # a prefix of the priority order
    assert con.execute("SELECT status FROM collect_runs").fetchall() == [("budget",)]
    con.close()

    p = subprocess.run([sys.executable, "-m", "ptxstatic", "collect", "--manifest", str(path), "--db", str(db),
                        "--gpu", "fake", "--device", "fake", "--budget", "600"], capture_output=True, text=True,
                       env={**os.environ, ENV: str(board)})
    assert p.returncode == 0, p.stderr
    assert f"{summary.left} samples written (0 failed), {summary.written} of 15 were already there" in p.stdout
    assert "budget 600 s" in p.stdout and "nothing left" in p.stdout
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM collect_samples WHERE status = 'ok'").fetchone() == (15,)
    assert [s for (s,) in con.execute("SELECT status FROM collect_runs ORDER BY id")] == ["budget", "finished"]
