"""Measured branch shares: block counts of a run (here the emulator's) split the static estimator's
data-dependent branches as they went there, for the same launch and for a larger one.

``data_branch`` of ``tests/data/static/counted.cu``: an ``if (v > 0)`` and a ``while (v > 1) v >>= 1`` on
``v = in[i]``; with ``in`` uniform in [0, 4096) the loop runs about 10 times per thread, not the 7 that
the heuristic exit chance of 1/8 per test gives. The static estimates get the launch without the input's
contents (given them, the estimator reads them and needs no shares).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.paths import DATA

from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.branch_shares import branch_shares
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.counts.static.interp import Interpreter
from ptxstatic.emulator import emulate
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

COUNTED = DATA / "static" / "counted.ptx"
MODULE = parse_file(COUNTED)
LOOP_BLOCK = 5  # the body of the while loop (marker 11)


def data_launch(threads: int) -> Launch:
    """``threads`` threads in CTAs of 256 over the first ``threads`` of 4096 values uniform in [0, 4096)."""
    return Launch((threads // 256, 1, 1), (256, 1, 1), 0,
                  {"0": Buffer("s32", 4096, "random", seed=7), "1": Buffer("s32", 4096), "2": threads})


def unknown(launch: Launch) -> Launch:
    """The launch without the input buffer: its contents are unknown to the static estimator."""
    return Launch(launch.grid, launch.block, 0, {k: v for k, v in launch.args.items() if k != "0"})


def emulated(kernel: str, launch: Launch) -> BlockCounts:
    return emulate(MODULE, kernel, launch).counts


def test_the_same_launch_is_reproduced_on_every_block():
    launch = data_launch(512)
    measured = emulated("data_branch", launch)
    est = estimate_counts(bind(MODULE, "data_branch", unknown(launch)), profile=measured)
    for b, c in measured.of("data_branch").items():
        assert est.counts.of("data_branch")[b] == pytest.approx(c, rel=1e-3), b
    reasons = est.reasons["data_branch"]
    assert reasons[LOOP_BLOCK].endswith("split as in the measured run")  # still an estimate, and says from what
    assert any("branch(es) with their shares in the emulated counts" in n for n in est.notes)


def test_shares_from_a_small_run_transfer_to_a_large_launch():
    small, large = data_launch(256), data_launch(4096)
    truth = emulated("data_branch", large).of("data_branch")[LOOP_BLOCK]
    measured = estimate_counts(bind(MODULE, "data_branch", unknown(large)), profile=emulated("data_branch", small))
    heuristic = estimate_counts(bind(MODULE, "data_branch", unknown(large)))
    assert measured.counts.of("data_branch")[LOOP_BLOCK] == pytest.approx(truth, rel=0.03)
    assert heuristic.counts.of("data_branch")[LOOP_BLOCK] < 0.7 * truth


def test_shares_of_branches_the_counts_determine():
    launch = Launch((3, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 96), "1": 70})
    measured = emulated("guard_parity", launch).of("guard_parity")
    plan = Interpreter(MODULE, {}).plan("guard_parity")
    shares = branch_shares(plan, measured)
    # i < n: 70 of 96 threads go on; threadIdx.x % 3 == 0 for 24 of those 70
    by_count = {(measured[b], tuple(sorted(round(s, 6) for s in share))) for b, share in shares.items()}
    assert (96.0, (round(26 / 96, 6), round(70 / 96, 6))) in by_count
    assert (70.0, (round(24 / 70, 6), round(46 / 70, 6))) in by_count
    assert all(abs(sum(s) - 1) < 1e-9 for s in shares.values())


def test_the_out_of_budget_fallback_uses_the_measured_shares():
    launch = data_launch(512)
    measured = emulated("data_branch", launch)
    est = estimate_counts(bind(MODULE, "data_branch", unknown(launch)), max_work=10, profile=measured)
    assert "branch-probability" in est.method
    assert est.counts.of("data_branch")[LOOP_BLOCK] == pytest.approx(measured.of("data_branch")[LOOP_BLOCK],
                                                                      rel=1e-6)


def test_counts_of_another_kernel_or_build_are_refused():
    launch = data_launch(256)
    other = emulated("guard_parity", Launch((3, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 96), "1": 70}))
    with pytest.raises(PtxstaticError, match="of kernel guard_parity, not data_branch"):
        estimate_counts(bind(MODULE, "data_branch", launch), profile=other)
    stale = emulated("data_branch", launch)
    stale.counts["data_branch"][40] = 1.0
    with pytest.raises(PtxstaticError, match="another build"):
        estimate_counts(bind(MODULE, "data_branch", launch), profile=stale)


def ptxstatic(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True)


def test_cli_profile_on_the_emulator_feeds_blocks_of_a_larger_launch(tmp_path):
    buffers = ["--param", "0=buf:s32:4096:random:7", "--param", "1=buf:s32:4096"]
    counts = tmp_path / "small.json"
    p = ptxstatic("profile", str(COUNTED), "-k", "data_branch", "--grid", "1", "--block", "256", *buffers,
                  "--param", "2=256", "--emulate", "-o", str(counts))
    assert p.returncode == 0, p.stderr
    written = json.loads(counts.read_text())
    assert written["counts"]["source"] == "emulated" and written["verification"]["outputs_match"] is True
    assert written["device"] == "ptxstatic fake GPU"  # the fake device: the PTX emulator behind the GPU port

    large = ["--grid", "16", "--block", "256", "--param", "2=4096", "--format", "json"]
    p = ptxstatic("blocks", str(COUNTED), "-k", "data_branch", *large, "--profile", str(counts))
    assert p.returncode == 0, p.stderr
    loop = json.loads(p.stdout)["kernels"][0]["counts"]["data_branch"][str(LOOP_BLOCK)]
    truth = emulated("data_branch", data_launch(4096)).of("data_branch")[LOOP_BLOCK]
    assert loop == pytest.approx(truth, rel=0.03)

    p = ptxstatic("predict", str(COUNTED), "-k", "data_branch", "--profile", str(counts))
    assert p.returncode == 2 and "--profile needs a launch" in p.stderr, p.stderr
    p = ptxstatic("features", str(COUNTED), "-k", "data_branch", *large, "--counts", str(counts),
                  "--profile", str(counts))
    assert p.returncode == 2 and "with --counts there is none" in p.stderr, p.stderr


def test_cli_refuses_static_counts_as_a_profile(tmp_path):
    static = tmp_path / "static.json"
    launch = ["--grid", "1", "--block", "256", "--param", "2=256"]
    assert ptxstatic("blocks", str(COUNTED), "-k", "data_branch", *launch, "-o", str(static)).returncode == 0
    p = ptxstatic("blocks", str(COUNTED), "-k", "data_branch", *launch, "--profile", str(static))
    assert p.returncode == 2 and "static estimate" in p.stderr and "Traceback" not in p.stderr, p.stderr
