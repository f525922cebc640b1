"""The one way from an input to a parsed module: a ``.ptx`` file, a ``.cu`` file (compiled with nvcc, with
the flags given and the headers it read), standard input (``-``), or text the caller holds (an editor's
unsaved buffer, PTX the build just wrote). The command line, the nvcc hook, the language server, ``check``
and ``collect`` all load through :func:`load_module`.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.fatbin_dump import ptx_of_dump
from ptxstatic.ptx.parser import ModuleStream, parse_text, read_ptx, refuse_nul
from ptxstatic.ptx.validate import ModuleChecker, check
from ptxstatic.toolchain.nvcc import DEFAULT_FLAGS, compile_ptx

CUDA_SUFFIXES = (".cu", ".cuh")
STDIN = "-"


@dataclass(frozen=True)
class Loaded:
    """A parsed input: the module (its errors in ``module.errors`` when loaded with recovery), the PTX text
    and the files it was made from (the ``.ptx`` file, or the ``.cu`` file and every header nvcc read)."""

    module: Module
    text: str
    dependencies: tuple[str, ...]


def nvcc_args(flags: str | list[str] | None) -> list[str]:
    """nvcc's arguments from a flag string (``-arch=sm_90 -lineinfo``) or a list; the default flags without."""
    if flags is None:
        return shlex.split(DEFAULT_FLAGS)
    return shlex.split(flags) if isinstance(flags, str) else list(flags)


def read_input(path: str, flags: str | list[str] | None = None, *, text: str | None = None,
               cwd: str | None = None, nvcc: str | None = None, cancel: threading.Event | None = None,
               dependencies: bool = False) -> tuple[str, tuple[str, ...]]:
    """(PTX text, the files it was made from) of one input. ``text``: the content of a ``.ptx`` input the
    caller already holds; a ``.cu`` input is compiled from ``path`` in ``cwd`` with ``nvcc`` (default: the one
    on the PATH), cancelled when ``cancel`` is set."""
    if path == STDIN:
        return ptx_of_dump(read_stdin(), "<stdin>"), ()
    if text is None:
        _check_readable(path, cwd)
    if path.endswith(CUDA_SUFFIXES):
        _refuse_binary(Path(cwd or ".") / path, path)
        compiled = compile_ptx(path, nvcc_args(flags), cwd=cwd, nvcc=nvcc, dependencies=dependencies,
                               cancel=cancel)
        return compiled.text, compiled.dependencies
    if text is not None:
        return ptx_of_dump(text, path), (os.path.abspath(path),)
    return read_ptx(path), (os.path.abspath(path),)


def _check_readable(path: str, cwd: str | None) -> None:
    """A :class:`SourceError` (``FILE: error: ...``) for an input that cannot be read (a dangling symbolic
    link, a missing or unreadable file, a directory), before any tool runs on it; ``cwd``: where a relative
    ``path`` is."""
    p = Path(cwd or "", path)
    if p.is_symlink() and not p.exists():
        raise SourceError(path, 0, 0, f"dangling symbolic link (to {os.readlink(p)}, which does not exist)")
    if p.is_dir():
        raise SourceError(path, 0, 0, "is a directory, not a file")
    try:
        os.close(os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))  # non-blocking: a FIFO does not hang
    except OSError as exc:
        raise SourceError(path, 0, 0, f"cannot read: {exc.strerror or exc}") from None


def _refuse_binary(file: Path, shown: str) -> None:
    """A CUDA source holding a NUL byte is binary, not C++: a one-line :class:`SourceError` instead of nvcc's
    pages of garbage (an unreadable file is left to nvcc to report)."""
    if not file.is_file():  # a FIFO is left to nvcc, not read here
        return
    try:
        data = file.read_bytes()
    except OSError:
        return
    refuse_nul(data.decode("latin-1"), shown, "file is binary (a NUL byte at offset {at}), not CUDA source")


def load_module(path: str, flags: str | list[str] | None = None, *, text: str | None = None, name: str | None = None,
                cwd: str | None = None, nvcc: str | None = None, cancel: threading.Event | None = None,
                recover: bool = False, validate: bool = True, dependencies: bool = False) -> Loaded:
    """Read (see :func:`read_input`), parse and, with ``validate``, validate one input as ptxas would. Without
    ``recover`` the first error is raised; with it, errors go to ``module.errors`` and the functions that have
    them are left out. ``name``: the module's file name (default: the input's, ``<stdin>`` for ``-``)."""
    ptx, deps = read_input(path, flags, text=text, cwd=cwd, nvcc=nvcc, cancel=cancel, dependencies=dependencies)
    shown = name or ("<stdin>" if path == STDIN else path)
    module = parse_text(ptx, shown, recover=recover)
    if validate:
        check(module, ptx, recover=recover)
    return Loaded(module, ptx, deps)


def load_stream(path: str, flags: str | list[str] | None = None) -> ModuleStream | ValidatedStream:
    """One input as a stream of validated functions, parsed one at a time with recovery (memory holds one
    function, not the file). An input that cannot be read or compiled at all gives an empty stream holding
    its error; the other errors are in ``stream.module.errors`` as they are met."""
    try:
        text, _ = read_input(path, flags)
        return ValidatedStream(ModuleStream(text, "<stdin>" if path == STDIN else path, recover=True), text)
    except PtxstaticError as err:  # SourceError included
        stream = ModuleStream("", path)
        stream.module.errors.append(err)
        return stream


class ValidatedStream:
    """A :class:`ModuleStream` whose functions are validated as they are parsed: a function with errors is
    left out, and every error (the module's first, then each function's) goes to ``module.errors``."""

    def __init__(self, stream: ModuleStream, text: str) -> None:
        self.stream = stream
        self.module = stream.module
        self.deferred = stream.deferred
        self.checker = ModuleChecker(self.module.filename, text)
        heads = [d.head for d in stream.deferred]
        for item in sorted([*self.module.items, *heads], key=lambda i: getattr(i, "line", 0)):
            self.checker.item(item)
        self.reported = len(self.checker.errors)
        self.module.errors.extend(self.checker.errors)
        self.finished = False
        if not self.deferred:  # nothing more will come: the module's checks are complete
            self._finish()

    def functions(self, select: Callable[[Function], bool] | None = None) -> Iterator[Function]:
        for fn in self.stream.functions(select):
            errors = self.checker.check_function(fn)
            self.module.errors.extend(errors)
            if not errors:
                yield fn
        self._finish()

    def _finish(self) -> None:
        if not self.finished:
            self.finished = True
            self.checker.finish()
            self.module.errors.extend(self.checker.errors[self.reported:])


def read_stdin() -> str:
    """Standard input as text: UTF-8 without NUL bytes, else a one-line :class:`SourceError`."""
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError("<stdin>", data[: exc.start].count(b"\n") + 1, 1,
                          f"input is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
                          "expected PTX") from None
    refuse_nul(text, "<stdin>", "input is binary (a NUL byte at offset {at}): expected PTX text")
    return text
