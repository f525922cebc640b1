"""The hook's model of nvcc command lines: which steps it analyses, for which architecture."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from support.paths import needs_nvcc

from ptxstatic.hook.capture import TMPXFT, descends_from
from ptxstatic.toolchain.nvcc_command import arch_key, parse_command


@pytest.mark.parametrize("argv, best", [
    (["nvcc", "-c", "-arch=sm_90", "k.cu", "-o", "k.o"], "compute_90"),
    (["/usr/local/cuda/bin/nvcc", "-c", "k.cu"], None),  # nvcc's default architecture: decided by nvcc
    (["nvcc", "-c", "-gencode", "arch=compute_80,code=sm_80", "-gencode=arch=compute_90a,code=[sm_90a]", "k.cu"],
     "compute_90a"),
    (["nvcc", "-dc", "--gpu-architecture", "sm_80", "-rdc=true", "k.cu"], "compute_80"),
    (["nvcc", "-c", "-arch=compute_86", "-code=sm_86,compute_86", "k.cu"], "compute_86"),
    (["nvcc", "-c", "-arch=native", "k.cu"], None),
    (["ccache", "nvcc", "-c", "-arch=sm_75", "k.cu"], "compute_75"),
    (["nvcc", "-c", "-x", "cu", "-arch=sm_90", "kernel.source"], "compute_90"),
    (["nvcc", "-c", "-arch=sm_90", "-Xcompiler", "-E", "-ccbin", "g++", "k.cu", "-MD", "-MF", "k.d"], "compute_90"),
    (["nvcc", "-arch=sm_90", "-lineinfo", "-O3", "-Iinc", "-DX=1", "k.cu", "main.o", "-o", "app"], "compute_90"),
    (["nvcc", "-lib", "-arch=sm_90", "a.cu", "b.cu", "-o", "libab.a"], "compute_90"),
])
def test_analysed_commands(argv: list[str], best: str | None):
    cmd = parse_command(argv)
    assert cmd.analysed, cmd.pass_reason
    assert cmd.best_arch == best
    assert cmd.inputs and all(not i.startswith("-") for i in cmd.inputs)


@pytest.mark.parametrize("argv, reason", [
    (["nvcc", "-E", "k.cu"], "preprocessing"),
    (["nvcc", "-M", "k.cu"], "dependency"),
    (["nvcc", "-MM", "k.cu"], "dependency"),
    (["nvcc", "--version"], "version"),
    (["nvcc", "-V"], "version"),
    (["nvcc", "--help"], "help"),
    (["nvcc", "-ptx", "-arch=sm_90", "k.cu"], "PTX output"),
    (["nvcc", "-c", "host.cpp", "-o", "host.o"], "no CUDA source"),
    (["nvcc", "-arch=sm_90", "a.o", "b.o", "libx.a", "-o", "app"], "no CUDA source"),
    (["nvcc", "-dlink", "a.o", "-o", "dlink.o"], "device link"),
    (["nvcc", "-c", "-x", "c++", "k.cu"], "no CUDA source"),
    (["nvcc", "-c", "-gencode", "arch=compute_90,code=lto_90", "k.cu"], "link-time"),
    (["g++", "-c", "k.cpp"], "not nvcc"),
    (["clang++", "-c", "k.cu"], "not nvcc"),
])
def test_pass_through_commands(argv: list[str], reason: str):
    cmd = parse_command(argv)
    assert not cmd.analysed and reason in cmd.pass_reason


def test_response_files_are_read_for_the_model(tmp_path: Path):
    (tmp_path / "flags.rsp").write_text('-c "-arch=sm_80"\n-gencode arch=compute_90,code=sm_90 --keep\n')
    (tmp_path / "more.rsp").write_text("-Iinclude\n")
    cmd = parse_command(["nvcc", "--options-file", "flags.rsp,more.rsp", "k.cu", "-o", "out/k.o"], str(tmp_path))
    assert cmd.analysed and cmd.best_arch == "compute_90" and cmd.output == "out/k.o"
    assert cmd.best_target == "sm_90"  # the .target of the PTX nvcc writes for it
    assert cmd.keep_dir == str(tmp_path)
    at = parse_command(["nvcc", "@flags.rsp", "k.cu"], str(tmp_path))
    assert at.args[:2] == ["-c", "-arch=sm_80"]
    missing = parse_command(["nvcc", "-optf", "nope.rsp", "k.cu"], str(tmp_path))
    assert not missing.analysed and "response file" in missing.pass_reason


def test_architecture_order():
    assert sorted(["compute_90a", "compute_100", "compute_90", "compute_90f", "compute_80"], key=arch_key) == \
        ["compute_80", "compute_90", "compute_90f", "compute_90a", "compute_100"]


def test_temporary_ptx_names_and_process_tree():
    m = TMPXFT.match("tmpxft_00005d80_00000000-6_loops.compute_90.ptx")
    assert m and int(m.group("pid"), 16) == 0x5D80 and m.group("stem") == "loops" and m.group("sass") is None
    assert TMPXFT.match("tmpxft_00005d80_00000000-6_my.kernel.ptx").group("stem") == "my.kernel"
    cubin = TMPXFT.match("tmpxft_00005d80_00000000-8_loops.compute_90.sm_90a.cubin")
    assert cubin.group("sass") == "sm_90a" and cubin.group("base") == "loops.compute_90"
    assert TMPXFT.match("tmpxft_00005d80_00000000-3_loops.fatbin.c") is None
    assert descends_from(os.getpid(), os.getppid())
    assert not descends_from(os.getppid(), os.getpid())


@pytest.mark.parametrize("args, sass", [
    (["-arch=sm_90"], ["sm_90"]),
    (["-arch=sm_90", "-lineinfo", "-O3"], ["sm_90"]),
    (["-arch=sm_80", "-code=sm_80,compute_80"], ["sm_80"]),
    (["-gencode", "arch=compute_80,code=[sm_80,sm_86]", "-gencode", "arch=compute_90,code=sm_90a"],
     ["sm_80", "sm_86", "sm_90a"]),
    (["-arch=compute_90"], []),  # PTX only
    ([], []),  # nvcc's default: not known here
    (["-arch=sm_90", "-maxrregcount=64"], []),  # options that change what ptxas makes of the PTX
    (["-arch=sm_90", "-Xptxas", "-O1"], []),
    (["-arch=sm_90", "-G"], []),
    (["-arch=sm_90", "-rdc=true"], []),
    (["-arch=sm_90", "-rdc=false"], ["sm_90"]),
])
def test_what_nvcc_assembles_with_ptxas_defaults(args: list[str], sass: list[str]):
    assert parse_command(["nvcc", "-c", *args, "k.cu"]).sass_archs == sass


@needs_nvcc
@pytest.mark.parametrize("args", [
    ["-arch=sm_90"],
    ["-gencode", "arch=compute_80,code=[sm_80,sm_86]", "-gencode", "arch=compute_90,code=[sm_90,compute_90]"],
])
def test_each_cubin_is_matched_to_the_ptx_it_is_made_of(tmp_path: Path, args: list[str]):
    """nvcc's own plan (``-dryrun``): every ptxas step's PTX and cubin share an origin, and the cubin's
    architecture is the step's."""
    (tmp_path / "my.kernel.cu").write_text("__global__ void k(float *a) { a[threadIdx.x] *= 2; }\n")
    plan = subprocess.run(["nvcc", "-dryrun", "-c", *args, "my.kernel.cu"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stderr
    steps = [line for line in plan.splitlines() if line.startswith("#$ ptxas")]
    assert steps
    for step in steps:
        arch = re.search(r"-arch=(sm_\w+)", step).group(1)
        ptx, cubin = (TMPXFT.match(os.path.basename(p)) for p in re.findall(r'"([^"]+\.(?:ptx|cubin))"', step))
        assert ptx.group("sass") is None and cubin.group("sass") == arch
        assert ptx.group("base") == cubin.group("base") and cubin.group("stem") == "my.kernel"
        assert arch in parse_command(["nvcc", "-c", *args, "my.kernel.cu"]).sass_archs
