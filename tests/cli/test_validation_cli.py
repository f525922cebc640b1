"""Invalid PTX through the commands: FILE:LINE:COL errors with a caret, exit status 2, no traceback; an error
in one kernel does not stop another kernel selected with -k."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import DATA, FIXTURES

EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"
LAUNCH = ("--grid", "2", "--block", "64")


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, input=stdin)


def broken(tmp_path: Path, old: str, new: str, name: str = "broken.ptx") -> Path:
    text = EXAMPLE.read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def assert_one_error(p: subprocess.CompletedProcess, where: str, words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(where))
    assert words in lines[first], p.stderr
    assert lines[first + 2].strip() == "^"


def test_empty_file_is_refused(tmp_path):
    empty = tmp_path / "empty.ptx"
    empty.write_text("")
    p = run("analyze", str(empty))
    assert p.returncode == 2 and "missing .version" in p.stderr and "Traceback" not in p.stderr


def test_undefined_register_in_a_kernel(tmp_path):
    path = broken(tmp_path, "fma.rn.f32 \t%f4, %f2, %f1, %f3;", "fma.rn.f32 \t%f4, %f2, %f1, %f33;")
    p = run("predict", str(path))
    assert_one_error(p, f"{path}:115:2: error:", "undefined register %f33")


def test_other_kernels_of_the_file_are_still_analysed(tmp_path):
    path = broken(tmp_path, "fma.rn.f32 \t%f4, %f2, %f1, %f3;", "fma.rn.f32 \t%f4, %f2, %f1, %rd3;")
    p = run("analyze", str(path))
    assert p.returncode == 2
    assert "kernel block_reduce" in p.stdout and "kernel saxpy" not in p.stdout
    assert f"{path}:115:2: error: operand 4: register %rd3 is .b64" in p.stderr
    ok = run("blocks", str(path), "-k", "block_reduce", *LAUNCH)
    assert ok.returncode == 0, ok.stderr
    assert "block_reduce" in ok.stdout and f"{path}:115:2: error:" in ok.stderr
    refused = run("blocks", str(path), "-k", "saxpy", *LAUNCH)
    assert_one_error(refused, f"{path}:115:2: error:", "register %rd3 is .b64")


def test_an_error_in_a_called_function_stops_its_callers(tmp_path):
    path = broken(tmp_path, "mov.u32 \t%r3, 31;", "mov.u32 \t%r3, 0f41F80000;")
    p = run("blocks", str(path), "-k", "block_reduce", *LAUNCH)
    assert_one_error(p, f"{path}:30:2: error:", "floating-point constant 0f41F80000 for a .u32 operand")
    assert run("blocks", str(path), "-k", "saxpy", *LAUNCH).returncode == 0


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    (".address_size 64", ".address_size 1e400", 11, "invalid .address_size 1e400"),
    ("mov.u32 \t%r3, 31;", "mov.u32 \t%r3, 08;", 30, "invalid constant '08'"),
    (".b8 95,90,78,52", ".b8 1e400,90,78,52", None, "1e400"),
])
def test_inputs_that_crashed_get_one_error(tmp_path, old, new, line, words):
    path = broken(tmp_path, old, new)
    p = run("analyze", "--functions", str(path))  # the 08 is in a device function
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert words in p.stderr
    if line is not None:
        assert f"{path}:{line}:" in p.stderr


def test_standard_input_errors_show_the_line(tmp_path):
    text = (FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx").read_text().replace(
        "\tadd.s32 \t%r17, %r11, -1;", "\tadd.f33 \t%r17, %r11, -1;", 1)
    p = run("predict", "-", stdin=text)
    assert_one_error(p, "<stdin>:47:2: error:", "unknown type .f33")


def test_check_reports_invalid_ptx_as_an_input_error(tmp_path):
    path = broken(tmp_path, "fma.rn.f32 \t%f4, %f2, %f1, %f3;", "fma.rn.f32 \t%f4, %f2, %f1, %rd3;")
    p = run("check", str(path))
    assert p.returncode == 2 and "1 input error" in p.stdout + p.stderr
    assert f"{path}:115:2: error: operand 4: register %rd3 is .b64" in p.stderr
