"""PS202 divergent-branch-in-loop on kernels written to trigger it and near misses
(tests/data/rules/cuda/ps202_loop_divergence.cu), and on the parser corpus."""

from __future__ import annotations

from support.paths import FIXTURES
from support.rules import found, kernels, lint, marked

from ptxstatic.config import Config
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

STEM = "ps202_loop_divergence"


def test_reports_exactly_the_marked_lines():
    findings = lint(STEM, "PS202")
    assert found(findings) == marked(STEM, "PS202")
    assert len(kernels(STEM, "ok_")) >= 8 and not {f.kernel for f in findings} & kernels(STEM, "ok_")


def test_kinds_and_causes():
    by_kernel = {f.kernel: f for f in lint(STEM, "PS202")}
    assert by_kernel["ps202_parity_in_loop"].properties["kind"] == "branch"
    assert by_kernel["ps202_thread_trip_count"].properties["kind"] == "exit"
    assert "leave after different numbers of iterations" in by_kernel["ps202_thread_trip_count"].message
    # conditions on loaded values say so; the parity is on the thread index itself
    assert by_kernel["ps202_branch_in_grid_stride"].properties["data"]
    assert "data each thread loads" in by_kernel["ps202_data_dependent_while"].message
    assert not by_kernel["ps202_parity_in_loop"].properties["data"]
    assert by_kernel["ps202_parity_in_loop"].properties["depends_on"] == ["threadIdx.x"]
    # a note at the loop body's first line where it is another line than the branch's
    (note,) = by_kernel["ps202_branch_in_grid_stride"].notes
    assert note.message == "in the loop whose body starts here"
    assert note.location.line == by_kernel["ps202_branch_in_grid_stride"].source.line - 1
    assert by_kernel["ps202_parity_in_loop"].notes == () and by_kernel["ps202_thread_trip_count"].notes == ()


def test_without_line_information_and_in_debug_builds():
    assert {f.kernel for f in lint(STEM, "PS202", "plain")} == {k for k, _ in marked(STEM, "PS202")}
    assert lint(STEM, "PS202", "G") == []


def test_parser_corpus_findings_are_data_atomics_and_trip_counts():
    """In the parser corpus (tests/data/cuda, sm_90) PS202 reports the loops that branch on loaded data, retry an
    atomic compare-and-swap or run a per-thread number of iterations; not the grid- and block-stride loops,
    tiled transposes with bounds checks, tree reductions, or the waits inside the CUDA headers."""
    flagged = set()
    for path in sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")):
        flagged |= {f.kernel for f in lint_module(parse_file(path, recover=True), Config(), rules=[get_rule("PS202")])}
    assert flagged == {
        "atomic_histogram256",  # if (local[b]) in a block-stride loop
        "atomic_max_f32_cas",  # the compare-and-swap retry loop
        "dyn_shared_split",  # (k[j] < mine) || ...: short-circuit on shared data
        "loop_find_first", "loop_sum_skip_negative", "loop_collatz_steps",  # data-dependent exits and ifs
        "printf_nonfinite",  # if (!isfinite(x)) in a grid-stride loop
    }
