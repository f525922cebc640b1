"""Static block-count estimates against counts derived by hand from the CUDA source.

``tests/data/static/counted.cu`` marks the code of interest with ``pmevent k`` (see the file); the block
holding marker ``k`` is entered exactly as often as that source line runs, which the expected values below
work out from the launch.
"""

from __future__ import annotations

import pytest
from support.paths import DATA as TEST_DATA
from support.paths import FIXTURES

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

DATA = TEST_DATA / "static"
CORPUS = FIXTURES / "nvcc"


@pytest.fixture(scope="module")
def counted():
    return parse_file(DATA / "counted.ptx")


def marker_blocks(module, fn: str) -> dict[int, int]:
    """Marker number -> id of the block holding it."""
    out = {}
    for b in build_cfg(module.function(fn)).blocks:
        for ins in b.instructions:
            if ins.opcode == "pmevent":
                out[int(ins.operands[0].text)] = b.id
    return out


def at_markers(module, est, fn: str) -> dict[int, tuple[float, bool]]:
    blocks = marker_blocks(module, fn)
    return {k: (est.counts.counts[fn][b], est.counts.exact[fn][b]) for k, b in blocks.items()}


CASES = [
    # grid 3 x 32 threads, n = 70: threads 0..69 pass the guard; tid % 3 == 0 for 11 + 11 + 2 of them
    ("guard_parity", (3, 1, 1), (32, 1, 1), {"1": 70}, {0: 70, 1: 24, 2: 46}),
    # 2 CTAs x 20 threads, n = 3: the inner loop runs 20 - tid times per outer iteration: 3 * 210 per CTA
    ("nested_param_block", (2, 1, 1), (20, 1, 1), {"1": 3}, {3: 120, 4: 1260}),
    # n = 80 of 96 threads; tid < 10 in each of the 3 CTAs (the third has 16 threads below n)
    ("early_exit", (3, 1, 1), (32, 1, 1), {"1": 80, "2": 10}, {5: 80, 6: 30}),
    # grid-stride over 1000 elements with 96 threads: each index once
    ("grid_stride", (3, 1, 1), (32, 1, 1), {"1": 1000}, {7: 1000}),
    # 50 threads call poly with 4 and 5 terms
    ("call_poly", (2, 1, 1), (32, 1, 1), {"2": 50, "3": 4}, {8: 50 * (4 + 5)}),
    # m * (t + 1) iterations for t = 0..15, in 2 CTAs: 2 * 10**6 * 136 (only possible by fast-forward)
    ("triangle_long", (2, 1, 1), (16, 1, 1), {"1": 10**6}, {13: 272_000_000}),
    # 24 x 8 threads cover a 20 x 7 image
    ("guard_2d", (3, 2, 1), (8, 4, 1), {"1": 20, "2": 7}, {14: 140}),
    # a pointer loop: a + tid, a + tid + 32, ... below a + n
    ("pointer_walk", (1, 1, 1), (32, 1, 1), {"1": 1_000_003}, {15: 1_000_003}),
    ("pointer_walk", (1, 1, 1), (32, 1, 1), {"1": -5}, {15: 0}),
]


@pytest.mark.parametrize(("kernel", "grid", "block", "args", "expected"), CASES)
def test_hand_derived_counts(counted, kernel, grid, block, args, expected):
    est = estimate_counts(bind(counted, kernel, Launch(grid, block, 0, args)))
    got = {}
    for fn in est.counts.counts:
        got.update(at_markers(counted, est, fn))
    assert {k: got[k] for k in expected} == {k: (float(v), True) for k, v in expected.items()}
    assert est.exact


def test_entry_and_exit_blocks_count_every_thread(counted):
    est = estimate_counts(bind(counted, "guard_parity", Launch((3, 1, 1), (32, 1, 1), 0, {"1": 70})))
    cfg = build_cfg(counted.function("guard_parity"))
    counts = est.counts.counts["guard_parity"]
    assert counts[cfg.entry] == 96
    assert sum(counts[b] for b in cfg.exits) == 96


def test_data_dependent_blocks_are_flagged(counted):
    est = estimate_counts(bind(counted, "data_branch", Launch((2, 1, 1), (32, 1, 1), 0, {"2": 40})))
    marks = at_markers(counted, est, "data_branch")
    # before the data branch and after both data-dependent constructs: exact
    assert marks[9] == (40.0, True)
    assert marks[12] == (40.0, True)
    # the if on in[i] and the loop halving it: estimated, with the reason given
    assert not marks[10][1] and not marks[11][1]
    assert marks[10][0] == pytest.approx(20.0)  # the if gets half of the threads
    reasons = est.reasons["data_branch"]
    blocks = marker_blocks(counted, "data_branch")
    assert "data-dependent branch" in reasons[blocks[10]]
    assert set(reasons) >= {blocks[10], blocks[11]}
    assert blocks[9] not in reasons and blocks[12] not in reasons
    assert not est.exact


def test_cta_independent_launch_scales_one_cta(counted):
    est = estimate_counts(bind(counted, "nested_param_block", Launch((100_000, 1, 1), (20, 1, 1), 0, {"1": 3})))
    assert est.method.startswith("one CTA")
    assert at_markers(counted, est, "nested_param_block")[4] == (100_000 * 3 * 210.0, True)


def test_huge_cta_dependent_launch_is_counted_exactly_by_classes_of_ctas(counted):
    est = estimate_counts(bind(counted, "guard_parity", Launch((100_000, 1, 1), (32, 1, 1), 0, {"1": 70})))
    assert "classes" in est.method
    assert at_markers(counted, est, "guard_parity") == {0: (70.0, True), 1: (24.0, True), 2: (46.0, True)}
    assert est.exact


def test_budget_exhaustion_falls_back_to_flagged_frequencies(counted):
    est = estimate_counts(bind(counted, "nested_param_block", Launch((2, 1, 1), (20, 1, 1), 0, {"1": 3})), max_work=10)
    assert "budget" in est.method and "branch-probability" in est.method
    assert all(not e for e in est.counts.exact["nested_param_block"].values())
    assert est.counts.counts["nested_param_block"][0] == pytest.approx(40.0)


def test_missing_scalar_argument_makes_its_branches_estimates(counted):
    est = estimate_counts(bind(counted, "grid_stride", Launch((3, 1, 1), (32, 1, 1), 0, {})))
    assert any("not given" in n for n in est.notes)
    assert not est.exact


def test_parameters_by_name_index_or_short_form(counted):
    launches = [{"grid_stride_param_1": 500}, {"1": 500}, {"param_1": 500}]
    results = [estimate_counts(bind(counted, "grid_stride", Launch((2, 1, 1), (64, 1, 1), 0, a))).counts.counts
               for a in launches]
    assert results[0] == results[1] == results[2]


def test_bad_input_is_a_user_error(counted):
    with pytest.raises(PtxstaticError, match="no kernel named"):
        estimate_counts(bind(counted, "nope", Launch()))
    with pytest.raises(PtxstaticError, match="no parameter 'x'"):
        estimate_counts(bind(counted, "grid_stride", Launch(args={"x": 1})))


def test_counts_round_trip_as_block_counts_json(counted, tmp_path):
    est = estimate_counts(bind(counted, "data_branch", Launch((2, 1, 1), (32, 1, 1), 0, {"2": 40})))
    path = tmp_path / "counts.json"
    est.counts.save(path)
    back = BlockCounts.load(path)
    assert back.source == "static"
    assert back.counts == est.counts.counts and back.exact == est.counts.exact


LOOP_LAUNCHES = {
    "loop_row_sum": ((3, 1, 1), (32, 1, 1), {"2": 70, "3": 1001}),
    "loop_box_filter_2d": ((3, 2, 1), (8, 4, 1), {"2": 20, "3": 7, "4": 9}),
    "loop_block_stride": ((3, 1, 1), (32, 1, 1), {"1": 2003}),
    "loop_grid_stride_saxpy": ((3, 1, 1), (32, 1, 1), {"0": 5000}),
    "loop_unroll4_dot": ((2, 1, 1), (32, 1, 1), {"3": 403}),
    "loop_newton_rsqrt": ((2, 1, 1), (32, 1, 1), {"2": 50, "3": 301}),
}


@pytest.mark.parametrize("variant", ["sm_80/plain", "sm_90/G"])
@pytest.mark.parametrize("kernel", sorted(LOOP_LAUNCHES))
def test_fast_forward_gives_the_same_counts_as_stepping(kernel, variant):
    module = parse_file(CORPUS / variant / "loops.ptx")
    grid, block, args = LOOP_LAUNCHES[kernel]
    launch = Launch(grid, block, 0, args)
    fast = estimate_counts(bind(module, kernel, launch))
    slow = estimate_counts(bind(module, kernel, launch), fast_forward=False)
    assert fast.counts.counts == slow.counts.counts
    assert fast.exact and slow.exact


def test_corpus_trip_counts_from_the_source_comments():
    module = parse_file(CORPUS / "sm_80" / "plain" / "loops.ptx")
    # loop_grid_stride_saxpy: the loop body runs once per element; loop_block_stride: n per CTA
    for kernel, launch, per_loop in [
        ("loop_grid_stride_saxpy", Launch((4, 1, 1), (64, 1, 1), 0, {"0": 100_000}), 100_000),
        ("loop_block_stride", Launch((5, 1, 1), (64, 1, 1), 0, {"1": 1000}), 5 * 1000),
        ("loop_over_blocks", Launch((7, 1, 1), (32, 1, 1), 0, {}), None),
    ]:
        est = estimate_counts(bind(module, kernel, launch))
        cfg = build_cfg(module.function(kernel))
        assert est.exact
        if per_loop is not None:
            (loop,) = cfg.loops
            assert est.counts.counts[kernel][loop.header] == per_loop
    # loop_over_blocks: gridDim.x iterations per thread, one load of partials[] each, however nvcc unrolled it
    counts = est.counts.counts["loop_over_blocks"]
    loads = sum(counts[b.id] * sum(i.opcode.startswith("ld.global") for i in b.instructions) for b in cfg.blocks)
    assert loads == 7 * 32 * 7


def test_exact_blocks_equal_emulated_counts(counted):
    """Exact-flagged blocks agree with the functional emulator; with its input given (random, seeded),
    data_branch reads it and is exact too; without it, its data-dependent blocks are the flagged ones."""
    emulator = pytest.importorskip("ptxstatic.emulator")
    from ptxstatic.launch import Buffer

    launches = {
        "guard_parity": Launch((3, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 96), "1": 70}),
        "call_poly": Launch((2, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 64), "1": Buffer("f32", 64),
                                                         "2": 50, "3": 4}),
        "early_exit": Launch((3, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 96), "1": 80, "2": 10}),
        "data_branch": Launch((2, 1, 1), (32, 1, 1), 0, {"0": Buffer("s32", 64, "random", seed=3),
                                                           "1": Buffer("s32", 64), "2": 40}),
    }
    for kernel, launch in launches.items():
        emulated = emulator.emulate(counted, kernel, launch).counts
        est = estimate_counts(bind(counted, kernel, launch)).counts
        for fn, blocks in emulated.counts.items():
            for b, c in blocks.items():
                if est.exact[fn][b]:
                    assert est.counts[fn][b] == c, (kernel, fn, b)
        assert all(est.exact[f][b] for f in est.exact for b in est.exact[f])
    unknown = estimate_counts(bind(counted, "data_branch", Launch((2, 1, 1), (32, 1, 1), 0, {"2": 40}))).counts
    flagged = {b for b, e in unknown.exact["data_branch"].items() if not e}
    markers = marker_blocks(counted, "data_branch")
    assert {markers[10], markers[11]} <= flagged and markers[9] not in flagged and markers[12] not in flagged
