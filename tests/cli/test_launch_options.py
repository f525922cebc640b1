"""The launch options every command that takes a launch shares, as a user runs them: --grid/--block/--shared/
--param (and --arg, the same option) and --launch GRID/BLOCK|JSON|FILE.json, which mean the same launch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.paths import DATA

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch, launch_from_spec

COUNTED = DATA / "static" / "counted.ptx"
EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True)


def block_counts(*launch: str) -> dict:
    p = run("blocks", str(COUNTED), "-k", "guard_parity", "--format", "json", *launch)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["kernels"][0]["counts"]


def test_every_spelling_of_a_launch_gives_the_same_counts(tmp_path):
    spec = tmp_path / "launch.json"
    spec.write_text(json.dumps(Launch((3, 1, 1), (32, 1, 1), 0, {"1": 70}).to_dict()))
    want = block_counts("--grid", "3", "--block", "32", "--param", "1=70")
    # every one of the 3 x 32 threads enters the kernel, the 70 below n = 70 pass its guard
    assert (want["guard_parity"]["0"], want["guard_parity"]["1"]) == (96.0, 70.0)
    assert block_counts("--launch", "3/32", "--param", "1=70") == want
    assert block_counts("--launch", "3/32", "--arg", "1=70") == want
    assert block_counts("--launch", str(spec)) == want
    assert block_counts("--launch", spec.read_text()) == want
    # the parts given beside --launch override it
    assert block_counts("--launch", "7/64", "--grid", "3", "--block", "32", "--param", "1=70") == want


def test_a_param_without_a_launch_is_an_error_where_the_launch_is_optional():
    p = run("predict", str(EXAMPLE), "-k", "saxpy", "--param", "0=1000")
    assert p.returncode == 2 and "--param needs a launch" in p.stderr and "Traceback" not in p.stderr


def test_a_launch_changes_the_prediction_input():
    without = json.loads(run("predict", str(EXAMPLE), "-k", "saxpy", "--format", "json").stdout)["kernels"][0]
    p = run("predict", str(EXAMPLE), "-k", "saxpy", "--grid", "64", "--block", "256", "--param", "0=1000000",
            "--format", "json")
    assert p.returncode == 0, p.stderr
    with_launch = json.loads(p.stdout)["kernels"][0]
    assert any("program order" in n for n in without["notes"])
    assert any("executed sequence from static block counts" in n for n in with_launch["notes"])


def test_launch_specs():
    assert launch_from_spec("64,2/16,16") == Launch((64, 2, 1), (16, 16, 1))
    spec = Launch((2, 1, 1), (128, 1, 1), 64, {"x": Buffer("f32", 256, "iota", output=True), "n": 256})
    assert launch_from_spec(json.dumps(spec.to_dict())) == spec
    for bad in ("64", "[1, 2]", "{bad json", "missing.json"):
        with pytest.raises(PtxstaticError, match="bad --launch"):
            launch_from_spec(bad)
