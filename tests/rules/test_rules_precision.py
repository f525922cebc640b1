"""PS401 accidental-double and PS402 fp64-on-weak-gpu on kernels written to trigger them and near misses
(tests/data/rules/cuda/ps4_precision.cu, PTX for sm_90 by tests/data/rules/regenerate.py).

PS402 judges against the target GPU: its marks in the source hold for the GTX Titan X (sm_52, fp64 at 4 and
fp32 at 128 results per clock per SM: 1/32); the PTX's own sm_90 (64 vs 128: 1/2) has strong fp64.
"""

from __future__ import annotations

import pytest
from support.paths import FIXTURES
from support.rules import found, kernels, lint, marked, ptx, source

from ptxstatic.config import Config
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

STEM = "ps4_precision"
TITANX = Config(gpu="titanx")



def test_accidental_double_reports_exactly_the_marked_lines():
    findings = lint(STEM, "PS401")
    assert found(findings) == marked(STEM, "PS401")
    assert not {f.kernel for f in findings} & kernels(STEM, "ok_")


def test_accidental_double_names_the_cause():
    by_kernel = {f.kernel: f for f in lint(STEM, "PS401")}
    # in[i] * 2.5 + 1.0f: cvt.f64.f32, fma.rn.f64 with 0d4004000000000000 (2.5) and 0d3FF0000000000000 (1.0)
    literal = by_kernel["ps401_double_literal"]
    assert literal.properties["constants"] == ["2.5", "1.0"] and literal.properties["fp64_ops"] == ["fma.f64"]
    assert "2.5" in literal.message and "fma.f64" in literal.message
    # exp(-x * 0.5): the double exp() is inlined, many fp64 instructions for one widened float
    assert by_kernel["ps401_double_function"].properties["math_function"]
    assert "double-precision math function" in by_kernel["ps401_double_function"].message
    # x / 3.0 + 0.5f in a loop unrolled four times plus a remainder: five conversions, one finding
    loop = by_kernel["ps401_double_in_loop"]
    assert loop.properties["conversions"] == 5 and "inside a loop" in loop.message
    assert loop.properties["constants"] == ["3.0", "0.5"]


def test_accidental_double_points_at_the_cause_not_where_the_conversion_was_moved():
    """ps401_hoisted_literal: nvcc widens k and computes 2.0 * k (as k + k) once, before the loop, under the
    line information of `float k = in[i + n];` (six lines above the literal); the finding is at the statement
    with the literal, where the double is rounded back, once for all six conversions (k, and acc in the
    loop's four unrolled copies and its remainder)."""
    lines = source(STEM).read_text().splitlines()
    [finding] = [f for f in lint(STEM, "PS401") if f.kernel == "ps401_hoisted_literal"]
    assert "2.0 * k" in lines[finding.source.line - 1]
    assert finding.properties["conversions"] == 6 and finding.properties["constants"] == ["2.0"]
    assert "a double-precision math function" not in finding.message
    fn = parse_file(ptx(STEM)).function("ps401_hoisted_literal")
    widened = [ins.loc.line for ins in fn.instructions if ins.opcode == "cvt.f64.f32"]
    assert len(widened) == 6
    assert "float k = in[i + n];" in lines[min(widened) - 1]  # where the compiler put the first conversion
    assert fn.instructions[[i.line for i in fn.instructions].index(finding.ptx.line)].opcode == "cvt.rn.f32.f64"


def test_a_long_literal_expression_is_not_called_a_math_function():
    """13 fp64 fma for one widened float, with double literals and nothing done on the double's bits: the
    cause is the literals; exp() (argument reduction on the double's halves) is a math function."""
    by_kernel = {f.kernel: f for f in lint(STEM, "PS401")}
    polynomial = by_kernel["ps401_literal_polynomial"]
    assert polynomial.properties["fp64_instructions"] >= 12 and not polynomial.properties["math_function"]
    assert "double constants in the expression: 0.5, 1.5, 2.5" in polynomial.message
    assert "math function" not in polynomial.message
    assert by_kernel["ps401_double_function"].properties["math_function"]


def test_accidental_double_without_line_information_and_in_debug_builds():
    assert {f.kernel for f in lint(STEM, "PS401", "plain")} == {k for k, _ in marked(STEM, "PS401")}
    assert len(lint(STEM, "PS401", "plain")) == len(marked(STEM, "PS401"))
    assert lint(STEM, "PS401", "G") == []


def test_fp64_on_weak_gpu_reports_the_marked_lines_for_titanx_only():
    assert found(lint(STEM, "PS402", config=TITANX)) == marked(STEM, "PS402")
    assert lint(STEM, "PS402") == [] and lint(STEM, "PS402", config=Config(gpu="h100")) == []
    assert {f.kernel for f in lint(STEM, "PS402", "plain", config=TITANX)} == {k for k, _ in marked(STEM, "PS402")}
    assert lint(STEM, "PS402", "G", config=TITANX) == []


def test_fp64_share_by_hand():
    """ps401_double_literal on sm_52, in 1/128 issue cycles per thread: 3 ld.param and ld/st.global at 32
    per clock (4 each: 20), bra and ret at 32 (8), mad.lo and mul.wide emulated at 128/3 (3 each: 6), setp at
    64 (2), 3 mov, 2 cvta and 2 add at 128 (7), cvt.f64.f32 to a 64-bit type at 4 (32), cvt.rn.f32.f64 at 32
    (4), and fma.rn.f64 at 4 (32): fp64 is 32 of 111."""
    config = Config(gpu="titanx", rules={"PS402": {"min-share": 0.0}})
    by_kernel = {f.kernel: f.properties for f in lint(STEM, "PS402", config=config)}
    literal = by_kernel["ps401_double_literal"]
    assert literal["fp64_share"] == pytest.approx(32 / 111, abs=1e-4)
    assert literal["fp64_ratio"] == 4 / 128 and literal["fp64_instructions"] == 1
    assert by_kernel["ps402_double_loop"]["in_loops"] == by_kernel["ps402_double_loop"]["fp64_instructions"]
    # min-share 0.5 (the default) leaves the near miss and the single fma out
    assert by_kernel["ok_float_loop_double_once"]["fp64_share"] < 0.05
    weak_ok = Config(gpu="titanx", rules={"PS402": {"max-fp64-ratio": 1 / 64}})
    assert lint(STEM, "PS402", config=weak_ok) == []


def test_parser_corpus_findings():
    """On the parser corpus (tests/data/cuda, sm_90): no float is widened by accident (math.cu uses the float
    functions); on the Titan X the kernels written in double (math_f64, the double instances of the
    templates) spend most of their issue cycles in fp64."""
    accidental, weak = set(), set()
    for path in sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")):
        module = parse_file(path, recover=True)
        accidental |= {f.kernel for f in lint_module(module, Config(), rules=[get_rule("PS401")])}
        weak |= {f.kernel for f in lint_module(module, TITANX, rules=[get_rule("PS402")])}
    assert accidental == set()
    assert weak == {"math_f64", "_Z9tmpl_axpyIdEvT_PKS0_PS0_i", "_Z14tmpl_block_sumIdLi128EEvPKT_PS0_i"}
