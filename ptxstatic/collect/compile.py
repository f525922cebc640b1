"""Compiling the sources of a manifest to PTX for one architecture, each file once, in parallel."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.loader import load_module
from ptxstatic.ptx.ast import Module


@dataclass(frozen=True)
class CompiledSource:
    path: Path
    arch: str
    ptx: str
    module: Module
    sha256: str  # of the PTX text

    def kernel_names(self) -> list[str]:
        return [k.name for k in self.module.kernels]


def compile_source(path: Path, arch: str, flags: str = "") -> CompiledSource:
    """PTX of a ``.cu`` file (``nvcc -ptx -arch=ARCH FLAGS``) or the text of a ``.ptx`` file, parsed."""
    loaded = load_module(str(path), f"-arch={arch} {flags}".strip(), validate=False)
    return CompiledSource(path, arch, loaded.text, loaded.module, hashlib.sha256(loaded.text.encode()).hexdigest())


Compiled = CompiledSource | PtxstaticError


def compile_all(paths: Iterable[Path], arch: str, flags: str = "", jobs: int | None = None,
                done: Callable[[Compiled], None] | None = None) -> dict[Path, Compiled]:
    """Every distinct source compiled (or the error it gave), ``jobs`` nvcc processes at a time."""
    unique = sorted(set(paths))
    out: dict[Path, Compiled] = {}

    def one(p: Path) -> tuple[Path, Compiled]:
        try:
            result: Compiled = compile_source(p, arch, flags)
        except PtxstaticError as exc:
            result = exc
        if done is not None:
            done(result)
        return p, result

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        for p, result in pool.map(one, unique):
            out[p] = result
    return out
