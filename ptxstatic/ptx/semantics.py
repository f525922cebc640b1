"""PTX value semantics: what every arithmetic, logic, comparison and conversion instruction computes.

The one implementation, used by the functional emulator and by the static block-count interpreter. Every
function works on numpy values of the dtypes of :mod:`ptxstatic.ptx.dtypes` (arrays of any shape, or
scalars) and knows nothing about warps, masks, registers or memory. :func:`value_op` gives, for an
elementwise instruction, the types its sources are read as, the type its result is written as and the
function from one to the other; :func:`setp`, :func:`carry`, :func:`lop3`, :func:`pack` and
:func:`unpack` cover the instructions with more than one result or an immediate that selects the function.
Integer arithmetic wraps as on the hardware because it is done in fixed-width numpy integers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ptxstatic.ptx.dtypes import (
    HALF_TYPES,
    NP,
    SINT,
    UINT,
    Unsupported,
    as_uint,
    directed,
    flush_subnormal,
    half_decode,
    half_encode,
    int_range,
    is_float,
    is_signed,
    np_type,
    pack2,
    resize,
    round_integral,
    round_to_f32,
    saturate,
    size_of,
    unpack2,
)
from ptxstatic.ptx.isa import OpInfo

Fn = Callable[..., np.ndarray]


@dataclass(frozen=True, slots=True)
class ValueOp:
    """An elementwise instruction: sources read as ``srcs`` types, ``fn`` of them written as ``dst``."""

    dst: str
    srcs: tuple[str, ...]
    fn: Fn


# --------------------------------------------------------------------------------- floating point
def float_fn(info: OpInfo, fn: Fn, fused: bool = False) -> Fn:
    """Wrap ``fn`` (numpy float arithmetic) with the type's rounding, ``.ftz``, ``.sat`` and ``.relu``.

    Half types are computed in float64 and rounded once; directed rounding of f32 goes through float64;
    ``fused`` (fma) computes f32 in float64 so that the product is not rounded.
    """
    ty, rnd = info.dtype, info.rounding
    other = info.other
    if ty in HALF_TYPES:
        return _half_fn(ty, fn, rnd, "relu" in other, "sat" in other)
    if ty == "f64":
        if rnd in ("rz", "rm", "rp"):
            raise Unsupported("directed rounding of f64 arithmetic is not supported")
        return fn
    if ty != "f32":
        raise Unsupported(f"type .{ty} is not a floating-point type")
    core = fn
    if fused or rnd in ("rz", "rm", "rp"):
        def core(*xs):
            return round_to_f32(fn(*[np.float64(x) if np.ndim(x) == 0 else x.astype(np.float64) for x in xs]), rnd)
    steps = core
    if "ftz" in other:
        def steps(*xs):
            return flush_subnormal(core(*[flush_subnormal(x) for x in xs]))
    if "sat" in other:
        inner = steps

        def steps(*xs):
            return saturate(inner(*xs))
    if "relu" in other:
        inner2 = steps

        def steps(*xs):
            y = inner2(*xs)
            return np.where(y < 0, np.float32(0), y)
    return steps


def _half_fn(ty: str, fn: Fn, rnd: str, relu: bool, sat: bool) -> Fn:
    base = ty[:-2] if ty.endswith("x2") else ty

    def one(*xs: np.ndarray) -> np.ndarray:
        y = fn(*[half_decode(x, base).astype(np.float64) for x in xs])
        if relu:
            y = np.where(y < 0, 0.0, y)
        if sat:
            y = saturate(y)
        return half_encode(y, base, rnd)

    if base == ty:
        return one

    def packed(*xs: np.ndarray) -> np.ndarray:
        halves = [unpack2(x) for x in xs]
        return pack2(one(*[h[0] for h in halves]), one(*[h[1] for h in halves]))

    return packed


def _float_op(fn: Fn, fused: bool = False) -> Callable[[OpInfo, int], ValueOp]:
    def build(info: OpInfo, n: int) -> ValueOp:
        return ValueOp(info.dtype, (info.dtype,) * n, float_fn(info, fn, fused))

    return build


_SPECIAL: dict[str, Fn] = {
    "rcp": lambda x: 1 / x, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh,
}


def _special(info: OpInfo, n: int) -> ValueOp:
    return ValueOp(info.dtype, (info.dtype,), float_fn(info, _SPECIAL[info.opcode]))


# ----------------------------------------------------------------------------------------- integer
def mulhi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High 64 bits of the 128-bit product of uint64 values."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
    al, ah, bl, bh = a & m32, a >> s32, b & m32, b >> s32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    return hh + (lh >> s32) + (hl >> s32) + (mid >> s32)


def mul_hi(a: np.ndarray, b: np.ndarray, ty: str) -> np.ndarray:
    """The high half of the double-width product of two ``ty`` integers."""
    dt = np_type(ty)
    bits = 8 * dt.itemsize
    if bits < 64:
        wide = SINT[8] if is_signed(ty) else UINT[8]
        return (np.asarray(a).astype(wide) * np.asarray(b).astype(wide) >> bits).astype(dt)
    hi = mulhi_u64(as_uint(np.asarray(a)), as_uint(np.asarray(b)))
    if is_signed(ty):
        hi = hi - np.where(np.asarray(a) < 0, as_uint(np.asarray(b)), np.uint64(0))
        hi = hi - np.where(np.asarray(b) < 0, as_uint(np.asarray(a)), np.uint64(0))
    return hi.view(dt) if np.ndim(hi) else hi.astype(dt)


def wide_type(ty: str) -> str:
    """The double-width type of ``.wide`` results (``s32`` -> ``s64``)."""
    return f"{ty[0]}{2 * int(ty[1:])}"


def _widen(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Sign- or zero-extend (by the source's signedness) to the double-width type."""
    return np.asarray(x).astype(dtype)


def _saturate_s32(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -(1 << 31), (1 << 31) - 1).astype(np.int32)


def _mul(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    if is_float(ty):
        return _float_op(np.multiply)(info, n)
    if "wide" in info.other:
        wdt = np_type(wide_type(ty))
        return ValueOp(wide_type(ty), (ty, ty), lambda a, b: _widen(a, wdt) * _widen(b, wdt))
    if "hi" in info.other:
        return ValueOp(ty, (ty, ty), lambda a, b: mul_hi(a, b, ty))
    return ValueOp(ty, (ty, ty), np.multiply)


def _mad(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    if is_float(ty):
        return _float_op(lambda a, b, c: a * b + c, fused=True)(info, n)
    if "wide" in info.other:
        w = wide_type(ty)
        wdt = np_type(w)
        return ValueOp(w, (ty, ty, w), lambda a, b, c: _widen(a, wdt) * _widen(b, wdt) + c)
    if "hi" in info.other:
        if "sat" in info.other:
            return ValueOp(ty, (ty, ty, ty), lambda a, b, c: _saturate_s32(
                mul_hi(a, b, ty).astype(np.int64) + np.asarray(c).astype(np.int64)))
        return ValueOp(ty, (ty, ty, ty), lambda a, b, c: mul_hi(a, b, ty) + c)
    return ValueOp(ty, (ty, ty, ty), lambda a, b, c: a * b + c)


def _mul24(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    signed, hi = is_signed(ty), "hi" in info.other

    def low24(x: np.ndarray) -> np.ndarray:
        v = np.asarray(x).astype(np.int64) & 0xFFFFFF
        return np.where(v >= 1 << 23, v - (1 << 24), v) if signed else v

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        p = low24(a) * low24(b)
        return (p >> 16 if hi else p).astype(np.int64).astype(np_type(ty))

    if info.opcode == "mad24":
        return ValueOp(ty, (ty, ty, ty), lambda a, b, c: product(a, b) + c)
    return ValueOp(ty, (ty, ty), product)


def _add_sub(sign: int) -> Callable[[OpInfo, int], ValueOp]:
    def build(info: OpInfo, n: int) -> ValueOp:
        ty = info.dtype
        if is_float(ty):
            return _float_op(np.add if sign > 0 else np.subtract)(info, n)
        if "sat" in info.other:
            return ValueOp(ty, (ty, ty), lambda a, b: _saturate_s32(
                np.asarray(a).astype(np.int64) + sign * np.asarray(b).astype(np.int64)))
        return ValueOp(ty, (ty, ty), np.add if sign > 0 else np.subtract)

    return build


def carry(info: OpInfo) -> tuple[str, bool, bool, Fn]:
    """``add.cc``, ``addc``, ``sub.cc``, ``subc``, ``mad.cc``, ``madc``: (the unsigned type every operand is
    read as, whether the carry flag is read, whether it is written, ``fn(a, b[, c], cf) -> (result, carry)``)."""
    name, ty = info.opcode, info.dtype
    uty = "u" + ty[1:]
    carry_in = name in ("addc", "subc", "madc")
    carry_out = name.endswith(".cc") or "cc" in info.other
    sub, mad, hi = name.startswith("sub"), name.startswith("mad"), "hi" in info.other

    def fn(*args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        *vals, cf = args
        if mad:
            a = mul_hi(vals[0], vals[1], uty) if hi else vals[0] * vals[1]
            b = vals[2]
        else:
            a, b = vals
        if sub:
            t = a - b
            return t - cf, (a < b) | (t < cf)
        t = a + b
        out = t + cf
        return out, (t < a) | (out < t)

    return uty, carry_in, carry_out, fn


def _div_rem(info: OpInfo, n: int) -> ValueOp:
    """Integer division truncates toward zero; by zero, ``div`` gives all ones and ``rem`` the dividend."""
    ty = info.dtype
    if info.opcode == "div" and is_float(ty):
        return _float_op(np.divide)(info, n)
    dt = np_type(ty)
    udt = UINT[dt.itemsize]
    ones = udt.type(~np.uint64(0) >> np.uint64(64 - 8 * dt.itemsize))
    signed, rem = is_signed(ty), info.opcode == "rem"

    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.asarray(a), np.asarray(b)
        ua, ub = as_uint(a), as_uint(b)
        if signed:
            ua = np.where(a < 0, (-a).view(udt), ua)
            ub = np.where(b < 0, (-b).view(udt), ub)
        zero = ub == 0
        safe = np.where(zero, udt.type(1), ub)
        q = ua % safe if rem else ua // safe
        if signed:
            neg = (a < 0) if rem else (a < 0) ^ (b < 0)
            q = np.where(neg, (-(q.view(dt))).view(udt), q)
        q = np.where(zero, as_uint(a) if rem else ones, q)
        return q.view(dt)

    return ValueOp(ty, (ty, ty), fn)


def _abs_neg(info: OpInfo, n: int) -> ValueOp:
    fn = np.abs if info.opcode == "abs" else np.negative
    ty = info.dtype
    return ValueOp(ty, (ty,), float_fn(info, fn) if is_float(ty) else fn)


def _min_max(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    if is_float(ty):
        nan = "NaN" in info.other
        fn = (np.minimum if nan else np.fmin) if info.opcode == "min" else (np.maximum if nan else np.fmax)
        return ValueOp(ty, (ty,) * n, float_fn(info, fn))
    fn = np.minimum if info.opcode == "min" else np.maximum
    if "relu" in info.other:
        zero = np_type(ty).type(0)
        return ValueOp(ty, (ty, ty), lambda a, b: np.maximum(fn(a, b), zero))
    return ValueOp(ty, (ty, ty), fn)


def _sad(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    return ValueOp(ty, (ty, ty, ty), lambda a, b, c: np.where(a > b, a - b, b - a) + c)


def _parts(x: np.ndarray, ty: str, size: int) -> np.ndarray:
    """32-bit words split into ``size``-byte integers (signed by ``ty``), one row per word."""
    words = np.ascontiguousarray(np.asarray(x).astype(np.uint32).reshape(-1))
    raw = words.view((SINT if is_signed(ty) else UINT)[size])
    return raw.reshape(-1, 4 // size).astype(np.int64)


def _dp(info: OpInfo, n: int) -> ValueOp:
    """``dp4a`` / ``dp2a``: byte or half-word dot products accumulated into a 32-bit integer."""
    at, bt = info.types[0], info.types[1]
    four, hi = info.opcode == "dp4a", "hi" in info.other

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
        if four:
            prod = _parts(a, at, 1) * _parts(b, bt, 1)
        else:
            bytes_b = _parts(b, bt, 1)
            prod = _parts(a, at, 2) * (bytes_b[:, 2:] if hi else bytes_b[:, :2])
        return (prod.sum(axis=1).reshape(a.shape) + c.astype(np.int64)).astype(np.int32)

    return ValueOp("s32", (at, bt, "s32"), fn)


# ------------------------------------------------------------------------------------- comparison
_NAN: Fn = lambda a, b: np.isnan(a) | np.isnan(b)  # noqa: E731
_FLOAT_TESTS: dict[str, Fn] = {
    "eq": np.equal, "ne": lambda a, b: (a != b) & ~_NAN(a, b), "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "equ": lambda a, b: (a == b) | _NAN(a, b),
    "neu": np.not_equal, "ltu": lambda a, b: ~(a >= b), "leu": lambda a, b: ~(a > b),
    "gtu": lambda a, b: ~(a <= b), "geu": lambda a, b: ~(a < b), "num": lambda a, b: ~_NAN(a, b), "nan": _NAN,
}
_INT_TESTS: dict[str, Fn] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}
_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def compare(cmp: str, ty: str) -> Fn:
    """``cmp`` as a numpy function of two values of type ``ty``: ordered float comparisons are false and
    unordered ones (``equ``, ``ltu``, ..., ``nan``) true when either side is NaN; half types compare as floats."""
    if ty in HALF_TYPES:
        inner = compare(cmp, "f32")
        return lambda a, b: inner(half_decode(a, ty), half_decode(b, ty))
    table = _FLOAT_TESTS if is_float(ty) else _INT_TESTS
    if cmp not in table:
        raise Unsupported(f"comparison .{cmp} is not defined for .{ty}")
    return table[cmp]


def setp(info: OpInfo) -> tuple[str, bool, Fn]:
    """``setp``: (the type both compared operands are read as, whether a predicate operand ``c`` is combined
    in by ``.and``/``.or``/``.xor``, ``fn(a, b[, c]) -> (p, q)``) with ``q`` the complement of the comparison,
    combined with ``c`` the same way."""
    ty = info.dtype
    if ty in ("f16x2", "bf16x2"):
        raise Unsupported(f"setp on .{ty} is not supported")
    test = compare(info.cmp, ty)
    if "ftz" in info.other:
        raw = test

        def test(a, b):
            return raw(flush_subnormal(a), flush_subnormal(b))
    combine = next((_BOOL[o] for o in info.other if o in _BOOL), None)

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        t = np.asarray(test(a, b))
        if combine is None:
            return t, ~t
        return combine(t, c), combine(~t, c)

    return ty, combine is not None, fn


def _set(info: OpInfo, n: int) -> ValueOp:
    dty, sty = info.types[0], info.types[-1]
    test = compare(info.cmp, sty)
    combine = next((_BOOL[o] for o in info.other if o in _BOOL), None)
    dt = np_type(dty)
    true = dt.type(1.0) if is_float(dty) else dt.type(-1 if is_signed(dty) else ~np.uint32(0))
    false = dt.type(0)
    if combine is None:
        return ValueOp(dty, (sty, sty), lambda a, b: np.where(test(a, b), true, false))
    return ValueOp(dty, (sty, sty, "pred"), lambda a, b, c: np.where(combine(test(a, b), c), true, false))


def _selp(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    return ValueOp(ty, (ty, ty, "pred"), lambda a, b, c: np.where(c, a, b))


def _slct(info: OpInfo, n: int) -> ValueOp:
    """``slct d, a, b, c``: ``a`` where ``c >= 0``, else ``b``."""
    ty, cty = info.types[0], info.types[-1]
    return ValueOp(ty, (ty, ty, cty), lambda a, b, c: np.where(c >= 0, a, b))


def _testp(info: OpInfo, n: int) -> ValueOp:
    tiny = np.finfo(np_type(info.dtype)).tiny
    tests: dict[str, Fn] = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x), "notanumber": np.isnan,
        "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny), "subnormal": lambda x: (x != 0) & (np.abs(x) < tiny),
    }
    return ValueOp("pred", (info.dtype,), next(tests[o] for o in info.other if o in tests))


def _copysign(info: OpInfo, n: int) -> ValueOp:
    return ValueOp(info.dtype, (info.dtype,) * 2, lambda a, b: np.copysign(b, a))


# ------------------------------------------------------------------------------------ logic and bits
def _bitwise(info: OpInfo, n: int) -> ValueOp:
    name, ty = info.opcode, info.dtype
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.get(name)
    if fn is not None:
        return ValueOp(ty, (ty, ty), fn)
    if name == "not":
        return ValueOp(ty, (ty,), np.invert)
    dt = np_type(ty)
    return ValueOp(ty, (ty,), lambda a: (a == 0).astype(dt))  # cnot


def _shift(info: OpInfo, n: int) -> ValueOp:
    """``shl``/``shr``: amounts of the width or more give 0, or the sign for ``shr`` of a signed type."""
    ty = info.dtype
    bits = 8 * np_type(ty).itemsize
    if info.opcode == "shl" or not is_signed(ty):
        ty = "b" + ty[1:] if ty[0] == "s" else ty
    dt = np_type(ty)
    left, arith = info.opcode == "shl", dt.kind == "i"

    def fn(a: np.ndarray, amount: np.ndarray) -> np.ndarray:
        k = np.minimum(amount, np.uint32(bits - 1)).astype(dt)
        if arith:
            return a >> k
        r = a << k if left else a >> k
        return np.where(amount >= bits, dt.type(0), r)

    return ValueOp(ty, (ty, "u32"), fn)


def _shf(info: OpInfo, n: int) -> ValueOp:
    left, clamp = "l" in info.other, "clamp" in info.other

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        n = np.minimum(c, np.uint32(32)) if clamp else c & np.uint32(31)
        joined = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        n64 = np.asarray(n).astype(np.uint64)
        out = (joined << n64) >> np.uint64(32) if left else joined >> n64
        return np.where(n64 >= 64, np.uint64(0), out).astype(np.uint32)

    return ValueOp("b32", ("b32", "b32", "u32"), fn)


def lop3(lut: int) -> Fn:
    """``lop3.b32 d, a, b, c, LUT``: the three-input function whose truth table is ``LUT``."""

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        out = np.zeros(np.broadcast(a, b, c).shape, dtype=np.uint32)
        for i in range(8):
            if lut >> i & 1:
                out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
        return out

    return fn


def bit_length(x: np.ndarray) -> np.ndarray:
    """Number of significant bits of unsigned values (0 for 0), as uint32."""
    x = as_uint(np.asarray(x)).copy()
    s = 1
    while s < 8 * x.dtype.itemsize:
        x |= x >> x.dtype.type(s)
        s *= 2
    return np.bitwise_count(x).astype(np.uint32)


def _count(info: OpInfo, n: int) -> ValueOp:
    """``popc``, ``clz`` and ``bfind`` (``0xFFFFFFFF`` when no bit is found)."""
    ty = info.dtype
    bits = 8 * np_type(ty).itemsize
    if info.opcode == "popc":
        return ValueOp("u32", (ty,), lambda a: np.bitwise_count(as_uint(np.asarray(a))).astype(np.uint32))
    if info.opcode == "clz":
        return ValueOp("u32", (ty,), lambda a: np.uint32(bits) - bit_length(a))
    shiftamt = "shiftamt" in info.other

    def bfind(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        v = np.where(a < 0, ~a, a) if is_signed(ty) else a
        n = bit_length(v)
        pos = n - np.uint32(1)
        if shiftamt:
            pos = np.uint32(bits - 1) - pos
        return np.where(n == 0, np.uint32(0xFFFFFFFF), pos).astype(np.uint32)

    return ValueOp("u32", (ty,), bfind)


_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def _brev(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    dt = np_type(ty)

    def fn(a: np.ndarray) -> np.ndarray:
        a = as_uint(np.asarray(a))
        raw = np.ascontiguousarray(a.reshape(-1)).view(np.uint8).reshape(-1, dt.itemsize)
        return np.ascontiguousarray(_REVERSED_BYTES[raw][:, ::-1]).view(dt).reshape(a.shape)

    return ValueOp(ty, (ty,), fn)


def _bfe(info: OpInfo, n: int) -> ValueOp:
    """Bit-field extract: ``len`` bits from ``pos`` (both taken mod 256), sign-extended for ``.s`` types."""
    ty = info.dtype
    dt = np_type(ty)
    bits, udt = 8 * dt.itemsize, UINT[dt.itemsize]

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        a = as_uint(np.asarray(a))
        pos = np.asarray(b & np.uint32(0xFF)).astype(np.int64)
        length = np.asarray(c & np.uint32(0xFF)).astype(np.int64)
        p = np.minimum(pos, bits)
        field = np.where(p >= bits, udt.type(0), a >> np.minimum(p, bits - 1).astype(udt))
        avail = np.clip(np.minimum(length, bits - p), 0, bits)
        low = (udt.type(1) << np.minimum(avail, bits - 1).astype(udt)) - udt.type(1)
        keep = np.where(avail >= bits, ~udt.type(0), low)
        out = field & keep
        if is_signed(ty):
            top = np.minimum(pos + length - 1, bits - 1).clip(0)
            sbit = ((a >> top.astype(udt)) & udt.type(1)).astype(bool) & (length > 0)
            out = np.where(sbit, out | ~keep, out)
        return np.asarray(np.where(length == 0, udt.type(0), out)).view(dt)

    return ValueOp(ty, (ty, "u32", "u32"), fn)


def _bfi(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    dt = np_type(ty)
    bits = 8 * dt.itemsize

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        a, b = as_uint(np.asarray(a)), as_uint(np.asarray(b))
        pos = np.asarray(c & np.uint32(0xFF)).astype(np.int64)
        length = np.minimum(np.asarray(d & np.uint32(0xFF)).astype(np.int64), bits)
        ones = (np.where(length >= bits, ~dt.type(0), (dt.type(1) << np.minimum(length, bits - 1).astype(dt)) - 1)
                .astype(dt))
        shift = np.minimum(pos, bits - 1).astype(dt)
        mask = np.where(pos >= bits, dt.type(0), ones << shift)
        return np.where(pos >= bits, b, (b & ~mask) | ((a << shift) & mask)).astype(dt)

    return ValueOp(ty, (ty, ty, "u32", "u32"), fn)


_PRMT_MODES = {
    "f4e": lambda s, i: (s + i) & 7, "b4e": lambda s, i: (s - i) & 7, "rc8": lambda s, i: s,
    "ecl": lambda s, i: np.maximum(s, i), "ecr": lambda s, i: np.minimum(s, i),
    "rc16": lambda s, i: 2 * (s & 1) + (i & 1),
}


def _prmt(info: OpInfo, n: int) -> ValueOp:
    mode = next((o for o in info.other if o in _PRMT_MODES), "")

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
        shape = a.shape
        pool = np.stack([a.reshape(-1), b.reshape(-1)], axis=1).astype(np.uint32).view(np.uint8).reshape(-1, 8)
        sel = c.reshape(-1).astype(np.int64)
        out = np.zeros((len(sel), 4), dtype=np.uint8)
        rows = np.arange(len(sel))
        for i in range(4):
            if mode:
                out[:, i] = pool[rows, _PRMT_MODES[mode](sel & 3, i)]
            else:
                nib = (sel >> (4 * i)) & 0xF
                byte = pool[rows, nib & 7]
                out[:, i] = np.where(nib & 8, np.where(byte & 0x80, 0xFF, 0), byte)
        return out.view(np.uint32).reshape(shape)

    return ValueOp("b32", ("b32", "b32", "b32"), fn)


def pack(parts: Sequence[np.ndarray | np.generic], dtype: np.dtype) -> np.ndarray:
    """Equal-width bit fields joined into one value of ``dtype``, the first part in the lowest bits
    (``mov.b64 %rd, {%r1, %r2}``)."""
    bits = 8 * dtype.itemsize // len(parts)
    value = np.asarray(dtype.type(0))
    for k, part in enumerate(parts):
        value = value | (np.asarray(part).astype(dtype) << dtype.type(k * bits))
    return value


def unpack(value: np.ndarray | np.generic, count: int) -> list[np.ndarray]:
    """A value split into ``count`` equal-width unsigned bit fields, lowest first (``mov.b64 {%r1, %r2}, %rd``)."""
    v = as_uint(np.asarray(value))
    bits = 8 * v.dtype.itemsize // count
    part = UINT[max(1, bits // 8)]
    return [(v >> v.dtype.type(k * bits)).astype(part) for k in range(count)]


# ------------------------------------------------------------------------------------------- cvt
_INTEGRAL = ("rni", "rzi", "rmi", "rpi")


def _float_to_int(x: np.ndarray, dty: str, rounding: str) -> np.ndarray:
    """Round to an integer and saturate to the destination range; NaN gives 0 (PTX semantics)."""
    dt = np_type(dty)
    r = round_integral(np.asarray(x).astype(np.float64), rounding or "rzi")
    lo, hi = int_range(dty)
    nan = np.isnan(r)
    safe = np.where(nan, 0.0, np.clip(r, lo, np.nextafter(float(hi + 1), 0.0)))
    out = safe.astype(np.int64 if is_signed(dty) or size_of(dty) < 8 else np.uint64).astype(dt)
    return np.where(r >= float(hi + 1), dt.type(hi), out)


def _int_to_int(a: np.ndarray, aty: str, dty: str, sat: bool) -> np.ndarray:
    dt = np_type(dty)
    if not sat:
        return resize(np.asarray(a), dt, is_signed(aty))
    lo, hi = int_range(dty)
    if is_signed(aty):
        v = np.asarray(a).astype(np.int64)
        return np.clip(v, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)).astype(dt)
    v = np.asarray(a).astype(np.uint64)
    return np.minimum(v, np.uint64(hi)).astype(dt)


def _int_to_float(a: np.ndarray, aty: str, dty: str, rounding: str) -> np.ndarray:
    """Integer to float with the rounding modifier; 64-bit integers round exactly value by value."""
    a = np.asarray(a)
    if dty == "bf16":  # through float64, exact for integers of up to 32 bits
        return half_encode(a.astype(np.float64), "bf16", rounding)
    target = np_type(dty).type
    if rounding in ("", "rn"):
        return a.astype(target)
    if size_of(aty) <= 4:
        return directed(a.astype(np.float64), target, rounding)
    exact = [_exact_directed(v, target, rounding) for v in a.reshape(-1).tolist()]
    return np.array(exact, dtype=target).reshape(a.shape)


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
        x = half_decode(x, aty)
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


def converter(info: OpInfo, dty: str, aty: str) -> Fn:
    """``cvt`` from ``aty`` to ``dty`` with the instruction's rounding, ``.sat``, ``.ftz``, ``.relu``."""
    for t in (dty, aty):
        if t not in NP or t in ("pred", "f16x2", "bf16x2"):
            raise Unsupported(f"cvt to or from .{t} is not supported")
    sat = "sat" in info.other
    if is_float(aty) and is_float(dty):
        return lambda a: _float_to_float(a, aty, dty, info)
    if is_float(aty):
        def f2i(a: np.ndarray) -> np.ndarray:
            x = half_decode(a, aty) if aty in HALF_TYPES else np.asarray(a)
            return _float_to_int(flush_subnormal(x) if "ftz" in info.other else x, dty, info.rounding)

        return f2i
    if is_float(dty):
        def i2f(a: np.ndarray) -> np.ndarray:
            y = _int_to_float(a, aty, dty, info.rounding)
            return saturate(y) if sat and dty in ("f32", "f64") else y

        return i2f
    return lambda a: _int_to_int(a, aty, dty, sat)


def _cvt(info: OpInfo, n: int) -> ValueOp:
    if len(info.types) != 2:
        raise Unsupported("cvt needs a destination and a source type")
    dty, aty = info.types
    if dty in ("f16x2", "bf16x2") and aty == "f32" and n == 2:
        half = converter(info, dty[:-2], aty)
        return ValueOp(dty, (aty, aty), lambda a, b: pack2(half(b), half(a)))
    return ValueOp(dty, (aty,), converter(info, dty, aty))


def _mov(info: OpInfo, n: int) -> ValueOp:
    ty = info.dtype
    return ValueOp(ty, (ty,), lambda a: a)


_TABLE: dict[str, Callable[[OpInfo, int], ValueOp]] = {
    "add": _add_sub(1), "sub": _add_sub(-1), "mul": _mul, "mad": _mad,
    "fma": _float_op(lambda a, b, c: a * b + c, fused=True),
    "mul24": _mul24, "mad24": _mul24, "div": _div_rem, "rem": _div_rem, "abs": _abs_neg, "neg": _abs_neg,
    "min": _min_max, "max": _min_max, "sad": _sad, "dp4a": _dp, "dp2a": _dp,
    **dict.fromkeys(_SPECIAL, _special),
    "set": _set, "selp": _selp, "slct": _slct, "testp": _testp, "copysign": _copysign,
    **dict.fromkeys(("and", "or", "xor", "not", "cnot"), _bitwise),
    "shl": _shift, "shr": _shift, "shf": _shf, "popc": _count, "clz": _count, "bfind": _count,
    "brev": _brev, "bfe": _bfe, "bfi": _bfi, "prmt": _prmt, "cvt": _cvt, "mov": _mov,
}
#: opcodes :func:`value_op` defines
ELEMENTWISE = frozenset(_TABLE)


#: opcodes defined on bit and integer types only (``and.f16`` is not PTX)
_INTEGER_ONLY = frozenset({"and", "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfind", "bfe",
                           "bfi", "prmt", "lop3", "shf", "rem"})


@functools.lru_cache(maxsize=4096)
def value_op(info: OpInfo, n_srcs: int) -> ValueOp:
    """The value function of an elementwise instruction with ``n_srcs`` source operands; :class:`Unsupported`
    for an opcode, type or modifier the semantics does not define. Cached: the functions are pure."""
    build = _TABLE.get(info.opcode)
    if build is None:
        raise Unsupported(f"opcode {info.opcode} is not supported")
    if info.opcode in _INTEGER_ONLY and any(is_float(t) for t in info.types):
        raise Unsupported(f"{info.opcode} with .{'.'.join(info.types)}: the operation takes bit and integer types")
    try:
        return build(info, n_srcs)
    except (KeyError, IndexError, ValueError, StopIteration) as exc:
        raise Unsupported(f"{info.opcode} with .{'.'.join(info.types) or '?'}: {exc}") from None
