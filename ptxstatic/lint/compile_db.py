"""``compile_commands.json``: the command a build compiles each translation unit with.

CMake writes it with ``-DCMAKE_EXPORT_COMPILE_COMMANDS=ON`` (also Bear, Meson, ...). It is found in the build
directory given by ``--build-dir`` or the configuration's ``build-dir``, else by walking up from the checked
path and looking in each directory and its ``build/`` subdirectory (as clangd does). A ``.cu`` file's entry
gives nvcc's flags for a ``-ptx`` compilation of the same translation unit
(:func:`~ptxstatic.toolchain.nvcc_command.ptx_arguments`); files without one get the configured flags.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ptxstatic.config import Config
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.toolchain.nvcc import DEFAULT_FLAGS
from ptxstatic.toolchain.nvcc_command import parse_command, ptx_arguments

DATABASE_NAME = "compile_commands.json"
_LINE_INFO = ("-lineinfo", "--generate-line-info", "-G", "--device-debug")


@dataclass(frozen=True)
class CompileSpec:
    """How one CUDA file is compiled to PTX: nvcc's arguments (no input, no output), the directory nvcc runs
    in, the compiler (None: nvcc on the PATH) and where the flags came from."""

    args: tuple[str, ...]
    directory: str
    nvcc: str | None
    origin: str  # the compile_commands.json path, or "configuration"


class CompileDatabase:
    """The CUDA entries of one ``compile_commands.json``, by resolved source path."""

    def __init__(self, path: Path, entries: dict[str, CompileSpec], skipped: dict[str, str]) -> None:
        self.path = path
        self._entries = entries
        self._skipped = skipped  # source -> why its entry cannot be used (a compiler that is not nvcc)

    def lookup(self, file: str | Path) -> tuple[CompileSpec | None, str | None]:
        """The file's compile spec, or (None, why) when the database has no usable entry for it."""
        key = os.path.realpath(file)
        if key in self._entries:
            return self._entries[key], None
        if key in self._skipped:
            return None, f"its entry in {self.path} {self._skipped[key]}"
        return None, f"it has no entry in {self.path}"


def find_database(start: str | Path, build_dir: str | Path | None = None) -> Path | None:
    """The ``compile_commands.json`` for ``start``: in ``build_dir`` when given (an error if it has none),
    else the nearest one walking up from ``start``, in each directory or its ``build/``."""
    if build_dir is not None:
        path = Path(build_dir) / DATABASE_NAME
        if not path.is_file():
            raise PtxstaticError(f"{build_dir}: no {DATABASE_NAME} in this build directory "
                                 "(configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)")
        return path.resolve()
    here = Path(start).resolve()
    for d in (here if here.is_dir() else here.parent, *here.parents):
        for candidate in (d / DATABASE_NAME, d / "build" / DATABASE_NAME):
            if candidate.is_file():
                return candidate
    return None


def load_database(path: str | Path) -> CompileDatabase:
    """Read a ``compile_commands.json`` (cached per file and modification time)."""
    path = Path(path).resolve()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise SourceError(str(path), 0, 0, f"cannot read the compilation database: {exc.strerror}") from None
    return _load(path, stamp)


@lru_cache(maxsize=8)
def _load(path: Path, stamp: int) -> CompileDatabase:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourceError(str(path), 0, 0, f"cannot read the compilation database: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SourceError(str(path), 0, 0, "the compilation database is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SourceError(str(path), exc.lineno, exc.colno, f"invalid JSON: {exc.msg}") from None
    if not isinstance(data, list):
        raise SourceError(str(path), 1, 1, "a compilation database is a JSON list of entries")
    entries: dict[str, CompileSpec] = {}
    skipped: dict[str, str] = {}
    for n, entry in enumerate(data):
        source, spec, why = _entry(path, n, entry)
        if spec is not None:
            entries.setdefault(source, spec)
        elif why is not None:
            skipped.setdefault(source, why)
    return CompileDatabase(path, entries, skipped)


def _entry(path: Path, n: int, entry: object) -> tuple[str, CompileSpec | None, str | None]:
    """(resolved source, spec, None), or (source, None, why it is unusable)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
            or not isinstance(entry.get("directory"), str):
        raise SourceError(str(path), 0, 0, f"entry {n} needs 'directory' and 'file' strings")
    directory = entry["directory"]
    source = os.path.realpath(os.path.join(directory, entry["file"]))
    argv = entry.get("arguments")
    if argv is None and isinstance(entry.get("command"), str):
        argv = shlex.split(entry["command"])
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise SourceError(str(path), 0, 0, f"entry {n} ({entry['file']}) needs 'arguments' or 'command'")
    cmd = parse_command(argv, directory)
    if not cmd.analysed and not cmd.inputs:  # another compiler, or no CUDA source
        return source, None, f"is not an nvcc compilation ({cmd.pass_reason})"
    args = ptx_arguments(cmd)
    if not any(a in _LINE_INFO for a in args):
        args.append("-lineinfo")  # line information changes nothing but the .loc lines findings point at
    compiler = cmd.compiler if os.path.isabs(cmd.compiler) and os.path.exists(cmd.compiler) else None
    return source, CompileSpec(tuple(args), directory, compiler, str(path)), None


def configured_spec(config: Config, flags: str | None, header: bool) -> CompileSpec:
    """The spec for a file the build does not describe: ``flags`` (the command line's ``--nvcc-flags``),
    else the configuration's ``nvcc-flags``, else the default; run in the configuration's directory (or the
    current one). A header (``.cuh``) is compiled as CUDA (``-x cu``)."""
    args = shlex.split(flags if flags is not None else config.nvcc_flags or DEFAULT_FLAGS)
    if header:
        args += ["-x", "cu"]
    return CompileSpec(tuple(args), str(config.root or Path.cwd()), None, "configuration")
