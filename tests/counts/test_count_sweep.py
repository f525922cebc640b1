"""Static block counts over a launch-size sweep, 2^10 to 2^26 threads, against closed forms worked out from
``tests/data/static/sweep.cu`` (and against the functional emulator on the small launches), and the work
the estimator does bounded where control flow depends on data or on the CTA index in other ways.

Every expected value below is derived from the CUDA source: the block holding ``MARK(k)`` runs exactly as
often as that source line does.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from support.paths import DATA as TEST_DATA
from support.paths import FIXTURES
from test_static_counts import at_markers

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.cli.main import cli
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import STATIC_MAX_THREADS
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

DATA = TEST_DATA / "static"
SIZES = [10, 14, 18, 22, 26]  # log2 of the launch's threads (about)
MAX_CORNER_CTAS = 64  # a class search interprets a handful of CTAs, never the grid


@pytest.fixture(scope="module")
def sweep():
    return parse_file(DATA / "sweep.ptx")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def matmul_case(k: int) -> tuple[Launch, dict[int, int]]:
    n = (1 << (k // 2)) + 3  # partial tiles in both dimensions
    g = ceil_div(n, 16)
    return Launch((g, g, 1), (16, 16, 1), 0, {"3": n}), {0: n * n, 1: n * n * n}


def reduce_case(k: int) -> tuple[Launch, dict[int, int]]:
    n = (1 << k) - 5
    ctas = ceil_div(n, 256)
    # every thread runs the halving loop log2(256) = 8 times; in each CTA, s = 128, 64, ..., 1 threads add
    return Launch((ctas, 1, 1), (256, 1, 1), 0, {"2": n}), {2: n, 3: ctas * 256 * 8, 4: ctas * 255, 5: ctas}


def grid_stride_case(k: int) -> tuple[Launch, dict[int, int]]:
    n = 7 * (1 << k) + 13  # every index below n once, whatever the grid
    return Launch(((1 << k) // 1024, 1, 1), (256, 1, 1), 0, {"1": 2.0, "2": n}), {6: n}


def stencil_case(k: int) -> tuple[Launch, dict[int, int]]:
    w = h = (1 << (k // 2)) + 5
    launch = Launch((ceil_div(w, 32), ceil_div(h, 8), 1), (32, 8, 1), 0, {"2": w, "3": h})
    return launch, {7: w * h, 8: (w - 2) * (h - 2)}


CASES = {"matmul": matmul_case, "reduce_sum": reduce_case, "grid_stride_scale": grid_stride_case,
         "stencil5": stencil_case}


@pytest.mark.parametrize("k", SIZES)
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_counts_equal_the_closed_form_at_every_launch_size(sweep, kernel, k):
    launch, expected = CASES[kernel](k)
    est = estimate_counts(bind(sweep, kernel, launch), max_seconds=60)
    assert {m: c for m, c in at_markers(sweep, est, kernel).items() if m in expected} == {
        m: (float(v), True) for m, v in expected.items()}
    assert est.exact
    cfg = build_cfg(sweep.function(kernel))
    assert est.counts.counts[kernel][cfg.entry] == launch.blocks * launch.threads_per_block
    if launch.blocks * launch.threads_per_block > STATIC_MAX_THREADS:
        interpreted = int(re.search(r"(\d+) corner CTAs interpreted", est.method).group(1))
        assert interpreted <= MAX_CORNER_CTAS, est.method


def _buffers(kernel: str, launch: Launch, size: int) -> Launch:
    module = parse_file(DATA / "sweep.ptx")
    fn = next(k for k in module.kernels if k.name == kernel)
    args = dict(launch.args)
    for i, decl in enumerate(fn.params or ()):
        if decl.dtype in ("u64", "b64") and str(i) not in args:
            args[str(i)] = Buffer("f32", size, "random", seed=i)
    return Launch(launch.grid, launch.block, launch.shared_bytes + 1024 * 4, args)


@pytest.mark.parametrize("k", [10, 12])
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_counts_equal_the_emulator_on_small_launches(sweep, kernel, k):
    emulator = pytest.importorskip("ptxstatic.emulator")
    launch, _ = CASES[kernel](k)
    launch = _buffers(kernel, launch, 8 * (1 << k) + 64)
    emulated = emulator.emulate(sweep, kernel, launch, max_steps=50_000_000).counts
    est = estimate_counts(bind(sweep, kernel, launch), max_seconds=60)
    assert est.exact
    assert est.counts.counts == emulated.counts


def test_data_branch_in_a_grid_stride_loop_keeps_the_loop_exact(sweep):
    n = 100_000_000
    est = estimate_counts(bind(sweep, "grid_stride_positive", Launch((4096, 1, 1), (256, 1, 1), 0, {"2": n})))
    marks = at_markers(sweep, est, "grid_stride_positive")
    assert marks[9] == (n, True) and marks[11] == (n, True)  # the loop body: every index once
    assert marks[10] == (n / 2, False)  # the branch on x[i]: half, flagged
    assert "budget" not in est.method


def test_printf_in_a_loop_keeps_the_loop_exact(sweep):
    est = estimate_counts(bind(sweep, "printf_loop", Launch((2, 1, 1), (32, 1, 1), 0, {"1": 10_000_000})))
    assert at_markers(sweep, est, "printf_loop")[12] == (64 * 10_000_000, True)
    assert "budget" not in est.method


def test_classes_of_ctas_with_different_paths_are_counted_exactly_up_to_the_budget(sweep):
    small = estimate_counts(bind(sweep, "triangle_blocks", Launch((100, 1, 1), (32, 1, 1), 0, {})))
    assert at_markers(sweep, small, "triangle_blocks")[13] == (32 * sum(range(100)), True)
    # every CTA takes a different path: past the CTA budget the rest is counted from corners, flagged
    big = estimate_counts(bind(sweep, "triangle_blocks", Launch((200_000, 1, 1), (32, 1, 1), 0, {})), max_seconds=60)
    count, exact = at_markers(sweep, big, "triangle_blocks")[13]
    assert not exact and "without proof" in " ".join(big.reasons["triangle_blocks"].values())
    assert count == pytest.approx(32 * sum(range(200_000)), rel=1e-3)  # the trip count is affine in the CTA


def test_control_not_affine_in_the_cta_index_is_exact_when_small_and_flagged_when_large(sweep):
    small = estimate_counts(bind(sweep, "flat_border", Launch((40, 1, 1), (256, 1, 1), 0, {"1": 100, "2": 10_000})))
    assert at_markers(sweep, small, "flat_border")[14] == (200.0, True)  # two border columns of 100 rows
    big = estimate_counts(bind(sweep, "flat_border", Launch((8192, 1, 1), (256, 1, 1), 0, {"1": 1024, "2": 1 << 21})))
    assert "sampled" in big.method and not any(big.counts.exact["flat_border"].values())
    assert any("rem" in r for r in big.reasons["flat_border"].values())
    assert at_markers(sweep, big, "flat_border")[14][0] == pytest.approx(2 * 2048, rel=0.25)  # 2048 rows


def test_time_budget_stops_and_flags_what_it_did_not_count(sweep):
    launch = Launch((64, 1, 1), (256, 1, 1), 0, {"2": 1 << 14})
    est = estimate_counts(bind(sweep, "reduce_sum", launch), max_seconds=1e-9)
    assert "time budget" in est.method and not est.exact
    cfg = build_cfg(sweep.function("reduce_sum"))
    assert est.counts.counts["reduce_sum"][cfg.entry] == pytest.approx(64 * 256)
    assert all("time budget" in r for r in est.reasons["reduce_sum"].values())


def test_straight_line_kernel_with_data_branches_is_interpreted_not_estimated():
    module = parse_file(DATA / "straight_line.ptx")
    launch = Launch((108, 1, 1), (128, 1, 1), 0, {"3": 1.0})
    est = estimate_counts(bind(module, "straight_line", launch), max_seconds=60)
    counts = est.counts.counts["straight_line"]
    cfg = build_cfg(module.function("straight_line"))
    assert "interpreted" in est.method and "budget" not in est.method
    assert counts[cfg.entry] == 108 * 128 and sum(counts[b] for b in cfg.exits) == 108 * 128
    flagged = est.reasons["straight_line"]
    assert flagged and all("data-dependent branch" in r for r in flagged.values())
    assert {counts[b] for b in flagged} == {108 * 128 / 2}  # each side of every `if (t > ...)`: half


def test_cli_flags_a_fallback_in_text_and_json(sweep):
    runner = CliRunner()
    args = ["blocks", str(DATA / "sweep.ptx"), "-k", "reduce_sum", "--launch", "64/256", "--param", "2=16384"]
    slow = runner.invoke(cli, [*args, "--format", "json", "--max-seconds", "1e-9"])
    assert slow.exit_code == 0, slow.output
    (out,) = json.loads(slow.output)["kernels"]
    assert out["all_exact"] is False and "time budget" in out["method"]
    assert all(not e for e in out["exact"]["reduce_sum"].values() if e is not None) and out["reasons"]
    fast = runner.invoke(cli, args)
    assert fast.exit_code == 0 and "estimated" not in fast.output.replace("0 estimated", "")
    bad = runner.invoke(cli, [*args, "--max-seconds", "0"])
    assert bad.exit_code == 2 and "max-seconds" in bad.output


def test_cta_index_passed_to_a_device_function_is_not_taken_for_uniform():
    """``min(blockDim.x, n - blockIdx.x * blockDim.x)`` through a call (nvcc -G): CTAs differ."""
    module = parse_file(FIXTURES / "nvcc" / "sm_80" / "G" / "dynamic_shared.ptx")
    kernel = "_Z18dyn_shared_reverseIfEvPT_i"
    est = estimate_counts(bind(module, kernel, Launch((3, 1, 1), (64, 1, 1), 256, {"1": 150})))
    body = next(b.id for b in build_cfg(module.function(kernel)).blocks if "$L__BB2_1" in b.labels)
    assert est.counts.counts[kernel][body] == 150 and est.exact  # 64 + 64 + 22 threads copy an element
    big = estimate_counts(bind(module, kernel, Launch((8192, 1, 1), (256, 1, 1), 1024, {"1": 2_000_000})))
    assert not big.exact and any("min.s32" in r for r in big.reasons[kernel].values())  # min is not affine


def test_cta_dependence_through_device_functions_stays_exact(sweep):
    """The index returned by one call and compared in another (both not inlined)."""
    for grid, n in [(3, 700), (70_000, 17_000_003)]:
        est = estimate_counts(bind(sweep, "guard_via_calls", Launch((grid, 1, 1), (256, 1, 1), 0, {"1": n})))
        assert at_markers(sweep, est, "guard_via_calls")[15] == (n, True) and est.exact
        assert "classes" in est.method
    emulator = pytest.importorskip("ptxstatic.emulator")
    launch = Launch((3, 1, 1), (256, 1, 1), 0, {"0": Buffer("f32", 768), "1": 700})
    assert estimate_counts(bind(sweep, "guard_via_calls", launch)).counts.counts == emulator.emulate(
        sweep, "guard_via_calls", launch).counts.counts


def test_predict_shows_whether_its_block_counts_are_exact():
    runner = CliRunner()
    args = ["predict", str(DATA / "sweep.ptx"), "--format", "json", "--launch", "64/256"]
    data = runner.invoke(cli, [*args, "-k", "grid_stride_positive", "--param", "2=100000"])
    assert data.exit_code == 0, data.output
    (kernel,) = json.loads(data.output)["kernels"]
    counts = kernel["block_counts"]
    assert counts["exact"] is False and counts["estimated"] >= 1
    assert any("data-dependent branch" in r for r in counts["reasons"])
    assert any("exact: false" in n for n in kernel["notes"])
    exact = runner.invoke(cli, [*args, "-k", "reduce_sum", "--param", "2=16000"])
    (kernel,) = json.loads(exact.output)["kernels"]
    assert kernel["block_counts"]["exact"] is True and kernel["block_counts"]["reasons"] == []
