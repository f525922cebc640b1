"""Running a tool of the CUDA toolkit as a subprocess: found on the PATH, bounded in time, errors as messages."""

from __future__ import annotations

import shutil
import subprocess

from ptxstatic.errors import PtxstaticError


def find(tool: str) -> str | None:
    """The tool's path on the PATH, or None."""
    return shutil.which(tool)


def run_tool(argv: list[str], timeout_s: float, what: str) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (its output captured as text) for at most ``timeout_s`` seconds; ``what`` names the job in
    the :class:`PtxstaticError` raised when the tool cannot start or does not finish in time."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise PtxstaticError(f"{what}: {argv[0]} did not finish in {timeout_s:.0f} s") from None
    except OSError as exc:
        raise PtxstaticError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from None
