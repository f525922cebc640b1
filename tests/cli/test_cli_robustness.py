"""What a user meets at the command line: the version, binary or non-UTF-8 input on stdin, dangling symbolic
links in a directory, `instrument --check` naming the user's file and lines, loops in source order, and
counts in words with the right number."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.paths import DATA, FIXTURES, needs_ptxas

import ptxstatic
from ptxstatic.ptx.to_json import room_for_nesting

EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"
COUNTED = DATA / "static" / "counted.ptx"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, input=stdin)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def test_version_from_the_package_metadata():
    from importlib.metadata import version

    p = run("--version")
    assert p.returncode == 0
    assert p.stdout.strip() == f"ptxstatic, version {version('ptxstatic')}"
    assert ptxstatic.__version__ == version("ptxstatic")


def test_non_utf8_on_stdin_is_one_line_and_exit_2():
    for command in ("parse", "analyze"):
        p = run(command, "-", stdin=b"\x7fELF\x02\x01\xff\xfe garbage")
        assert p.returncode == 2
        assert p.stderr.strip() == "<stdin>:1:1: error: input is not UTF-8 text (byte 0xff at offset 6): expected PTX"


def test_binary_with_nul_bytes_on_stdin_is_one_line_and_exit_2():
    p = run("parse", "-", stdin=b".version 8.0\n\x00\x01\x02")
    assert p.returncode == 2
    assert p.stderr.strip() == "<stdin>:2:1: error: input is binary (a NUL byte at offset 13): expected PTX text"


def test_a_dangling_symlink_in_a_directory_is_reported(tmp_path: Path):
    (tmp_path / "good.ptx").write_text(EXAMPLE.read_text())
    (tmp_path / "gone.ptx").symlink_to(tmp_path / "deleted.ptx")
    p = run("analyze", str(tmp_path))
    assert p.returncode == 2
    assert f"{tmp_path / 'gone.ptx'}: error: dangling symbolic link (to {tmp_path / 'deleted.ptx'}" in p.stderr
    assert "kernel saxpy" in p.stdout  # the good file is still analysed
    p = run("parse", str(tmp_path / "gone.ptx"))
    assert p.returncode == 2 and "dangling symbolic link" in p.stderr


@needs_ptxas
def test_instrument_check_names_the_users_file_and_lines(tmp_path: Path):
    lines = COUNTED.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("add.s32"))
    lines[at] = lines[at].replace("add.s32", "add.f32")
    bad = tmp_path / "bad.ptx"
    bad.write_text("\n".join(lines) + "\n")
    p = run("instrument", str(bad), "-o", str(tmp_path / "out.ptx"), "--check")
    assert p.returncode == 2
    located = re.findall(r"^(\S+?):(\d+)(?::\d+)?: error: (.*)$", p.stderr, re.M)
    assert located and all(name == str(bad) for name, _, _ in located), p.stderr
    assert str(at + 1) in {line for _, line, _ in located}
    assert "in.ptx" not in p.stderr and "<input>" not in p.stderr


@needs_ptxas
def test_instrument_check_passes_and_says_function_in_the_singular(tmp_path: Path):
    p = run("instrument", str(EXAMPLE), "-k", "saxpy", "-o", str(tmp_path / "out.ptx"), "--check")
    assert p.returncode == 0, p.stderr
    assert "4 block counters in 1 function (ptx route" in p.stderr


def test_loops_are_listed_in_source_order():
    path = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / "atomics.ptx"
    p = run("analyze", str(path), "-k", "atomic_histogram256", "--format", "json")
    assert p.returncode == 0, p.stderr
    loops = json.loads(p.stdout)["kernels"][0]["loops"]
    assert [lp["header"] for lp in loops] == ["$L__BB0_2", "$L__BB0_5", "$L__BB0_8"]
    starts = [lp["lines"][0] for lp in loops]
    assert starts == sorted(starts)


def test_counts_in_words_take_the_singular():
    p = run("parse", str(EXAMPLE))
    assert "_Z8warp_sumf  line 15: 1 param, 30 instructions" in p.stdout
    p = run("analyze", str(EXAMPLE), "-k", "saxpy")
    assert "depth 1, 1 block, PTX lines 110-121" in p.stdout


def test_a_cuda_file_with_nul_bytes_is_refused_in_one_line(tmp_path: Path):
    source = tmp_path / "bin.cu"
    source.write_bytes(b"__global__ void k() {}\n\0\0garbage")
    p = run("analyze", str(source))
    assert p.returncode == 2
    assert p.stderr.strip() == f"{source}:2:1: error: file is binary (a NUL byte at offset 23), not CUDA source"


@needs_ptxas
def test_blocks_nested_1500_deep_parse_print_and_instrument_as_ptxas_takes_them(tmp_path: Path):
    depth = 1500
    ptx = tmp_path / "deep.ptx"
    ptx.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                   + "{\n" * depth + "ret;\n" + "}\n" * depth + "}\n")
    assert subprocess.run(["ptxas", "-arch=sm_80", str(ptx), "-o", str(tmp_path / "deep.cubin")]).returncode == 0
    parsed = run("parse", "--format", "json", str(ptx))
    assert parsed.returncode == 0, parsed.stderr
    with room_for_nesting():  # json's decoder recurses per level too
        document = json.loads(parsed.stdout)
    nested, node = 0, document["files"][0]["items"][-1]["body"]
    while node and node[0]["node"] == "Block":
        nested, node = nested + 1, node[0]["body"]
    assert nested == depth
    out = tmp_path / "deep_i.ptx"
    instrumented = run("instrument", str(ptx), "-o", str(out))
    assert instrumented.returncode == 0, instrumented.stderr
    assert subprocess.run(["ptxas", "-arch=sm_80", str(out), "-o", str(tmp_path / "i.cubin")]).returncode == 0
