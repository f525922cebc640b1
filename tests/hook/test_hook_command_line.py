"""The hook's model of nvcc command lines: which steps it analyses, for which architecture."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptxstatic.hook.capture import TMPXFT_PTX, descends_from
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
    m = TMPXFT_PTX.match("tmpxft_00005d80_00000000-6_loops.compute_90.ptx")
    assert m and int(m.group("pid"), 16) == 0x5D80 and m.group("stem") == "loops"
    assert TMPXFT_PTX.match("tmpxft_00005d80_00000000-6_my.kernel.ptx").group("stem") == "my.kernel"
    assert TMPXFT_PTX.match("tmpxft_00005d80_00000000-8_loops.sm_90.cubin") is None
    import os

    assert descends_from(os.getpid(), os.getppid())
    assert not descends_from(os.getppid(), os.getpid())
