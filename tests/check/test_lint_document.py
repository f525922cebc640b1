"""The per-document API the language server and the HTML report build on: an editor's unsaved text, a
cancelled compile, PTX text, and the cache, called in-process without click."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from support.check import copy_project, expected
from support.paths import DATA, needs_nvcc

from ptxstatic.config import config_for
from ptxstatic.lint.cache import ResultCache
from ptxstatic.lint.document import analyse_document
from ptxstatic.toolchain.process import ToolCancelled

RULES_PTX = DATA / "rules" / "ptx" / "lineinfo" / "ps201_barrier.ptx"


@needs_nvcc
def test_unsaved_text_is_analysed_at_the_files_own_path(tmp_path: Path):
    project = copy_project(tmp_path)
    scan = project / "src" / "scan.cu"
    edited = scan.read_text().replace("if (threadIdx.x < blockDim.x / 2)", "if (blockIdx.x == 0)")
    result = analyse_document(scan, config_for(scan), text=edited)
    assert result.problems == [] and result.findings == []  # a uniform condition: nothing to report
    result = analyse_document(scan, config_for(scan), text="// comment\n" + scan.read_text())
    [finding] = result.findings
    assert finding.location.file.endswith("src/tile.cuh")
    assert finding.location.line in expected(project / "src/tile.cuh")
    assert finding.inlined_at[0].file == str(scan) and finding.inlined_at[0].line == 10  # one line lower
    assert str(scan) in result.dependencies


@needs_nvcc
def test_a_cancelled_compile_stops_at_once(tmp_path: Path):
    project = copy_project(tmp_path)
    scan = project / "src" / "scan.cu"
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(ToolCancelled):
        analyse_document(scan, config_for(scan), cancel=cancel)
    assert time.monotonic() - start < 1.0  # nvcc alone takes longer


def test_ptx_text_and_the_cache(tmp_path: Path):
    cache = ResultCache(tmp_path / "cache")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(RULES_PTX.read_text())
    first = analyse_document(ptx, config_for(ptx), cache=cache)
    again = analyse_document(ptx, config_for(ptx), cache=cache)
    assert not first.cached and again.cached and again.findings == first.findings and first.findings
    assert [k.name for k in again.kernels] == [k.name for k in first.kernels]
    unsaved = analyse_document(ptx, config_for(ptx), text=RULES_PTX.read_text())
    assert not unsaved.cached and unsaved.findings == first.findings
    broken = analyse_document(ptx, config_for(ptx), text=".version 8.0\n.target sm_90\n.address_size 64\n"
                                                        ".visible .entry k()\n{\n\tret ,;\n}\n")
    [problem] = broken.problems
    assert (problem.line, problem.file) == (6, str(ptx)) and problem.render().startswith(f"{ptx}:6:")
