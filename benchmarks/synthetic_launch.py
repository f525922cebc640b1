"""A small made-up launch for a corpus kernel whose real launch is unknown (shared by the benchmarks)."""

from __future__ import annotations

from ptxstatic.counts.launch import Buffer, Launch
from ptxstatic.ptx.ast import Function


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
