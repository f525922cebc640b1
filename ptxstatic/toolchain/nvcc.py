"""nvcc: compiling ``.cu`` files to PTX (with the headers they include), and its version."""

from __future__ import annotations

import os
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import NVCC_PTX_BYTES, NVCC_TIMEOUT_S, TOOL_QUERY_TIMEOUT_S
from ptxstatic.toolchain.process import find, run_tool, scratch_directory

DEFAULT_FLAGS = "-arch=sm_80 -lineinfo"


@dataclass(frozen=True)
class CompiledPtx:
    """The PTX of one translation unit and the files nvcc read to make it (the source and every header)."""

    text: str
    dependencies: tuple[str, ...]


class NvccFailed(PtxstaticError):
    """nvcc ran and rejected the source; ``output`` is its own diagnostics."""

    def __init__(self, source: str, status: int, output: str) -> None:
        super().__init__(f"nvcc failed on {source} (exit {status}):\n{output}")
        self.source, self.status, self.output = source, status, output


def nvcc_path() -> str | None:
    return find("nvcc")


def compile_to_ptx(source: str | Path, flags: str = DEFAULT_FLAGS) -> str:
    """Run ``nvcc -ptx`` on a CUDA file and return the PTX text; nvcc's diagnostics become the error."""
    return compile_ptx(source, shlex.split(flags), dependencies=False).text


def compile_ptx(source: str | Path, args: list[str], *, cwd: str | Path | None = None, nvcc: str | None = None,
                dependencies: bool = True, cancel: threading.Event | None = None) -> CompiledPtx:
    """``nvcc -ptx ARGS SOURCE`` in ``cwd`` (relative paths in ``args`` and ``source`` are taken from there).

    ``nvcc`` is the compiler to run (default: the one on the PATH). With ``dependencies``, nvcc also lists the
    files it read (``-MD``). ``cancel`` kills nvcc when set (:class:`~.process.ToolCancelled`). A failed
    compilation raises :class:`NvccFailed` carrying nvcc's messages.
    """
    nvcc = nvcc or nvcc_path()
    if nvcc is None:
        raise PtxstaticError(
            f"{source}: nvcc is not on the PATH, so .cu files cannot be compiled here; "
            "compile with `nvcc -ptx` elsewhere and pass the .ptx file"
        )
    with scratch_directory("ptxstatic-") as tmp:
        out, deps = Path(tmp) / "out.ptx", Path(tmp) / "out.d"
        argv = [nvcc, "-ptx", *args, str(source), "-o", str(out)]
        if dependencies:
            argv += ["-MD", "-MF", str(deps)]
        proc = run_tool(argv, NVCC_TIMEOUT_S, str(source), cwd=None if cwd is None else str(cwd), cancel=cancel)
        if proc.returncode != 0:
            raise NvccFailed(str(source), proc.returncode, (proc.stderr or proc.stdout).strip())
        listed = _make_dependencies(deps.read_text(errors="replace")) if dependencies else ()
        if os.path.getsize(out) > NVCC_PTX_BYTES:
            raise PtxstaticError(f"{source}: nvcc wrote {os.path.getsize(out) / 2**20:.0f} MiB of PTX, more than "
                                 f"the {NVCC_PTX_BYTES / 2**20:.0f} MiB that are read (limits.NVCC_PTX_BYTES)")
        base = Path(cwd) if cwd is not None else Path.cwd()
        return CompiledPtx(out.read_text(errors="replace"), tuple(str((base / d).resolve()) for d in listed))


def _make_dependencies(text: str) -> list[str]:
    """The prerequisites of a make rule as nvcc's ``-MD`` writes it (``out.ptx : a.cu \\`` ``b.h``)."""
    return shlex.split(text.replace("\\\n", " ").partition(":")[2])


def nvcc_version() -> str:
    """nvcc's release line, or '' without nvcc."""
    nvcc = nvcc_path()
    if nvcc is None:
        return ""
    out = run_tool([nvcc, "--version"], TOOL_QUERY_TIMEOUT_S, "nvcc --version").stdout.strip().splitlines()
    return out[-1] if out else ""
