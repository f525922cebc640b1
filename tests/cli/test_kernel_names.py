"""Kernels by the name a user types, the same in every command: the PTX (mangled) name, the full C++ signature,
the name with template arguments (``-k 'tmpl_block_sum<float, 256>'``) or the bare name, demangled by the C++
runtime's demangler."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import DATA, FIXTURES

from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx.cxx_params import cxx_param_names
from ptxstatic.ptx.kernels import demangle, find_kernel, find_kernels
from ptxstatic.ptx.parser import parse_file

TEMPLATES = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / "templates.ptx"  # from tests/data/cuda/templates.cu
EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"
MODULE = parse_file(TEMPLATES)
FLOAT_SUM = "_Z14tmpl_block_sumIfLi256EEvPKT_PS0_i"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True)


def names(query: str) -> list[str]:
    return [k.name for k in find_kernels(MODULE, query)]


def test_demangling_agrees_with_cxxfilt_on_every_fixture_kernel():
    if shutil.which("c++filt") is None:
        pytest.skip("c++filt (binutils) is not on the PATH")
    mangled = sorted({k.name for p in (FIXTURES / "nvcc").rglob("*.ptx") for k in parse_file(p).kernels
                      if k.name.startswith("_Z")})
    assert len(mangled) >= 20
    tool = subprocess.run(["c++filt", *mangled], capture_output=True, text=True, check=True).stdout.splitlines()
    assert [demangle(mangled)[m] for m in mangled] == tool


def test_names_that_are_not_mangled_or_not_valid_stay_as_they_are():
    assert demangle(["saxpy", "_Zgarbage", ""]) == {"saxpy": "saxpy", "_Zgarbage": "_Zgarbage", "": ""}


def test_a_kernel_by_template_name_signature_or_ptx_name():
    assert names("tmpl_block_sum<float, 256>") == [FLOAT_SUM]
    assert names("tmpl_block_sum<float,256>") == [FLOAT_SUM]
    assert names("void tmpl_block_sum<float, 256>(float const*, float*, int)") == [FLOAT_SUM]
    assert names(FLOAT_SUM) == [FLOAT_SUM]
    assert names("tmpl_axpy<double>") == ["_Z9tmpl_axpyIdEvT_PKS0_PS0_i"]
    assert names("ptxfx::detail::ns_scale_u64") == names("ns_scale_u64") == ["_ZN5ptxfx6detail12ns_scale_u64EPmmi"]


def test_a_bare_template_name_designates_every_instantiation():
    assert len(names("tmpl_block_sum")) == 3
    with pytest.raises(PtxstaticError, match=r"'tmpl_block_sum' names 3 kernels; give one of: "
                                             r"'void tmpl_block_sum<float, 256>\(float const\*, float\*, int\)'"):
        find_kernel(MODULE, "tmpl_block_sum")


def test_an_unknown_name_lists_the_kernels_readably():
    listing = r"void tmpl_axpy<float>\(float, float const\*, float\*, int\) \(_Z9tmpl_axpyIfEvT_PKS0_PS0_i\)"
    with pytest.raises(PtxstaticError, match=r"no kernel named 'reduce<float>'; kernels: " + listing):
        find_kernel(MODULE, "reduce<float>")


def test_template_kernels_get_their_parameter_names_from_the_template():
    assert cxx_param_names(MODULE, MODULE.function("_Z9tmpl_axpyIfEvT_PKS0_PS0_i")) == ["a", "x", "y", "n"]
    assert cxx_param_names(MODULE, MODULE.function(FLOAT_SUM)) == ["in", "out", "n"]


def test_every_command_that_takes_kernels_takes_the_cxx_name(tmp_path: Path):
    query = ("-k", "tmpl_block_sum<float, 256>")
    launch = ("--grid", "2", "--block", "256", "--param", "n=300")
    p = run("analyze", str(TEMPLATES), *query, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert [f["kernel"] for f in json.loads(p.stdout)["kernels"]] == [FLOAT_SUM]
    p = run("blocks", str(TEMPLATES), *query, *launch, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["kernels"][0]["kernel"] == FLOAT_SUM
    p = run("features", str(TEMPLATES), *query, *launch, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["kernels"][0]["kernel"] == FLOAT_SUM
    p = run("predict", str(TEMPLATES), *query, *launch, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert [k["kernel"] for k in json.loads(p.stdout)["kernels"]] == [FLOAT_SUM]
    out = tmp_path / "counted.ptx"
    p = run("instrument", str(TEMPLATES), *query, "-o", str(out))
    assert p.returncode == 0, p.stderr
    counted = {c["function"] for c in json.loads(out.with_suffix(".json").read_text())["counters"]}
    assert counted == {FLOAT_SUM}
    assert "in 1 function " in p.stderr


def test_predict_with_a_bare_name_predicts_every_instantiation():
    p = run("predict", str(TEMPLATES), "-k", "tmpl_axpy", "--format", "json")
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["kernels"]) == 3


def test_a_kernel_name_that_designates_nothing_is_one_line_in_every_command(tmp_path: Path):
    for command in (("blocks",), ("features",), ("predict",), ("instrument", "-o", str(tmp_path / "o.ptx"))):
        p = run(*command, str(EXAMPLE), "-k", "nope")
        assert p.returncode == 2, (command, p.stderr)
        assert p.stderr.startswith("error: ") and "no kernel named 'nope'; kernels: saxpy, block_reduce" in p.stderr
