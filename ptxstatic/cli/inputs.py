"""Turning command-line inputs (PTX files, .cu files, directories, ``-``) into parsed modules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.loader import STDIN, ValidatedStream, load_stream, read_input
from ptxstatic.ptx.ast import Module
from ptxstatic.ptx.kernels import find_kernels
from ptxstatic.ptx.parser import ModuleStream, parse_text
from ptxstatic.ptx.validate import apply, validate_module

PTX_SUFFIXES = (".ptx",)
CUDA_SUFFIXES = (".cu",)


def expand(paths: tuple[str, ...]) -> list[str | SourceError]:
    """Files named on the command line, directories expanded to the .ptx and .cu files under them (with the
    symbolic links among them that point nowhere, which :func:`load` reports). A path that cannot be an input
    (missing, a dangling link, a directory without inputs) is its error in the list, in its place, so that
    the other inputs are still read."""
    out: list[str | SourceError] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*") if f.suffix in PTX_SUFFIXES + CUDA_SUFFIXES
                           and (f.is_file() or _dangling(f)))
            out += found or [SourceError(p, 0, 0, "no .ptx or .cu files in this directory")]
        elif path.exists() or _dangling(path):
            out.append(p)
        else:
            out.append(SourceError(p, 0, 0, "no such file or directory"))
    return out


def _dangling(path: Path) -> bool:
    return path.is_symlink() and not path.exists()


def read(path: str, nvcc_flags: str) -> tuple[str, str]:
    """(PTX text, the name to show) of one input: ``-`` is standard input, ``.cu`` is compiled with nvcc."""
    text, _ = read_input(path, nvcc_flags)
    return text, "<stdin>" if path == STDIN else path


def load(path: str, nvcc_flags: str, recover: bool, kernel: str | None = None) -> Module:
    """Parse and validate one input (see :func:`read`).

    Without ``recover`` the first error is raised; with it, the errors are in ``Module.errors`` and the
    functions that have them are left out. With ``kernel``, errors elsewhere in the file (in a function the
    kernel does not call) are reported on stderr and the kernel is still analysed.
    """
    text, name = read(path, nvcc_flags)
    module = parse_text(text, name, recover=recover or kernel is not None)
    validation = validate_module(module, text)
    if kernel is None or recover:
        apply(module, validation, recover)
        return module
    others = sorted(module.errors + validation.errors, key=lambda e: (e.line, e.column))
    try:
        targets = [k.name for k in find_kernels(module, kernel)]
    except PtxstaticError:
        if module.errors:
            raise module.errors[0] from None  # the kernel may be the function that could not be parsed
        if not module.kernels and others:
            raise others[0] from None  # no kernel at all: what is wrong with the file says why
        raise
    blocking = sorted((e for k in targets for e in validation.blocking(module, k)), key=lambda e: (e.line, e.column))
    if blocking:
        raise blocking[0]
    for err in others:
        click.echo(err.render(), err=True)
    apply(module, validation, recover=True)
    return module


def read_llvm_ir(path: str) -> str:
    """The text of an LLVM IR file (``.ll``)."""
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PtxstaticError(f"{path}: cannot read LLVM IR text: {exc}") from None


def modules(paths: tuple[str, ...], nvcc_flags: str) -> Iterator[Module]:
    """Parse each input with recovery; errors are reported on stderr and remembered in ``Module.errors``.

    A file that cannot be read or compiled at all yields an empty module holding its error.
    """
    for path in expand(paths):
        if isinstance(path, SourceError):
            module = Module(path.file, [], [path])
        else:
            try:
                module = load(path, nvcc_flags, recover=True)
            except PtxstaticError as err:  # SourceError included
                module = Module(path, [], [err])
        for err in module.errors:
            click.echo(err.render(), err=True)
        yield module


def streams(paths: tuple[str, ...], nvcc_flags: str) -> Iterator[ModuleStream | ValidatedStream]:
    """Each input as a :class:`ModuleStream` with recovery, for commands that go function by function.

    Errors are in ``stream.module.errors`` as they are met (the caller reports them); a file that cannot be
    read or compiled at all gives an empty stream holding its error.
    """
    for path in expand(paths):
        if isinstance(path, SourceError):
            stream = ModuleStream("", path.file)
            stream.module.errors.append(path)
            yield stream
        else:
            yield load_stream(path, nvcc_flags)
