"""The report of the ten-kernel file (``tests/data/report/kernels.ptx``, nvcc's PTX of ``kernels.cu``), built
once with the shipped default model and shared by the report tests."""

from __future__ import annotations

import contextlib

import pytest
from support.paths import ROOT
from support.report import KERNELS_PTX, LAUNCH, Built

from ptxstatic.config import Config
from ptxstatic.predict import Models, load_models
from ptxstatic.report.file_report import file_report
from ptxstatic.report.html_page import write_report


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
