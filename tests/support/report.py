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


def blocks_outside(svg: str, salt: str, block_ids: list[int]) -> list[int]:
    """The blocks of a graph ``<svg>`` whose box (the paths in its group ``{salt}_b{id}``, placed by the
    ``translate``/``scale`` transforms of the groups around them, as dot writes them) is not wholly inside the
    drawing's view box."""
    import re
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    x0, y0, width, height = (float(v) for v in root.get("viewBox").split())
    parents = {child: parent for parent in root.iter() for child in parent}
    groups = {g.get("id"): g for g in root.iter(f"{ns}g")}

    def placed(element, x: float, y: float) -> tuple[float, float]:
        while element is not None:
            steps = re.findall(r"(translate|scale)\(([^)]*)\)", element.get("transform", ""))
            for kind, args in reversed(steps):
                a = [float(v) for v in args.replace(",", " ").split()]
                b = a[1] if len(a) > 1 else (0.0 if kind == "translate" else a[0])
                x, y = (x + a[0], y + b) if kind == "translate" else (x * a[0], y * b)
            element = parents.get(element)
        return x, y

    out = []
    for b in block_ids:
        points = []
        for path in groups[f"{salt}_b{b}"].iter(f"{ns}path"):
            numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
            points += [placed(path, x, y) for x, y in zip(numbers[0::2], numbers[1::2])]
        xs, ys = [x for x, _ in points], [y for _, y in points]
        if not xs or min(xs) < x0 or max(xs) > x0 + width or min(ys) < y0 or max(ys) > y0 + height:
            out.append(b)
    return out
