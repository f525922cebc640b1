"""Moves and conversions: ``mov`` (with vector packing), ``cvt`` between every integer and float type, ``cvta``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands
from ptxstatic.emulator.memory import from_generic, in_window, to_generic
from ptxstatic.emulator.ops import elementwise, lanes
from ptxstatic.emulator.types import (
    HALF_TYPES,
    NP,
    EmulationError,
    directed,
    flush_subnormal,
    half_decode,
    half_encode,
    is_float,
    is_signed,
    np_type,
    pack2,
    resize,
    round_integral,
    round_to_f32,
    saturate,
    size_of,
)
from ptxstatic.ptx.ast import Vec
from ptxstatic.ptx.isa import OpInfo

_INTEGRAL = ("rni", "rzi", "rmi", "rpi")


def _mov(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    dst, src = ops.items[0], ops.items[1]
    if isinstance(dst, Vec):
        return _unpack(ops, ty, dst)
    if isinstance(src, Vec):
        return _pack(ops, ty, src)
    return elementwise(ops, ty, [ty], lambda a: a)


def _pack(ops: Operands, ty: str, src: Vec) -> Op:
    bits = 8 * size_of(ty) // len(src.items)
    readers = [ops.reader(item, f"b{bits}") for item in src.items]
    out_t = np_type(f"b{8 * size_of(ty)}")
    write = ops.write(0, f"b{8 * size_of(ty)}")

    def run(f, m):
        value = np.zeros(32, dtype=out_t)
        for k, r in enumerate(readers):
            value |= np.asarray(r(f)).astype(out_t) << out_t.type(k * bits)
        write(f, value, m)

    return run


def _unpack(ops: Operands, ty: str, dst: Vec) -> Op:
    bits = 8 * size_of(ty) // len(dst.items)
    src_t = np_type(f"b{8 * size_of(ty)}")
    read = ops.read(1, f"b{8 * size_of(ty)}")
    writers = [ops.writer(item, f"b{bits}") for item in dst.items]
    part = np_type(f"b{bits}")

    def run(f, m):
        value = np.asarray(read(f))
        for k, w in enumerate(writers):
            w(f, (value >> src_t.type(k * bits)).astype(part), m)

    return run


# ------------------------------------------------------------------------------------------- cvt
def _int_range(ty: str) -> tuple[int, int]:
    bits = 8 * size_of(ty)
    return (-(1 << bits - 1), (1 << bits - 1) - 1) if is_signed(ty) else (0, (1 << bits) - 1)


def _float_to_int(x: np.ndarray, dty: str, rounding: str) -> np.ndarray:
    """Round to an integer and saturate to the destination range; NaN gives 0 (PTX semantics)."""
    dt = np_type(dty)
    r = round_integral(x.astype(np.float64), rounding or "rzi")
    lo, hi = _int_range(dty)
    nan = np.isnan(r)
    safe = np.where(nan, 0.0, np.clip(r, lo, np.nextafter(float(hi + 1), 0.0)))
    out = safe.astype(np.int64 if is_signed(dty) or size_of(dty) < 8 else np.uint64).astype(dt)
    return np.where(r >= float(hi + 1), dt.type(hi), out)


def _int_to_int(a: np.ndarray, aty: str, dty: str, sat: bool) -> np.ndarray:
    dt = np_type(dty)
    if not sat:
        return resize(np.asarray(a), dt, is_signed(aty))
    lo, hi = _int_range(dty)
    if is_signed(aty):
        v = np.asarray(a).astype(np.int64)
        return np.clip(v, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)).astype(dt)
    v = np.asarray(a).astype(np.uint64)
    return np.minimum(v, np.uint64(hi)).astype(dt)


def _int_to_float(a: np.ndarray, aty: str, dty: str, rounding: str) -> np.ndarray:
    """Integer to float with the rounding modifier; 64-bit integers round exactly lane by lane."""
    a = lanes(a)
    if dty == "bf16":  # through float64, exact for integers of up to 32 bits
        return half_encode(a.astype(np.float64), "bf16", rounding)
    target = np_type(dty).type
    if rounding in ("", "rn"):
        return a.astype(target)
    if size_of(aty) <= 4:
        return directed(a.astype(np.float64), target, rounding)
    return np.array([_exact_directed(v, target, rounding) for v in a.tolist()], dtype=target)


def _exact_directed(v: int, target: type, rounding: str) -> float:
    y = target(float(v))
    if not np.isfinite(y):
        return y
    exact = int(y)
    if rounding == "rz" and abs(exact) > abs(v):
        y = np.nextafter(y, target(0))
    elif rounding == "rm" and exact > v:
        y = np.nextafter(y, target(-np.inf))
    elif rounding == "rp" and exact < v:
        y = np.nextafter(y, target(np.inf))
    return y


def _float_to_float(x: np.ndarray, aty: str, dty: str, info: OpInfo) -> np.ndarray:
    rnd, other = info.rounding, info.other
    if aty in HALF_TYPES:
        x = half_decode(lanes(x), aty)
    if "ftz" in other and aty == "f32":
        x = flush_subnormal(x)
    x = np.asarray(x, dtype=np.float64)
    if rnd in _INTEGRAL:
        x = round_integral(x, rnd)
    if "relu" in other:
        x = np.where(x < 0, 0.0, x)
    if "sat" in other:
        x = saturate(x)
    if dty == "f64":
        return x
    if dty == "f32":
        y = round_to_f32(x, "" if rnd in _INTEGRAL else rnd)
        return flush_subnormal(y) if "ftz" in other else y
    if "satfinite" in other:
        big = 65504.0 if dty == "f16" else float(np.finfo(np.float32).max)
        x = np.where(np.isnan(x), x, np.clip(x, -big, big))
    return half_encode(x, dty, "" if rnd in _INTEGRAL else rnd)


def _converter(info: OpInfo, dty: str, aty: str) -> Callable[[np.ndarray], np.ndarray]:
    for t in (dty, aty):
        if t not in NP or t in ("pred", "f16x2", "bf16x2"):
            raise EmulationError(f"cvt to or from .{t} is not supported")
    sat = "sat" in info.other
    if is_float(aty) and is_float(dty):
        return lambda a: _float_to_float(a, aty, dty, info)
    if is_float(aty):
        def f2i(a: np.ndarray) -> np.ndarray:
            x = half_decode(lanes(a), aty) if aty in HALF_TYPES else np.asarray(a)
            return _float_to_int(flush_subnormal(x) if "ftz" in info.other else x, dty, info.rounding)

        return f2i
    if is_float(dty):
        def i2f(a: np.ndarray) -> np.ndarray:
            y = _int_to_float(a, aty, dty, info.rounding)
            return saturate(y) if sat and dty in ("f32", "f64") else y

        return i2f
    return lambda a: _int_to_int(a, aty, dty, sat)


def _cvt(ops: Operands, info: OpInfo) -> Op:
    if len(info.types) != 2:
        raise EmulationError("cvt needs a destination and a source type")
    dty, aty = info.types
    if dty in ("f16x2", "bf16x2") and aty == "f32" and len(ops) == 3:
        half = _converter(info, dty[:-2], aty)
        return elementwise(ops, dty, [aty, aty], lambda a, b: pack2(half(lanes(b)), half(lanes(a))))
    return elementwise(ops, dty, [aty], _converter(info, dty, aty))


# ------------------------------------------------------------------------------------------ cvta
def _cvta(ops: Operands, info: OpInfo) -> Op:
    space = info.space
    ty = info.dtype or "u64"
    convert = from_generic if "to" in info.other else to_generic
    return elementwise(ops, ty, ["u64"], lambda a: convert(space, np.asarray(a, dtype=np.uint64)))


def _isspacep(ops: Operands, info: OpInfo) -> Op:
    return elementwise(ops, "pred", ["u64"], lambda a: in_window(info.space, np.asarray(a, dtype=np.uint64)))


BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    "mov": _mov, "cvt": _cvt, "cvta": _cvta, "isspacep": _isspacep,
}
