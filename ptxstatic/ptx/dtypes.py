"""PTX types as numpy dtypes, and how their values are represented: typed arrays, raw bits, literals, halves.

A value of a PTX type is computed in the numpy dtype :data:`NP` gives for it, so integer arithmetic wraps
exactly like the hardware. ``f16`` values are numpy ``float16``; ``bf16`` has no numpy type and stays raw
``uint16`` bits, as do the packed ``f16x2`` / ``bf16x2`` words (``uint32``). Registers hold bits, and a value
is *viewed* as the instruction's type, so ``mov.b32 %r1, %f1`` and friends move bits, as on the hardware:
:func:`resize` moves bits between widths, :func:`to_raw` / :func:`from_raw` between typed values and
``uint64`` bit patterns. The operations on these values are in :mod:`ptxstatic.ptx.semantics`.
"""

from __future__ import annotations

import math

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx.isa import TYPE_BITS


class Unsupported(PtxstaticError):
    """A PTX type, operation or modifier the value semantics does not define."""


UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}

#: the numpy dtype a value of each PTX type is computed in
NP: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    **{f"{k}{8 * n}": d for n, d in UINT.items() for k in "bu"},
    **{f"s{8 * n}": d for n, d in SINT.items()},
    "f16": np.dtype(np.float16), "bf16": UINT[2], "f16x2": UINT[4], "bf16x2": UINT[4],
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}
HALF_TYPES = frozenset({"f16", "bf16", "f16x2", "bf16x2"})
U64 = np.uint64


def np_type(ty: str) -> np.dtype:
    """The numpy dtype of PTX type ``ty``; :class:`Unsupported` for types without one."""
    try:
        return NP[ty]
    except KeyError:
        raise Unsupported(f"type .{ty} is not supported" if ty else "instruction has no type") from None


def size_of(ty: str) -> int:
    """Bytes of one value of PTX type ``ty`` (1 for predicates)."""
    return max(1, TYPE_BITS.get(ty, 8) // 8)


def is_float(ty: str) -> bool:
    return ty.startswith(("f", "bf"))


def is_signed(ty: str) -> bool:
    return ty.startswith("s")


def is_integer(ty: str) -> bool:
    """An integer or bit type (not a predicate, not a float)."""
    return bool(ty) and ty != "pred" and not is_float(ty)


def int_range(ty: str) -> tuple[int, int]:
    """Smallest and largest value of integer type ``ty``."""
    bits = 8 * size_of(ty)
    return (-(1 << bits - 1), (1 << bits - 1) - 1) if is_signed(ty) else (0, (1 << bits) - 1)


def as_uint(x: np.ndarray) -> np.ndarray:
    """The same bits, viewed as unsigned."""
    return x if x.dtype.kind in "ub" else x.view(UINT[x.dtype.itemsize])


def resize(x: np.ndarray, dtype: np.dtype, signed: bool = False) -> np.ndarray:
    """Bits of ``x`` moved into ``dtype``: a view at the same width, else truncated or (sign-)extended."""
    if x.dtype == dtype:
        return x
    if x.dtype.kind == "b" or dtype.kind == "b":
        return x.astype(dtype)
    n, size = x.dtype.itemsize, dtype.itemsize
    if n == size:
        return x.view(dtype)
    src = x.view(SINT[n]) if signed else as_uint(x)
    return src.astype(SINT[size] if signed else UINT[size]).view(dtype)


def const(value: int | float, dtype: np.dtype) -> np.generic:
    """A numpy scalar of ``dtype``: integers wrap to its width, floats convert (an infinite or NaN value has no
    integer form: :class:`Unsupported`)."""
    if dtype.kind == "b":
        return np.bool_(bool(value))
    if dtype.kind in "iu":
        if isinstance(value, float) and not math.isfinite(value):
            raise Unsupported(f"{value} is not a value of an integer type")
        u = UINT[dtype.itemsize]
        return np.array(int(value) & ((1 << 8 * dtype.itemsize) - 1), dtype=u).view(dtype)[()]
    if dtype == NP["f16"]:
        return np.float16(value)
    return dtype.type(value)


def literal(text: str, value: int | float, dtype: np.dtype) -> np.generic:
    """A literal operand as a value of ``dtype``: a ``0f``/``0d`` literal of the same width is taken as raw
    bits, anything else is its ``value`` converted (:func:`const`)."""
    t = text.lstrip("-")
    width = {"0f": 4, "0F": 4, "0d": 8, "0D": 8}.get(t[:2])
    if width is None or width != dtype.itemsize or text.startswith("-"):
        return const(value, dtype)
    return np.array(int(t[2:], 16), dtype=UINT[width]).view(dtype)[()]


def to_raw(x: np.ndarray | np.generic | bool, ty: str) -> np.ndarray:
    """The bits of a value of PTX type ``ty`` (converted to the type's dtype first), zero-extended to uint64."""
    v = np.asarray(x)
    dtype = np_type(ty)
    if v.dtype != dtype:
        v = v.astype(dtype)
    if dtype.kind == "b":
        return v.astype(U64)
    return as_uint(v).astype(U64)


def from_raw(bits: np.ndarray, ty: str) -> np.ndarray:
    """A value of PTX type ``ty`` from uint64 bits (the low bits of the type's width)."""
    dtype = np_type(ty)
    b = np.asarray(bits, dtype=U64)
    if dtype.kind == "b":
        return b != 0
    return b.astype(UINT[dtype.itemsize]).view(dtype)


# ------------------------------------------------------------------------------------ half precision
def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    return (np.asarray(raw).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x: np.ndarray, rounding: str = "rn") -> np.ndarray:
    """Round float32 to bfloat16 bits (nearest-even by default; ``rz`` truncates); NaN stays a quiet NaN."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32)
    if rounding == "rz":
        out = b >> np.uint32(16)
    else:
        out = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    out = np.where(np.isnan(np.asarray(x, dtype=np.float32)), (b >> np.uint32(16)) | np.uint32(0x40), out)
    return out.astype(np.uint16)


def half_decode(raw: np.ndarray, ty: str) -> np.ndarray:
    """``f16``/``bf16`` raw 16-bit values as float32."""
    if ty == "bf16":
        return bf16_to_f32(raw)
    raw = np.asarray(raw)
    return raw.view(np.float16).astype(np.float32) if raw.dtype != np.float16 else raw.astype(np.float32)


def half_encode(x: np.ndarray, ty: str, rounding: str = "rn") -> np.ndarray:
    """Float values rounded to ``f16`` (as float16) or ``bf16`` (as uint16 bits, nearest-even or ``rz``)."""
    if ty == "bf16":
        if rounding in ("rm", "rp"):
            raise Unsupported(f"rounding .{rounding} to bf16 is not supported")
        mode = "rz" if rounding == "rz" else "rn"
        return f32_to_bf16(round_to_f32(np.asarray(x, dtype=np.float64), mode), mode)
    if rounding in ("", "rn", "rni"):
        return np.asarray(x, dtype=np.float64).astype(np.float16)
    return directed(np.asarray(x, dtype=np.float64), np.float16, rounding)


def unpack2(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Low and high 16-bit halves of 32-bit words."""
    u = as_uint(np.asarray(raw)).astype(np.uint32)
    return (u & np.uint32(0xFFFF)).astype(np.uint16), (u >> np.uint32(16)).astype(np.uint16)


def pack2(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lo32 = as_uint(np.asarray(lo)).astype(np.uint32)
    return lo32 | (as_uint(np.asarray(hi)).astype(np.uint32) << np.uint32(16))


# ----------------------------------------------------------------------------------------- rounding
def directed(x: np.ndarray, dtype: type, rounding: str) -> np.ndarray:
    """``x`` (float64, exact) rounded to a narrower float type toward zero, minus or plus infinity."""
    y = x.astype(dtype)
    back = y.astype(np.float64)
    finite = np.isfinite(x)
    if rounding in ("rz", "rzi"):
        step = finite & (np.abs(back) > np.abs(x))
        return np.where(step, np.nextafter(y, dtype(0)), y)
    if rounding in ("rm", "rmi"):
        return np.where(finite & (back > x), np.nextafter(y, dtype(-np.inf)), y)
    if rounding in ("rp", "rpi"):
        return np.where(finite & (back < x), np.nextafter(y, dtype(np.inf)), y)
    return y


def round_to_f32(x: np.ndarray, rounding: str) -> np.ndarray:
    """Float64 values rounded to float32 with a PTX rounding modifier (``rn`` when empty)."""
    if rounding in ("", "rn", "rni"):
        return np.asarray(x).astype(np.float32)
    return directed(np.asarray(x, dtype=np.float64), np.float32, rounding)


def round_integral(x: np.ndarray, rounding: str) -> np.ndarray:
    """Round floats to integral values: ``rni`` nearest-even, ``rzi`` toward zero, ``rmi`` down, ``rpi`` up."""
    return {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}.get(rounding, np.rint)(x)


def flush_subnormal(x: np.ndarray) -> np.ndarray:
    """``.ftz``: float32 subnormals become zero of the same sign."""
    tiny = np.abs(x) < np.finfo(np.float32).tiny
    return np.where(tiny, np.copysign(np.float32(0), x), x) if tiny.any() else x


def saturate(x: np.ndarray) -> np.ndarray:
    """``.sat`` on floats: clamp to [0, 1], NaN to 0."""
    return np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1))
