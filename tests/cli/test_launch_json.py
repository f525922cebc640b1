"""The launch's JSON form (``--launch JSON|FILE.json``, ``Launch.from_dict``) against whatever a user may write:
Hypothesis draws objects with the launch's keys and every kind of JSON value in them (booleans for dimensions,
strings and lists for arguments, buffers with fields missing, of the wrong type or unknown, numbers that overflow
a float), and each one gives a valid launch that binds to a kernel or a :class:`PtxstaticError`, never another
exception. The budget is that of ``tests/cli/test_fuzz.py`` (``PTXSTATIC_FUZZ_EXAMPLES``, derandomised)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.paths import DATA

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import FILLS, Buffer, Launch, launch_from_spec
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"  # saxpy(int n, float a, const float* x, float* y)
MODULE = parse_file(EXAMPLE)
FUZZ = settings(max_examples=int(os.environ.get("PTXSTATIC_FUZZ_EXAMPLES", "60")) * 5, deadline=None,
                derandomize=not os.environ.get("PTXSTATIC_FUZZ_RANDOM"), database=None,
                suppress_health_check=[HealthCheck.too_slow])

ANY = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=6),
                   lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                   max_leaves=10)
DIMS = (st.integers(-2, 70_000) | st.lists(st.integers(-2, 2048) | st.booleans(), max_size=4)
        | st.text("0123456789,x ", max_size=9) | ANY)
BUFFER = st.fixed_dictionaries(
    {"dtype": st.sampled_from(["f32", "s32", "u64", "f64"]) | ANY, "count": st.integers(-2, 4096) | ANY},
    optional={"fill": st.sampled_from(FILLS) | ANY, "value": st.floats(allow_nan=False) | ANY,
              "seed": st.integers(0, 99) | ANY, "output": st.booleans() | ANY, "shape": ANY})
ARGUMENT = st.integers(-2 ** 70, 2 ** 70) | st.floats() | BUFFER | ANY
LAUNCH = st.fixed_dictionaries({}, optional={
    "grid": DIMS, "block": DIMS, "shared_bytes": st.integers(-9, 300_000) | ANY,
    "args": st.dictionaries(st.sampled_from(["0", "1", "2", "3", "n", "a", "x", "y", "z"]), ARGUMENT, max_size=4) | ANY,
    "gird": ANY,
})


def launch_or_refusal(text: str) -> Launch | None:
    """The launch of ``text``, or None when it is refused with a one-line :class:`PtxstaticError`."""
    try:
        launch = launch_from_spec(text)
    except PtxstaticError as exc:
        assert str(exc).strip() and "\n" not in str(exc)
        return None
    assert Launch.from_dict(json.loads(json.dumps(launch.to_dict()))) == launch  # what it writes, it reads back
    assert all(type(n) is int and n >= 1 for n in (*launch.grid, *launch.block))
    assert all(type(v) in (int, float, Buffer) for v in launch.args.values())
    return launch


@FUZZ
@given(LAUNCH)
@example({"grid": [True]})  # a boolean is not a dimension (it was taken as 1)
@example({"args": {"n": [1]}})  # TypeError when bound
@example({"args": {"n": "x"}})  # ValueError when bound
@example({"args": {"x": {"dtype": "f32", "count": "a"}}})  # TypeError comparing the count
@example({"shared_bytes": 1.5})  # truncated to 1
@example({"args": []})  # taken as no arguments
def test_every_launch_object_is_a_launch_or_a_one_line_refusal(obj):
    launch = launch_or_refusal(json.dumps(obj))
    if launch is None:
        return
    try:
        bound = bind(MODULE, "saxpy", launch)
    except PtxstaticError as exc:
        assert str(exc).strip()
        return
    assert set(bound.launch.args) <= {f"saxpy_param_{i}" for i in range(4)}


@pytest.mark.parametrize("text", ['{"shared_bytes": 1e400}', '{"args": {"a": 1e309}}', '{"grid": 1e999}'])
def test_a_number_that_overflows_a_float_is_refused_not_taken_as_inf(text):
    with pytest.raises(PtxstaticError, match="overflows a 64-bit float"):
        launch_from_spec(text)


def test_an_unknown_key_is_refused_by_name():
    with pytest.raises(PtxstaticError, match="unknown key 'gird'; the keys: args, block, grid, shared_bytes"):
        launch_from_spec('{"gird": 4, "block": 32}')


@pytest.mark.parametrize(("spec", "message"), [
    ('{"grid": [true]}', "error: bad dimensions [True]: expected X[,Y[,Z]] with positive integers"),
    ('{"args": {"n": [1]}}', "error: bad launch specification: argument 'n': expected a number or a buffer object, "
                             "not [1]"),
    ('{"args": {"x": {"dtype": "f32", "count": "a"}}}', "error: bad launch specification: argument 'x': count must "
                                                        "be int, not 'a'"),
])
def test_the_cli_refuses_a_bad_launch_in_one_line(spec, message):
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "blocks", str(EXAMPLE), "-k", "saxpy", "--launch", spec],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr == message + "\n", p.stderr
