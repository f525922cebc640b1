"""The report of the ten-kernel file (``tests/data/report/kernels.ptx``, nvcc's PTX of ``kernels.cu``), built
once with the shipped default model and shared by the report tests."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import DATA, ROOT

from ptxstatic.config import Config
from ptxstatic.launch import Launch
from ptxstatic.predict import Models, load_models
from ptxstatic.report.file_report import FileReport, file_report
from ptxstatic.report.html_page import write_report

REPORT_DATA = DATA / "report"
KERNELS_PTX = REPORT_DATA / "kernels.ptx"
KERNELS_CU = REPORT_DATA / "kernels.cu"
#: the launch the report tests use: 2 x 2 CTAs of 16 x 16 threads
LAUNCH = Launch((2, 2, 1), (16, 16, 1))


@dataclass
class Built:
    report: FileReport
    page: Path
    html: str


@pytest.fixture(scope="session")
def models() -> Models:
    return load_models()


@pytest.fixture(scope="session")
def built(models: Models, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The PTX fixture's report with a launch (its ``.file`` paths are relative to the repository root)."""
    with contextlib.chdir(ROOT):
        report = file_report(str(KERNELS_PTX.relative_to(ROOT)), Config(), models, LAUNCH)
        page = write_report(report, tmp_path_factory.mktemp("report"))
    return Built(report, page, page.read_text(encoding="utf-8"))
