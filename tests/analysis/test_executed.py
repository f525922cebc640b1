"""Executed instruction sequences from block counts, checked against the CUDA source."""

from __future__ import annotations

import pytest
from support.paths import DATA as TEST_DATA

from ptxstatic.analysis.executed import Repeat, executed_sequence
from ptxstatic.analysis.sequence import kernel_sequence
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

COUNTED = TEST_DATA / "static" / "counted.ptx"


@pytest.fixture(scope="module")
def counted():
    return parse_file(COUNTED)


def sequence(module, kernel, grid, block, args, cap=20_000):
    counts = estimate_counts(bind(module, kernel, Launch(grid, block, 0, args))).counts.counts
    return executed_sequence(module, kernel, counts, cap)


def markers(nodes) -> list[int]:
    """pmevent numbers in fully expanded order."""
    out = []
    for n in nodes:
        if isinstance(n, Repeat):
            out += markers(n.body) * n.times
        elif n.opcode == "pmevent":
            out.append(int(n.operands[0].text))
    return out


def test_nested_loops_repeat_by_their_trip_counts(counted):
    # 21 threads, n = 3: the outer loop runs 3 times; the inner one 21 - tid times, 11 on average
    ex = sequence(counted, "nested_param_block", (1, 1, 1), (21, 1, 1), {"1": 3})
    assert markers(ex.tree) == ([3] + [4] * 11) * 3
    outer = [n for n in ex.tree if isinstance(n, Repeat)]
    assert len(outer) == 1 and outer[0].times == 3
    inner = [n for n in outer[0].body if isinstance(n, Repeat)]
    assert len(inner) == 1 and inner[0].times == 11
    assert not ex.truncated and len(ex.expanded) == ex.length
    # the compact form nests the same way
    loops = [(item, n) for item, n in ex.compact if isinstance(item, list)]
    assert [n for _, n in loops] == [3]
    assert [n for item, n in loops[0][0] if isinstance(item, list)] == [11]


def test_dependency_distances_follow_the_executed_order(counted):
    ex = sequence(counted, "grid_stride", (1, 1, 1), (32, 1, 1), {"1": 320})
    (body, times), = [(item, n) for item, n in ex.compact if isinstance(item, list)]
    assert times == 10
    # loop body: pmevent, mul.wide (index i), add, ld, add.f32, st, add.s32 (i += stride), setp, bra;
    # in the second iteration mul.wide reads the i written by add.s32 four instructions earlier
    assert [item.opcode for item, _ in body] == ["pmevent", "mul", "add", "ld", "add", "st", "add", "setp", "bra"]
    assert body[1][0].dep_distance == 4
    # in program order its producer is the mad.lo before the loop, much further back
    program = kernel_sequence(counted.function("grid_stride"))
    assert program[12].opcode == "mul" and program[12].dep_distance == 7


def test_device_function_calls_are_inlined(counted):
    ex = sequence(counted, "call_poly", (1, 1, 1), (32, 1, 1), {"2": 32, "3": 4})
    # poly(x, 4) and poly(x, 5): block counts cannot tell the call sites apart, so each call is inlined with
    # the callee's average per call, 4.5 iterations, rounded half up
    assert markers(ex.tree) == [8] * 5 + [8] * 5
    calls = [item.opcode for item in ex.expanded].count("call")
    assert calls == 2


def test_expanded_form_is_capped(counted):
    ex = sequence(counted, "triangle_long", (1, 1, 1), (4, 1, 1), {"1": 1000}, cap=500)
    assert ex.truncated and len(ex.expanded) == 500
    assert ex.length > 2500  # 1000 * 2.5 iterations on average, several instructions each


def test_unknown_function_is_a_user_error(counted):
    with pytest.raises(PtxstaticError, match="no function named"):
        executed_sequence(counted, "nope", {})
