"""nvcc: compiling ``.cu`` files to PTX, and its version."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import NVCC_TIMEOUT_S, TOOL_QUERY_TIMEOUT_S
from ptxstatic.toolchain.process import find, run_tool

DEFAULT_FLAGS = "-arch=sm_80 -lineinfo"


def nvcc_path() -> str | None:
    return find("nvcc")


def compile_to_ptx(source: str | Path, flags: str = DEFAULT_FLAGS) -> str:
    """Run ``nvcc -ptx`` on a CUDA file and return the PTX text; nvcc's diagnostics become the error."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise PtxstaticError(
            f"{source}: nvcc is not on the PATH, so .cu files cannot be compiled here; "
            "compile with `nvcc -ptx` elsewhere and pass the .ptx file"
        )
    with tempfile.TemporaryDirectory(prefix="ptxstatic-") as tmp:
        out = Path(tmp) / "out.ptx"
        proc = run_tool([nvcc, "-ptx", *shlex.split(flags), str(source), "-o", str(out)], NVCC_TIMEOUT_S, str(source))
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip()
            raise PtxstaticError(f"nvcc failed on {source} (exit {proc.returncode}):\n{msg}")
        return out.read_text()


def nvcc_version() -> str:
    """nvcc's release line, or '' without nvcc."""
    nvcc = nvcc_path()
    if nvcc is None:
        return ""
    out = run_tool([nvcc, "--version"], TOOL_QUERY_TIMEOUT_S, "nvcc --version").stdout.strip().splitlines()
    return out[-1] if out else ""
