"""Launch arguments are checked against the kernel's parameter types, and launches against CUDA's limits: a
value the parameter cannot hold, a block of 4096 threads or a --param without a launch is a one-line error
naming what is wrong, never a silently mangled value. Parameters are named by PTX name, index or C++ name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.paths import DATA, needs_nvcc

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch, launch_from_spec
from ptxstatic.ptx.cxx_params import cxx_param_names
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.params import bind_args
from ptxstatic.ptx.parser import parse_file

EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"  # saxpy(int n, float a, const float* x, float* y)
MODULE = parse_file(EXAMPLE)
SAXPY = MODULE.function("saxpy")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True)


def refused(args: dict, match: str) -> None:
    with pytest.raises(PtxstaticError, match=match):
        bind_args(SAXPY, args)


def test_a_float_for_an_integer_parameter_is_refused():
    refused({"0": 3.7}, r"parameter 0 \(saxpy_param_0, \.u32\) takes an integer, not 3\.7")


def test_1e30_for_an_integer_parameter_is_out_of_range():
    refused({"0": 1e30}, r"parameter 0 \(saxpy_param_0, \.u32\) takes an integer in \[-2147483648, 4294967295\], "
                         r"not 1e\+30")


def test_inf_for_an_integer_parameter_is_refused():
    refused({"0": float("inf")}, "takes an integer, not inf")


def test_nan_for_an_integer_parameter_is_refused():
    refused({"0": float("nan")}, "takes an integer, not nan")


def test_a_huge_integer_is_out_of_range_not_an_overflow():
    refused({"0": int("9" * 40)}, r"takes an integer in \[-2147483648, 4294967295\], not 9{40}")


def test_a_value_that_overflows_a_float_parameter_is_refused():
    refused({"1": 1e40}, r"parameter 1 \(saxpy_param_1, \.f32\) takes a value within ±3\.403e\+38, not 1e\+40")
    refused({"1": 10 ** 400}, r"\.f32\) takes a value within")


def test_a_buffer_for_a_float_parameter_is_refused():
    refused({"1": Buffer("f32", 16)}, r"parameter 1 \(saxpy_param_1, \.f32\) cannot hold a device pointer")


def test_a_parameter_given_twice_is_refused():
    refused({"0": 5, "saxpy_param_0": 6}, "given twice")


def test_values_the_types_hold_are_accepted_as_the_kernel_reads_them():
    bound = bind_args(SAXPY, {"0": 1e6, "param_1": 2.5, "saxpy_param_2": Buffer("f32", 4), "3": 0})
    assert bound == {"saxpy_param_0": 1_000_000, "saxpy_param_1": 2.5, "saxpy_param_2": Buffer("f32", 4),
                     "saxpy_param_3": 0}
    assert isinstance(bound["saxpy_param_0"], int)
    assert bind_args(SAXPY, {"0": -1})["saxpy_param_0"] == -1  # nvcc declares C++ int parameters .u32


def test_cli_parameter_errors_are_one_line_with_exit_status_2():
    for value in ("1e30", "inf", "nan", "3.7", "9" * 30):
        p = run("blocks", str(EXAMPLE), "-k", "saxpy", "--grid", "2", "--block", "32", "--param", f"n={value}")
        assert p.returncode == 2, p.stderr
        assert p.stderr.startswith("error: parameter 0 (n, saxpy_param_0, .u32) takes an integer"), p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_cxx_parameter_names_come_from_the_source_the_ptx_names():
    assert cxx_param_names(MODULE, SAXPY) == ["n", "a", "x", "y"]
    reduce = MODULE.function("block_reduce")
    assert cxx_param_names(MODULE, reduce) == ["y", "partial", "n"]
    bound = bind(MODULE, "saxpy", Launch((2, 1, 1), (32, 1, 1), 0, {"n": 50, "a": 2}))
    assert bound.kernel is SAXPY and bound.launch.args == {"saxpy_param_0": 50, "saxpy_param_1": 2.0}


def test_parameters_by_cxx_name_and_by_index_give_the_same_counts():
    def counts(*param: str) -> dict:
        p = run("blocks", str(EXAMPLE), "-k", "saxpy", "--grid", "4", "--block", "64", "--format", "json", *param)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)["kernels"][0]["counts"]

    by_name = counts("--param", "n=1000")
    assert by_name == counts("--param", "0=1000") == counts("--param", "saxpy_param_0=1000")
    assert by_name != counts("--param", "n=100")


@needs_nvcc
def test_a_cu_input_gives_its_own_parameter_names():
    source = EXAMPLE.with_suffix(".cu")
    p = run("blocks", str(source), "-k", "saxpy", "--grid", "2", "--block", "32", "--param", "n=50", "--param",
            "a=2", "--format", "json")
    assert p.returncode == 0, p.stderr
    (kernel,) = json.loads(p.stdout)["kernels"]
    assert kernel["launch"]["args"] == {"saxpy_param_0": 50, "saxpy_param_1": 2.0}
    assert kernel["counts"]["saxpy"]["2"] == 50


def test_an_unknown_parameter_lists_the_parameters_by_cxx_name():
    p = run("blocks", str(EXAMPLE), "-k", "saxpy", "--grid", "2", "--block", "32", "--param", "m=5")
    assert p.returncode == 2
    assert "kernel saxpy has no parameter 'm'; its parameters: 0 (n, saxpy_param_0, .u32), 1 (a, saxpy_param_1" \
        in p.stderr


@pytest.mark.parametrize(("block", "grid", "message"), [
    ((4096, 1, 1), (1, 1, 1), "block dimension x is 4096; CUDA allows 1 to 1024"),
    ((64, 32, 1), (1, 1, 1), r"2048 threads per block \(64x32x1\); CUDA allows at most 1024"),
    ((1, 1, 65), (1, 1, 1), "block dimension z is 65; CUDA allows 1 to 64"),
    ((32, 1, 1), (1 << 31, 1, 1), "grid dimension x is 2147483648; CUDA allows 1 to 2147483647"),
    ((32, 1, 1), (1, 65536, 1), "grid dimension y is 65536; CUDA allows 1 to 65535"),
    ((32, 1, 1), (1, 1, 65536), "grid dimension z is 65536; CUDA allows 1 to 65535"),
])
def test_launches_beyond_the_hardware_limits_are_refused(block, grid, message):
    with pytest.raises(PtxstaticError, match=message):
        Launch(grid, block).validate()


def test_launches_at_the_hardware_limits_are_accepted():
    Launch(((1 << 31) - 1, 65535, 65535), (1024, 1, 1)).validate()
    Launch((1, 1, 1), (16, 1, 64), 227 * 1024).validate()
    with pytest.raises(PtxstaticError, match="bytes of dynamic shared memory"):
        Launch((1, 1, 1), (32, 1, 1), -1).validate()


def test_a_4096_thread_block_is_refused_in_every_spelling():
    for launch in (("--grid", "1", "--block", "4096"), ("--launch", "1/4096"), ("--launch", '{"block": 4096}')):
        p = run("blocks", str(EXAMPLE), "-k", "saxpy", *launch)
        assert p.returncode == 2 and "error: bad launch: block dimension x is 4096" in p.stderr, p.stderr
    with pytest.raises(PtxstaticError, match="block dimension x is 4096"):
        launch_from_spec("1/4096")


def test_a_param_without_a_launch_is_an_error_even_where_the_launch_has_a_default():
    for command in ("blocks", "features"):
        p = run(command, str(EXAMPLE), "-k", "saxpy", "--param", "n=1000")
        assert p.returncode == 2 and "--param needs a launch" in p.stderr, p.stderr


@pytest.mark.parametrize("command", ["predict", "blocks", "features", "profile"])
def test_every_command_that_takes_a_launch_has_the_same_options(command):
    p = run(command, "--help")
    assert p.returncode == 0
    for option in ("--grid", "--block", "--shared", "--param", "--arg", "--launch", "--kernel"):
        assert option in p.stdout, (command, option)


def test_a_value_that_overflows_a_double_is_refused_not_taken_as_inf():
    p = run("blocks", str(EXAMPLE), "-k", "saxpy", "--launch", "2/32", "--param", "a=1e309")
    assert p.returncode == 2 and p.stderr == "error: bad --param 'a=1e309': 1e309 overflows a 64-bit float\n", p.stderr
    assert run("blocks", str(EXAMPLE), "-k", "saxpy", "--launch", "2/32", "--param", "a=inf").returncode == 0


def test_a_parameter_repeated_on_the_command_line_is_refused():
    p = run("blocks", str(EXAMPLE), "-k", "saxpy", "--launch", "2/32", "--param", "n=5", "--param", "n=7")
    assert p.returncode == 2 and p.stderr == "error: --param n is given twice; give each parameter once\n", p.stderr
