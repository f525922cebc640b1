"""The PTX corpus the benchmarks run over: its kernels, and a small made-up launch for a kernel whose real
launch is unknown."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.parser import parse_file


def ptx_files(paths: Sequence[Path]) -> list[Path]:
    """The PTX files named, and those under the folders named."""
    return sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*.ptx")))


def kernels(files: Sequence[Path]) -> Iterator[tuple[Path, Module, Function]]:
    """Every kernel of the files (a file that cannot be parsed is reported on stderr and skipped)."""
    for path in files:
        try:
            module = parse_file(path, recover=True)
        except PtxstaticError as exc:
            print(f"{path}: cannot parse: {exc}", file=sys.stderr)
            continue
        for fn in module.kernels:
            yield path, module, fn


def synthetic_launch(fn: Function, threads: int, float_value: float, int32_value: int, other_value: int) -> Launch:
    """Two CTAs of at most ``threads`` threads (less where ``.reqntid``/``.maxntid`` say so), a buffer for
    every 64-bit parameter, and the given values for float, 32-bit integer and other scalars."""
    for name in ("reqntid", "maxntid"):
        d = fn.directive(name)
        if d is not None and d.values:
            threads = min(threads, int(d.values[0]) * (int(d.values[1]) if len(d.values) > 1 else 1))
    args: dict[str, int | float | Buffer] = {}
    for decl in fn.params or ():
        for d in decl.names:
            if d.dims:
                args[d.name] = 0
            elif decl.dtype in ("u64", "b64", "s64"):
                args[d.name] = Buffer("u32", 1 << 18)
            elif decl.dtype in ("f32", "f64"):
                args[d.name] = float_value
            elif decl.dtype in ("u32", "s32", "b32"):
                args[d.name] = int32_value
            else:
                args[d.name] = other_value
    return Launch(grid=(2, 1, 1), block=(threads, 1, 1), shared_bytes=16384, args=args)
