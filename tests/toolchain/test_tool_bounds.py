"""Every external tool call is bounded in time and in the output kept, with a clear message: a tool that
hangs is killed with what it started, a flood of output is cut, ``ptxas -v`` statistics are skipped with a
note past a size or a time limit, and over-long names are not given to the demangler."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import DATA, needs_ptxas
from support.tools import fake_ptxas, process_gone

from ptxstatic.config import Config
from ptxstatic.limits import DEMANGLE_NAME_CHARS, TOOL_OUTPUT_BYTES
from ptxstatic.lint.document import analyse_document
from ptxstatic.ptx.kernels import demangle
from ptxstatic.toolchain.process import ToolTimeout, run_tool

LOCAL_MEMORY = DATA / "check" / "local_memory.ptx"  # one PS301 finding, resources from ptxas -v


def test_a_tool_that_hangs_is_killed_with_what_it_started(tmp_path: Path):
    pid_file = tmp_path / "child.pid"
    script = (f"import subprocess, time; p = subprocess.Popen(['sleep', '300']); "
              f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(300)")
    start = time.monotonic()
    with pytest.raises(ToolTimeout, match=r"^slow job: python3?[\d.]* did not finish in 1 s and was stopped$"):
        run_tool([sys.executable, "-c", script], 1.0, "slow job")
    assert time.monotonic() - start < 10
    assert process_gone(int(pid_file.read_text()))  # the grandchild went with the tool


def test_a_flood_of_output_is_cut():
    flood = TOOL_OUTPUT_BYTES + 1_000_000
    done = run_tool([sys.executable, "-c", f"import sys; sys.stdout.write('x' * {flood}); sys.stderr.write('e')"],
                    60, "flood")
    assert done.returncode == 0 and done.stderr == "e"
    assert done.stdout.startswith("x" * TOOL_OUTPUT_BYTES + "\n[1000000 more bytes of output not read")


@needs_ptxas
def test_ptxas_statistics_past_the_size_limit_are_skipped_with_a_note(tmp_path: Path, monkeypatch):
    import ptxstatic.toolchain.ptxas as ptxas

    monkeypatch.setenv("PTXSTATIC_CACHE_DIR", str(tmp_path / "cache"))
    done = analyse_document(LOCAL_MEMORY, Config())
    assert [f.code for f in done.findings] == ["PS301"] and done.notes == []
    assert "ptxas -v -arch=sm_80 keeps a 64-byte stack frame" in done.findings[0].message
    monkeypatch.setattr(ptxas, "PTXAS_STATS_BYTES", 100)  # the module is about 440 bytes
    done = analyse_document(LOCAL_MEMORY, Config())
    [note] = done.notes
    assert re.fullmatch(rf"{LOCAL_MEMORY}: ptxas -v statistics skipped: the PTX is [\d,]+ bytes, over the limit of "
                        r"100 bytes \(limits.PTXAS_STATS_BYTES\); the resource rules do not judge this file", note)
    assert [f.code for f in done.findings] == ["PS301"] and "ptxas" not in done.findings[0].message


def test_ptxas_statistics_past_the_time_limit_are_skipped(tmp_path: Path):
    script = ("import ptxstatic.toolchain.ptxas as p; p.PTXAS_STATS_TIMEOUT_S = 1\n"
              f"try:\n    p.ptxas_stats(open({str(LOCAL_MEMORY)!r}).read(), 'sm_80')\n"
              "except p.PtxasSkipped as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], env=fake_ptxas(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.startswith("ptxas -v statistics skipped: ptxas -arch=sm_80: ptxas did not finish in 1 s and "
                                  "was stopped (limits.PTXAS_STATS_TIMEOUT_S)"), done.stderr
    assert process_gone(int((tmp_path / "ptxas.pid").read_text()))
    assert list((tmp_path / "tmp").iterdir()) == []  # its ptxstatic-*/in.ptx removed


def test_names_longer_than_the_limit_are_not_demangled():
    name = "_Z3fooi"
    long = "_Z" + "N" + "3abc" * (DEMANGLE_NAME_CHARS // 4) + "E3fooEv"
    assert demangle([name, long]) == {name: "foo(int)", long: long}
