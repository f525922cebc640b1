"""Graph layout with graphviz ``dot``: DOT text in, SVG out."""

from __future__ import annotations

import os

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import DOT_TIMEOUT_S
from ptxstatic.toolchain.process import find, run_tool, scratch_directory


def have_dot() -> bool:
    """Whether graphviz ``dot`` is on the PATH."""
    return find("dot") is not None


def dot_svg(source: str) -> str:
    """The SVG ``dot`` lays out for the DOT text ``source``."""
    tool = find("dot")
    if tool is None:
        raise PtxstaticError("graphviz dot is not on the PATH")
    with scratch_directory("ptxstatic-dot-") as tmp:
        path = os.path.join(tmp, "graph.dot")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        run = run_tool([tool, "-Tsvg", path], DOT_TIMEOUT_S, "laying out a basic-block graph")
    if run.returncode != 0:
        raise PtxstaticError(f"dot failed (exit {run.returncode}): {run.stderr.strip()}")
    return run.stdout
