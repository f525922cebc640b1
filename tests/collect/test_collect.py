"""``ptxstatic collect`` end to end with the fake device (the emulator runs the kernels; time, power and clocks
are the fake board's): real nvcc output, the real instrumentation pass, real SQLite files, real subprocesses
killed with SIGKILL and SIGINT and restarted."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from support.paths import ROOT

from ptxstatic.collect.clock_settings import META_KEY
from ptxstatic.collect.runner import CollectOptions, collect, dataset_lock
from ptxstatic.emulator import emulate
from ptxstatic.gpu.fake import ENV
from ptxstatic.launch import Launch
from ptxstatic.ptx.parser import parse_text
from ptxstatic.report.schemas import json_schema

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
extern "C" __global__ void diverge(float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i;
    if (threadIdx.x & 1) { for (int k = 0; k < iters; ++k) x = sqrtf(x + 1.0f); }
    else { for (int k = 0; k < 2 * iters; ++k) x = x * 0.5f + 1.0f; }
    if (i < n) out[i] = x;
}
extern "C" __global__ void smem(float* out, int n) {
    __shared__ float buf[64];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = buf[(threadIdx.x + 1) % blockDim.x];
}
extern "C" __global__ void crash(float* out, int n) {
    if (threadIdx.x == 0) __trap();
    out[threadIdx.x % n] = 1.0f;
}
"""


def out(n: int) -> dict:
    return {"dtype": "f32", "count": n, "output": True}


def launch(grid: int, block: int, *args: object) -> dict:
    return {"grid": [grid], "block": [block], "args": {str(i): a for i, a in enumerate(args)}}


BENCHMARKS = [
    {"name": "chain", "source": "k.ptx", "launches": [launch(2, 64, out(128), 128, 8), launch(4, 64, out(256), 256, 16),
                                                      launch(2, 32, out(64), 64, 32)]},
    {"name": "copy", "source": "k.ptx", "launches": [
        launch(2, 64, {"dtype": "f32", "count": 512, "fill": "random", "seed": 3}, out(512), 512)]},
    {"name": "crash", "source": "k.ptx", "launches": [launch(1, 32, out(32), 32)]},
    {"name": "diverge", "source": "k.ptx", "launches": [launch(2, 64, out(128), 128, 4),
                                                        launch(1, 64, out(64), 64, 8)]},
    {"name": "smem", "source": "k.ptx", "launches": [launch(2, 64, out(128), 128)]},
]
TOTAL = sum(len(b["launches"]) for b in BENCHMARKS)


@pytest.fixture(scope="module")
def suite(tmp_path_factory, build_ptx) -> Path:
    """The test kernels compiled once with nvcc (the tests that take it skip without nvcc); manifests refer to
    the PTX."""
    d = tmp_path_factory.mktemp("suite")
    (d / "k.cu").write_text(KERNELS)
    (d / "k.ptx").write_text(build_ptx(d / "k.cu", "sm_90", ["-lineinfo"]).text)
    return d


def write_manifest(suite: Path, d: Path, benchmarks: list[dict] = BENCHMARKS, min_seconds: float = 0.2) -> Path:
    """A manifest in ``d`` whose sources are the suite's (relative names resolved against the suite)."""
    p = d / "manifest.json"
    benches = [{**b, "source": str(suite / b["source"])} for b in benchmarks]
    p.write_text(json.dumps({"suite": "t", "min_seconds": min_seconds, "benchmarks": benches}))
    return p


def fake_board(path: Path, **config: object) -> dict[str, str]:
    """An environment selecting a fake board whose settings live in ``path``."""
    path.write_text(json.dumps(config))
    return {**os.environ, ENV: str(path)}


def run(manifest: Path, db: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ptxstatic", "collect", "--manifest", str(manifest), "--db", str(db), "--gpu", "fake",
         "--device", "fake", *extra], capture_output=True, text=True, env=env)


def _interruptible() -> None:
    """In the child: Ctrl-C acts, even when the tests run where SIGINT is ignored (a background job)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(manifest: Path, db: Path, *extra: str, env: dict) -> subprocess.Popen:
    """A collect run in a session of its own: the only signals it gets are those its test sends (not one a
    process of another test sends to its process group)."""
    return subprocess.Popen(
        [sys.executable, "-m", "ptxstatic", "collect", "--manifest", str(manifest), "--db", str(db), "--gpu", "fake",
         "--device", "fake", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=_interruptible, start_new_session=True)


def rows(db: Path, sql: str, args: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
    finally:
        con.close()


def wait_for_samples(db: Path, proc: subprocess.Popen, n: int, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        count = rows(db, "SELECT COUNT(*) FROM collect_samples")
        if count and count[0][0] >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} samples after {timeout} s")


VOLATILE = {"id", "run_id", "started_at", "finished_at", "power_samples", "wall_s", "overhead_s"}


def dataset(db: Path) -> dict[str, list]:
    """Everything the dataset holds about the measurements, keyed by names rather than row ids."""
    bench = "(SELECT name FROM benchmarks WHERE id = {})"
    cols = [r[1] if r[1] != "benchmark_id" else bench.format("benchmark_id")
            for r in rows(db, "PRAGMA table_info(collect_samples)") if r[1] not in VOLATILE]
    return {
        "samples": sorted(rows(db, f"SELECT {', '.join(cols)} FROM collect_samples")),
        "measurements": sorted(rows(db, f"SELECT {bench.format('benchmark_id')}, launch, f_mem, f_core, time_ms, "
                                        "power_w, energy_mj, repeats, time_spread, power_spread FROM measurements")),
        "features": sorted(rows(db, "SELECT b.name, f.name, f.value FROM features f "
                                    "JOIN kernels k ON k.id = f.kernel_id JOIN benchmarks b ON b.id = k.benchmark_id")),
        "kernels": sorted(rows(db, f"SELECT {bench.format('benchmark_id')}, benchmark, launch, kernel, block_counts "
                                   "FROM collect_kernels")),
        "sequences": sorted(rows(db, "SELECT b.name, r.step, r.count, i.opcode FROM sequence_runs r "
                                     "JOIN items i ON i.id = r.item_id JOIN kernels k ON k.id = r.kernel_id "
                                     "JOIN benchmarks b ON b.id = k.benchmark_id")),
        "clocks": sorted(rows(db, "SELECT f_mem, f_core, is_default FROM clock_configs")),
    }


def same(a: object, b: object) -> bool:
    """Equal, floats up to rounding (the fake's energy counter and clock carry over from earlier samples)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def check_consistent(db: Path) -> None:
    """Each recorded sample exactly once; each ok sample with its measurement and its kernel's features."""
    keys = rows(db, "SELECT benchmark, launch, setting FROM collect_samples")
    assert len(keys) == len(set(keys))
    ok = rows(db, "SELECT benchmark_id, launch, f_mem, f_core FROM collect_samples WHERE status = 'ok'")
    measured = rows(db, "SELECT benchmark_id, launch, f_mem, f_core FROM measurements")
    assert sorted(ok) == sorted(measured)
    for (bench_id, *_) in ok:
        assert rows(db, "SELECT COUNT(*) FROM features f JOIN kernels k ON k.id = f.kernel_id "
                        "WHERE k.benchmark_id = ?", (bench_id,))[0][0] > 40


# --------------------------------------------------------------------------------------------- end to end
def test_collect_records_every_sample(suite, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "board.json"))
    db = tmp_path / "d.sqlite"
    summary = collect(CollectOptions(write_manifest(suite, tmp_path), db, "fake", "fake"))
    assert (summary.total, summary.written, summary.failed, summary.already) == (TOTAL, TOTAL, 1, 0)
    check_consistent(db)
    assert rows(db, "SELECT gpu, status FROM collect_runs") == [("fake", "finished")]

    # the faulting kernel is recorded as failed, and the samples after it were measured (the device recovered)
    (crash,) = rows(db, "SELECT status, error FROM collect_samples WHERE benchmark = 'crash'")
    assert crash[0] == "failed" and "trap" in crash[1]
    after = rows(db, "SELECT status FROM collect_samples WHERE id > (SELECT id FROM collect_samples "
                     "WHERE benchmark = 'crash')")
    assert after and all(s == "ok" for (s,) in after)

    # counts from the instrumented run equal what the emulator counts for the plain kernel
    module = parse_text((suite / "k.ptx").read_text())
    for launch_json, counts_json in rows(db, "SELECT launch, block_counts FROM collect_kernels"):
        stored = json.loads(counts_json)
        expected = emulate(module, stored["kernel"], Launch.from_dict(json.loads(launch_json))).counts.counts
        assert {f: {int(b): c for b, c in bc.items()} for f, bc in stored["counts"].items()} == {
            f: {b: float(c) for b, c in bc.items()} for f, bc in expected.items()}

    for (time_ms, median, chunks, kept, launches, loop_s, energy, power, source, sampled, repeats, spread,
         m_energy, power_repeats, steady) in rows(
            db, "SELECT s.time_ms, s.time_median_ms, s.chunks, s.chunks_kept, s.launches, s.loop_s, s.energy_mj, "
                "s.power_w, s.power_source, s.sampled_power_w, m.repeats, m.time_spread, m.energy_mj, "
                "s.power_repeats, s.power_steady FROM collect_samples s JOIN measurements m "
                "ON m.benchmark_id = s.benchmark_id AND m.launch = s.launch"):
        assert power_repeats == 3 and steady == 1  # the fake's power is steady from the start
        assert chunks >= 15 and kept == chunks - 3  # each repeat's slow first chunk is an outlier, dropped
        assert time_ms == pytest.approx(median) and spread == 0
        assert loop_s >= 0.2 and launches == repeats
        assert source == "energy-counter" and power == pytest.approx(energy / 1e3 / loop_s)
        assert sampled == pytest.approx(power)
        assert m_energy == pytest.approx(power * time_ms)


def test_features_follow_the_launch(suite, tmp_path, monkeypatch):
    """Per-launch features scale with the work: chain with 16 iterations on 256 threads executes more
    instructions per thread than with 8, and totals scale with threads."""
    monkeypatch.setenv(ENV, str(tmp_path / "board.json"))
    db = tmp_path / "d.sqlite"
    collect(CollectOptions(write_manifest(suite, tmp_path), db, "fake", "fake", only="chain"))
    f = {(b, n): v for b, n, v in dataset(db)["features"]}
    assert f[("chain_1", "instructions")] > f[("chain_0", "instructions")]
    assert f[("chain_1", "threads_per_cta")] * f[("chain_1", "ctas")] == 256
    assert f[("chain_1", "arith_total")] == pytest.approx(f[("chain_1", "arith")] * 256)
    # the two feature families agree on the executed instruction count
    assert f[("chain_1", "portable.instructions")] == pytest.approx(f[("chain_1", "instructions_total")])
    if shutil.which("ptxas"):  # registers and occupancy on the measured GPU come from ptxas -v
        assert f[("chain_0", "portable.registers")] > 0 and 0 < f[("chain_0", "portable.occupancy")] <= 1


def test_collected_dataset_trains_evaluates_and_predicts(suite, tmp_path, monkeypatch):
    """The retraining sequence on a collected dataset: each launch is a sample with its launch features, splits
    keep a kernel's launches together, and the forests train on the launch features and are scored."""
    pytest.importorskip("sklearn")
    from ptxstatic.dataset.dataset import load_dataset
    from ptxstatic.dataset.store import DatasetStore
    from ptxstatic.models.training.train import train_forest

    monkeypatch.setenv(ENV, str(tmp_path / "board.json"))
    db = tmp_path / "d.sqlite"
    collect(CollectOptions(write_manifest(suite, tmp_path, min_seconds=0.02), db, "fake", "fake"))
    data = load_dataset(DatasetStore(db), "fake")
    assert len(data) == TOTAL - 1 and len(data.clocks) == 1  # the crash is not a sample
    assert len(set(data.grouping("benchmark"))) == 4  # chain, copy, diverge, smem: one group per kernel
    names = data.absolute_feature_names()
    assert {"threads_per_cta", "ctas", "instructions_total"} <= set(names)
    X = data.feature_matrix(names)
    chains = [i for i, n in enumerate(data.names) if n.startswith("chain")]
    assert len({tuple(X[i]) for i in chains}) == 3  # three launches of one kernel, three feature vectors

    grid = {"n_estimators": [8], "max_features": [1.0], "criterion": ["squared_error"]}
    for target in ("time", "power"):
        train_forest(target, data, tmp_path / "models" / f"forest_{target}", grid=grid)
    card = json.loads((tmp_path / "models" / "forest_time" / "card.json").read_text())
    assert card["features_per_thread"] is False and "ctas" in card["config"]["features"]

    ev = subprocess.run([sys.executable, "-m", "ptxstatic", "evaluate", "--model", str(tmp_path / "models"),
                         "--data", str(db), "--format", "json"], capture_output=True, text=True)
    assert ev.returncode == 0, ev.stderr
    assert set(json.loads(ev.stdout)["evaluation"]["absolute"]) == {"forest_time", "forest_power"}

    # predict estimates absolute time from the launch itself (bottleneck model): it does not use uncalibrated forests
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "predict", str(suite / "k.ptx"), "--model",
                        str(tmp_path / "models" / "forest_time"), "-k", "chain"], capture_output=True, text=True)
    assert p.returncode == 2 and "a forest model; predict uses DVFS models" in p.stderr


# --------------------------------------------------------------------------------------------------- resume
def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(suite, tmp_path):
    manifest = write_manifest(suite, tmp_path)
    reference = tmp_path / "reference.sqlite"
    p = run(manifest, reference, env=fake_board(tmp_path / "a.json"))
    assert p.returncode == 0, p.stderr

    db = tmp_path / "killed.sqlite"
    slow = fake_board(tmp_path / "b.json", wall_seconds_per_call=0.3)
    proc = start(manifest, db, env=slow)
    wait_for_samples(db, proc, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = rows(db, "SELECT COUNT(*) FROM collect_samples")[0][0]
    assert 3 <= written < TOTAL
    check_consistent(db)
    before = dataset(db)["samples"]

    p = run(manifest, db, env=fake_board(tmp_path / "c.json"))
    assert p.returncode == 0, p.stderr
    assert f"{TOTAL - written} samples written" in p.stdout and f"{written} of {TOTAL} were already there" in p.stdout
    check_consistent(db)
    after = dataset(db)
    assert set(before) <= set(after["samples"])  # nothing finished before the kill was measured again
    assert same(after, dataset(reference))
    assert [s for (s,) in rows(db, "SELECT status FROM collect_runs ORDER BY id")] == ["killed", "finished"]

    p = run(manifest, db, "--format", "json", env=fake_board(tmp_path / "c.json"))
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    jsonschema.validate(report, json_schema("collect"), cls=jsonschema.Draft202012Validator)
    assert report["command"] == "collect" and report["kernels"] == [] and report["errors"] == []
    assert report["run"]["written"] == 0 and report["run"]["already"] == TOTAL
    stats = report["dataset"]
    assert (stats["samples_ok"], stats["samples_failed"]) == (TOTAL - 1, 1)
    assert stats["launches"] == TOTAL - 1 and stats["clock_configs"] == {"2619:1755": TOTAL - 1}
    times = [t for (t,) in rows(db, "SELECT time_ms FROM collect_samples WHERE status = 'ok'")]
    assert stats["time_ms"]["min"] == min(times) and stats["time_ms"]["max"] == max(times)
    assert dataset(db) == after


def test_retry_failed_measures_failures_again(suite, tmp_path):
    manifest = write_manifest(suite, tmp_path, [b for b in BENCHMARKS if b["name"] in ("crash", "smem")])
    db = tmp_path / "d.sqlite"
    env = fake_board(tmp_path / "b.json")
    assert run(manifest, db, env=env).returncode == 0
    p = run(manifest, db, "--retry-failed", env=env)
    assert p.returncode == 0 and "1 samples written (1 failed)" in p.stdout
    assert rows(db, "SELECT benchmark, status FROM collect_samples ORDER BY benchmark") == [
        ("crash", "failed"), ("smem", "ok")]


# --------------------------------------------------------------------------------------------------- clocks
def test_clocks_without_permission_change_nothing(suite, tmp_path):
    board = tmp_path / "board.json"
    env = fake_board(board, clock_permission=False)
    original = board.read_text()
    db = tmp_path / "d.sqlite"
    p = run(write_manifest(suite, tmp_path), db, "--clocks", "all", env=env)
    assert p.returncode == 2
    assert "not permitted" in p.stderr and "Nothing was changed" in p.stderr and "Traceback" not in p.stderr
    assert board.read_text() == original
    assert rows(db, "SELECT COUNT(*) FROM collect_samples") == [(0,)]


def test_clock_sweep_says_what_it_changed_and_restores(suite, tmp_path):
    board = tmp_path / "board.json"
    env = fake_board(board, clock_permission=True)
    db = tmp_path / "d.sqlite"
    manifest = write_manifest(suite, tmp_path, [BENCHMARKS[0]])
    p = run(manifest, db, "--clocks", "2619:1410,1593:1005", env=env)
    assert p.returncode == 0, p.stderr
    assert "set applications clocks to mem 2619 MHz, core 1410 MHz" in p.stderr
    assert "restored applications clocks to mem 2619 MHz, core 1755 MHz" in p.stderr
    assert "clock settings used and restored: 2619:1410, 1593:1005" in p.stdout
    state = json.loads(board.read_text())
    assert state["clocks"] == {"mem_mhz": 2619, "core_mhz": 1755}
    assert state["changes"] == [[2619, 1410], [1593, 1005], [2619, 1755]]
    times = dict(((s, lk), t) for s, lk, t in rows(db, "SELECT setting, launch, time_ms FROM collect_samples"))
    assert rows(db, "SELECT DISTINCT f_mem, f_core FROM measurements ORDER BY 1, 2") == [(1593, 1005), (2619, 1410)]
    for lk in {lk for _, lk in times}:
        assert times[("1593:1005", lk)] > times[("2619:1410", lk)]  # lower clocks, longer kernels
    assert rows(db, "SELECT value FROM meta WHERE key = ?", (META_KEY,)) == []


#: the sweep the signal tests interrupt after its first sample: two settings, so that at least 13 samples of
#: about 3 s each (the fake board's 0.5 s per timed loop) are still to run when the signal is sent, however
#: busy the machine running the tests is
SWEEP = "1593:1005,2619:1410"


def test_interrupted_sweep_restores_clocks(suite, tmp_path):
    board = tmp_path / "board.json"
    env = fake_board(board, clock_permission=True, wall_seconds_per_call=0.5)
    db = tmp_path / "d.sqlite"
    proc = start(write_manifest(suite, tmp_path), db, "--clocks", SWEEP, env=env)
    wait_for_samples(db, proc, 1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err and "restored applications clocks" in err, err
    assert json.loads(board.read_text())["clocks"] == {"mem_mhz": 2619, "core_mhz": 1755}, err


def test_sigkill_during_a_sweep_is_repaired_by_the_next_run(suite, tmp_path):
    board = tmp_path / "board.json"
    env = fake_board(board, clock_permission=True, wall_seconds_per_call=0.5)
    db = tmp_path / "d.sqlite"
    manifest = write_manifest(suite, tmp_path)
    proc = start(manifest, db, "--clocks", SWEEP, env=env)
    wait_for_samples(db, proc, 1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert json.loads(board.read_text())["clocks"] == {"mem_mhz": 1593, "core_mhz": 1005}  # left changed
    assert rows(db, "SELECT COUNT(*) FROM meta WHERE key = ?", (META_KEY,)) == [(1,)]
    p = run(manifest, db, "--only", "smem", env={**env, ENV: str(board)})
    assert p.returncode == 0, p.stderr
    assert "restored applications clocks left changed by an interrupted run: mem 2619 MHz, core 1755 MHz" in p.stderr
    assert json.loads(board.read_text())["clocks"] == {"mem_mhz": 2619, "core_mhz": 1755}


def test_bad_clock_lists_are_refused():
    from ptxstatic.collect.clock_settings import parse_clocks
    from ptxstatic.errors import PtxstaticError

    supported = [(2619, 1005), (2619, 1755)]
    assert parse_clocks("all", supported, 2619) == supported
    assert parse_clocks("1005, 2619:1755,1005", supported, 2619) == [(2619, 1005), (2619, 1755)]
    for spec, message in [("2619:1500", "not supported"), ("fast", "bad item"), (",", "no clock pairs")]:
        with pytest.raises(PtxstaticError, match=message):
            parse_clocks(spec, supported, 2619)


# ------------------------------------------------------------------------------------------- board quirks
def test_without_an_energy_counter_power_is_sampled_with_a_warning(suite, tmp_path, monkeypatch):
    board = tmp_path / "board.json"
    board.write_text(json.dumps({"energy_counter": False}))
    monkeypatch.setenv(ENV, str(board))
    db = tmp_path / "d.sqlite"
    collect(CollectOptions(write_manifest(suite, tmp_path, [BENCHMARKS[4]]), db, "fake", "fake"))
    ((source, power, sampled, energy, loop_s, warnings),) = rows(
        db, "SELECT power_source, power_w, sampled_power_w, energy_mj, loop_s, warnings FROM collect_samples")
    assert source == "sampled" and power == sampled and energy == pytest.approx(power * loop_s * 1e3)
    assert "no energy-counter reading" in json.loads(warnings)[0]


def test_bad_launch_is_a_failed_sample_not_a_crash(suite, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "board.json"))
    benches = [{"name": "smem", "source": "k.ptx", "launches": [launch(1, 32, out(32), 32, 99)]},
               {"name": "chain", "kernel": "nope", "source": "k.ptx", "launches": [launch(1, 32, out(32), 32, 1)]},
               BENCHMARKS[1]]
    db = tmp_path / "d.sqlite"
    summary = collect(CollectOptions(write_manifest(suite, tmp_path, benches), db, "fake", "fake"))
    assert summary.failed == 2
    errors = dict(rows(db, "SELECT benchmark, error FROM collect_samples WHERE status = 'failed'"))
    assert "has no parameter 2" in errors["smem"] and "no kernel named 'nope'" in errors["chain"]


def test_cli_errors_exit_2_without_traceback(tmp_path):
    p = run(tmp_path / "missing.json", tmp_path / "d.sqlite")
    assert p.returncode == 2 and "cannot read the manifest" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "k.cu").write_text("")
    manifest = write_manifest(tmp_path, tmp_path, [{"name": "x", "source": "k.cu", "launches": [{}]}])
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "collect", "--manifest", str(manifest), "--db",
                        str(tmp_path / "d.sqlite"), "--gpu", "g", "--device", "cuda"], capture_output=True, text=True)
    if p.returncode == 0:
        pytest.skip("a CUDA GPU is present")
    assert p.returncode == 2 and p.stderr.count("error:") == 1 and "Traceback" not in p.stderr


# --------------------------------------------------------------------------------------------- the worker
def test_worker_restarts_after_a_sticky_fault_and_a_hang(suite, tmp_path, monkeypatch):
    from ptxstatic.gpu.device import DeviceFault
    from ptxstatic.gpu.worker import WorkerGpu

    board = tmp_path / "board.json"
    board.write_text(json.dumps({"wall_seconds_per_call": 60.0}))
    monkeypatch.setenv(ENV, str(board))
    ptx = (suite / "k.ptx").read_text()
    gpu = WorkerGpu(0, timeout_s=5.0, factory="ptxstatic.gpu.fake:worker_gpu")
    try:
        m = gpu.load(ptx)
        bad = gpu.prepare(m, "crash", Launch.from_dict(launch(1, 32, out(32), 32)))
        with pytest.raises(DeviceFault, match="trap") as fault:
            gpu.run(bad)
        assert fault.value.sticky
        with pytest.raises(DeviceFault, match="unusable"):
            gpu.load(ptx)
        gpu.reset()
        m = gpu.load(ptx)
        good = gpu.prepare(m, "smem", Launch.from_dict(launch(1, 64, out(64), 64)))
        gpu.run(good)
        with pytest.raises(DeviceFault, match="did not finish in 5 s"):
            gpu.time(good, 1, 1)  # the fake sleeps a minute: taken for a hang, the worker is stopped
        m = gpu.load(ptx)  # a fresh worker
        assert gpu.info().arch == "sm_90" and m > 0
    finally:
        gpu.close()


# ---------------------------------------------------------------------------------------- the dataset's owner
SUITE_MANIFEST = ROOT / "microbenchmarks" / "manifest.json"


def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(tmp_path: Path):
    """An SQLite file of something else is refused before anything is written to it."""
    db = tmp_path / "theirs.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
    before = db.read_bytes()
    p = run(SUITE_MANIFEST, db, "--only", "fp32_add_chain")
    assert p.returncode == 2
    assert p.stderr.strip().endswith("an SQLite database of something else (tables: orders), not a ptxstatic "
                                     "dataset; nothing was written to it: give a new file")
    assert db.read_bytes() == before


def test_a_second_collect_on_a_dataset_being_written_is_refused(tmp_path: Path):
    """One collect at a time per dataset: the second is refused at once (it failed with IntegrityError
    half-way before)."""
    db = tmp_path / "run.sqlite"
    held = dataset_lock(str(db))
    try:
        p = run(SUITE_MANIFEST, db, "--only", "fp32_add_chain")
    finally:
        held.close()
    assert p.returncode == 2
    assert "another ptxstatic collect is writing this dataset" in p.stderr
    assert not db.exists()
