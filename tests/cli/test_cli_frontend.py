"""The parse and analyze commands as a user runs them: real subprocesses, real files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.paths import FRONTEND_DATA, needs_nvcc

PTX = FRONTEND_DATA / "small_sm80_lineinfo.ptx"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, input=stdin)


def test_analyze_text():
    p = run("analyze", str(PTX))
    assert p.returncode == 0, p.stderr
    assert "kernel row_sum" in p.stdout and "kernel nested" in p.stdout and "kernel branchy" in p.stdout
    assert "loops 2 (max depth 2)" in p.stdout  # nested
    assert "Traceback" not in p.stderr


def test_analyze_json_matches_the_library():
    from ptxstatic.analysis.summary import summarize_module
    from ptxstatic.ptx import parse_file

    p = run("analyze", str(PTX), "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    expected = [{"file": str(PTX), "kernel": s.name, "display_name": s.name, **s.to_dict()}
                for s in summarize_module(parse_file(PTX))]
    assert json.loads(json.dumps(expected)) == data["kernels"]
    nested = next(f for f in data["kernels"] if f["name"] == "nested")
    assert nested["blocks"] == 11 and nested["max_loop_depth"] == 2 and nested["shared_bytes"] == 256


def test_analyze_one_kernel_from_stdin():
    p = run("analyze", "-", "--kernel", "branchy", "--format", "json", stdin=PTX.read_text())
    assert p.returncode == 0, p.stderr
    assert [f["name"] for f in json.loads(p.stdout)["kernels"]] == ["branchy"]


def test_analyze_directory(tmp_path: Path):
    (tmp_path / "a.ptx").write_text(PTX.read_text())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.ptx").write_text(PTX.read_text())
    p = run("analyze", str(tmp_path), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["files"]) == 2


def test_parse_json_dump_has_decoded_instructions():
    p = run("parse", str(PTX), "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)["files"][0]
    fn = next(i for i in data["items"] if i["node"] == "Function" and i["name"] == "row_sum")
    ld = next(s for s in fn["body"] if s["node"] == "Instruction" and s["opcode"] == "ld.global.nc.f32")
    assert ld["info"]["space"] == "global" and ld["info"]["cache"] == ["nc"] and ld["loc"]["line"] == 8


def test_malformed_file_reports_and_analyses_the_rest(tmp_path: Path):
    text = PTX.read_text().replace("mad.lo.s32 \t%r1, %r13, %r12, %r14;", "mad.lo.s32 \t%r1, %r13 %r12, %r14;")
    bad = tmp_path / "bad.ptx"
    bad.write_text(text)
    p = run("analyze", str(bad))
    assert p.returncode == 2
    assert f"{bad}:37:" in p.stderr and "error:" in p.stderr and "^" in p.stderr
    assert "Traceback" not in p.stderr
    assert "kernel row_sum" not in p.stdout and "kernel nested" in p.stdout and "kernel branchy" in p.stdout


def test_bad_inputs_exit_2_without_traceback(tmp_path: Path):
    binary = tmp_path / "x.ptx"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    for args in (["analyze", str(tmp_path / "missing.ptx")], ["parse", str(binary)],
                 ["analyze", str(PTX), "--kernel", "nope"], ["analyze", str(PTX), "--format", "yaml"]):
        p = run(*args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr and p.stderr.strip(), args


@needs_nvcc
def test_cu_input_is_compiled(tmp_path: Path):
    p = run("analyze", str(FRONTEND_DATA / "small.cu"), "--nvcc-flags", "-arch=sm_90 -lineinfo", "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["files"][0]["target"] == ["sm_90"] and len(data["kernels"]) == 3


def test_cu_input_without_nvcc(tmp_path: Path):
    import os

    env = dict(os.environ, PATH=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "analyze", str(FRONTEND_DATA / "small.cu")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "nvcc is not on the PATH" in p.stderr and "Traceback" not in p.stderr
