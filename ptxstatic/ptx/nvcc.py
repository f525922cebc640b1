"""Compiling ``.cu`` files to PTX with nvcc."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from ptxstatic.errors import PtxstaticError

DEFAULT_FLAGS = "-arch=sm_80 -lineinfo"


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


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
        cmd = [nvcc, "-ptx", *shlex.split(flags), str(source), "-o", str(out)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise PtxstaticError(f"{source}: nvcc did not finish in 10 minutes") from None
        if proc.returncode != 0:
            msg = (proc.stderr or proc.stdout).strip()
            raise PtxstaticError(f"nvcc failed on {source} (exit {proc.returncode}):\n{msg}")
        return out.read_text()
