"""Memory-intensity features on nvcc-produced PTX: loop-depth weighting without a launch, agreement with the
block-count features when a launch is known, and issue costs from the published rates."""

from __future__ import annotations

import pytest
from support.paths import FIXTURES

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.executed import executed_sequence
from ptxstatic.analysis.sequence import instruction_sequence, kernel_sequence
from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.intensity import DEFAULT_TRIPS, NAMES, intensity_features, loop_weighted_runs
from ptxstatic.features.portable import features_from_counts
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.hardware.issue_rates import issue_rate
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

LOOPS = FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx"
MATH = FIXTURES / "nvcc" / "sm_80" / "plain" / "math.ptx"
MEMORY = FIXTURES / "nvcc" / "sm_80" / "plain" / "memory.ptx"


@pytest.fixture(scope="module")
def loops():
    return parse_file(LOOPS)


def _innermost_body(fn) -> list:
    """(item, 1) runs of the instructions in the kernel's most deeply nested blocks."""
    cfg = build_cfg(fn)
    depth = max(cfg.loop_depth.values())
    seq = kernel_sequence(fn)
    return [(seq[i], 1) for b in cfg.blocks if cfg.loop_depth[b.id] == depth
            for i in range(b.start, b.start + len(b.instructions))]


def test_innermost_loop_dominates_the_features_of_a_triple_nest(loops) -> None:
    fn = loops.function("loop_conv3d_valid")
    weighted = intensity_features(loop_weighted_runs(fn))
    program = intensity_features(kernel_sequence(fn))
    body = intensity_features(_innermost_body(fn))
    for name in ("global_bytes_per_instruction", "loads_per_arithmetic"):
        assert abs(weighted[name] - body[name]) < 0.1 * body[name], name
        assert abs(program[name] - body[name]) > 0.3 * body[name], name


def test_loop_weights_are_trips_to_the_nesting_depth(loops) -> None:
    fn = loops.function("loop_conv3d_valid")
    cfg = build_cfg(fn)
    runs = loop_weighted_runs(fn, trips=8)
    for b in cfg.blocks:
        for i in range(b.start, b.start + len(b.instructions)):
            assert runs[i][1] == 8 ** cfg.loop_depth[b.id]
    inner = sum(c for (item, c), i in zip(runs, range(len(runs)))
                if cfg.loop_depth[cfg.block_of(i)] == 3)
    assert inner / sum(c for _, c in runs) > 0.5


def test_a_kernel_without_loops_is_its_program_order() -> None:
    module = parse_file(MEMORY)
    fn = next(f for f in module.kernels if not build_cfg(f).loops)
    assert loop_weighted_runs(fn, DEFAULT_TRIPS) == [(item, 1) for item in kernel_sequence(fn)]


def test_executed_sequence_agrees_with_block_count_features(loops) -> None:
    """With a launch where every thread takes the same path, the bytes per instruction of the executed
    sequence equal the totals of the block-count features (two independent implementations)."""
    launch = Launch((4, 1, 1), (64, 1, 1))
    launch.args.update({"2": 256, "3": 37})  # rows = threads, 37 columns
    est = estimate_counts(bind(loops, "loop_row_sum", launch))
    assert est.exact
    seq = executed_sequence(loops, "loop_row_sum", est.counts.counts)
    mine = intensity_features(seq.compact)
    theirs = features_from_counts(loops, "loop_row_sum", est.counts)
    assert mine["global_bytes_per_instruction"] == pytest.approx(theirs["global_bytes"] / theirs["instructions"])
    assert mine["shared_bytes_per_instruction"] == pytest.approx(theirs["shared_bytes"] / theirs["instructions"])


def test_issue_costs_follow_the_published_rates() -> None:
    module = parse_file(MATH)
    rates = gpu_figures("gtxtitanx").rates
    items = {i.opcode + "." + i.dtype: i for fn in module.kernels for i in instruction_sequence(fn.instructions)}
    fp32 = next(i for i in items.values() if i.group == "fp32" and i.opcode in ("fma", "add", "mul"))
    fp64 = next(i for i in items.values() if i.group == "fp64" and i.opcode in ("fma", "add", "mul"))
    sfu = next(i for i in items.values() if i.group == "special" and i.opcode in ("sin", "cos", "ex2", "lg2"))
    assert issue_rate(fp32, rates) / issue_rate(sfu, rates) == 4
    assert issue_rate(fp32, rates) / issue_rate(fp64, rates) == 32


def test_features_are_finite_ratios_for_every_fixture_kernel(loops) -> None:
    for fn in loops.kernels:
        f = intensity_features(loop_weighted_runs(fn))
        assert list(f) == list(NAMES)
        assert all(v == v and v >= 0 for v in f.values())
        assert all(0 <= f[k] <= 1 for k in NAMES if k.endswith("_share"))
