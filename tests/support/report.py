"""Helpers for the HTML report tests: the ten-kernel file, the launch they use, and a built page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ptxstatic.launch import Launch
from ptxstatic.report.file_report import FileReport
from support.paths import DATA

REPORT_DATA = DATA / "report"
KERNELS_PTX = REPORT_DATA / "kernels.ptx"
KERNELS_CU = REPORT_DATA / "kernels.cu"
#: the launch the report tests use: 2 x 2 CTAs of 16 x 16 threads
LAUNCH = Launch((2, 2, 1), (16, 16, 1))


@dataclass
class Built:
    """A report, the page written from it and the page's text."""

    report: FileReport
    page: Path
    html: str
