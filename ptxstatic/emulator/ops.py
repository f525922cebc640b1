"""Instruction semantics of the emulator: integer and floating-point arithmetic, logic, bit fields, comparisons.

Every builder takes the instruction's :class:`~ptxstatic.emulator.code.Operands` and
:class:`~ptxstatic.ptx.isa.OpInfo` and returns ``op(frame, mask)``. Values are numpy arrays over the 32 lanes
(or numpy scalars for immediates) in the dtype of the instruction's type; integer arithmetic wraps exactly
like the hardware because it is done in fixed-width numpy integers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands
from ptxstatic.emulator.types import (
    HALF_TYPES,
    SINT,
    UINT,
    WARP,
    EmulationError,
    as_uint,
    flush_subnormal,
    half_decode,
    half_encode,
    is_float,
    is_signed,
    np_type,
    pack2,
    round_to_f32,
    saturate,
    unpack2,
)
from ptxstatic.ptx.isa import OpInfo

Fn = Callable[..., np.ndarray]


def elementwise(ops: Operands, dst: str, srcs: list[str], fn: Fn, first: int = 1) -> Op:
    """``d = fn(a, b, ...)`` with the sources read as ``srcs`` types from operand ``first`` on."""
    readers = [ops.read(first + i, t) for i, t in enumerate(srcs)]
    write = ops.write(0, dst)
    if len(readers) == 1:
        (a,) = readers
        return lambda f, m: write(f, fn(a(f)), m)
    if len(readers) == 2:
        a, b = readers
        return lambda f, m: write(f, fn(a(f), b(f)), m)
    if len(readers) == 3:
        a, b, c = readers
        return lambda f, m: write(f, fn(a(f), b(f), c(f)), m)
    return lambda f, m: write(f, fn(*[r(f) for r in readers]), m)


def lanes(x: np.ndarray | np.generic) -> np.ndarray:
    """An operand as an array over the warp (scalars repeated)."""
    if type(x) is np.ndarray and x.ndim == 1:
        return x
    return np.full(WARP, x)


# --------------------------------------------------------------------------------- floating point
def float_fn(info: OpInfo, fn: Fn, fused: bool = False) -> Fn:
    """Wrap ``fn`` (numpy float arithmetic) with the type's rounding, ``.ftz``, ``.sat`` and ``.relu``.

    Half types are computed in float32/float64 and rounded once; directed rounding of f32 goes through
    float64; ``fused`` (fma) computes f32 in float64 so that the product is not rounded.
    """
    ty, rnd = info.dtype, info.rounding
    other = info.other
    if ty in HALF_TYPES:
        return _half_fn(ty, fn, rnd, "relu" in other, "sat" in other)
    if ty == "f64":
        if rnd in ("rz", "rm", "rp"):
            raise EmulationError("directed rounding of f64 arithmetic is not supported")
        return fn
    if ty != "f32":
        raise EmulationError(f"type .{ty} is not a floating-point type")
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
        y = fn(*[half_decode(lanes(x), base).astype(np.float64) for x in xs])
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


def _float_binary(fn: Fn, fused: bool = False) -> Callable[[Operands, OpInfo], Op]:
    def build(ops: Operands, info: OpInfo) -> Op:
        n = len(ops) - 1
        return elementwise(ops, info.dtype, [info.dtype] * n, float_fn(info, fn, fused))

    return build


def _fmin(info: OpInfo) -> Fn:
    return np.minimum if "NaN" in info.other else np.fmin


def _fmax(info: OpInfo) -> Fn:
    return np.maximum if "NaN" in info.other else np.fmax


def _special(ops: Operands, info: OpInfo) -> Op:
    name = info.opcode
    fns: dict[str, Fn] = {
        "rcp": lambda x: 1 / x, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
        "sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh,
    }
    return elementwise(ops, info.dtype, [info.dtype], float_fn(info, fns[name]))


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


def _mul_hi(a: np.ndarray, b: np.ndarray, ty: str) -> np.ndarray:
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


def _widen(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Sign- or zero-extend (by the source's signedness) to the double-width type."""
    return np.asarray(x).astype(dtype)


def _wide(ty: str) -> str:
    return f"{ty[0]}{2 * int(ty[1:])}"


def _mul(ops: Operands, info: OpInfo) -> Op:
    if is_float(info.dtype):
        return _float_binary(np.multiply)(ops, info)
    ty = info.dtype
    if "wide" in info.other:
        wdt = np_type(_wide(ty))
        return elementwise(ops, _wide(ty), [ty, ty], lambda a, b: _widen(a, wdt) * _widen(b, wdt))
    if "hi" in info.other:
        return elementwise(ops, ty, [ty, ty], lambda a, b: _mul_hi(a, b, ty))
    return elementwise(ops, ty, [ty, ty], np.multiply)


def _mad(ops: Operands, info: OpInfo) -> Op:
    if is_float(info.dtype):
        return _float_binary(lambda a, b, c: a * b + c, fused=True)(ops, info)
    ty = info.dtype
    if "wide" in info.other:
        w = _wide(ty)
        wdt = np_type(w)
        return elementwise(ops, w, [ty, ty, w], lambda a, b, c: _widen(a, wdt) * _widen(b, wdt) + c)
    if "hi" in info.other:
        if "sat" in info.other:
            return elementwise(ops, ty, [ty, ty, ty], lambda a, b, c: _saturate_s32(
                _mul_hi(a, b, ty).astype(np.int64) + np.asarray(c).astype(np.int64)))
        return elementwise(ops, ty, [ty, ty, ty], lambda a, b, c: _mul_hi(a, b, ty) + c)
    return elementwise(ops, ty, [ty, ty, ty], lambda a, b, c: a * b + c)


def _saturate_s32(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -(1 << 31), (1 << 31) - 1).astype(np.int32)


def _mul24(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    signed = is_signed(ty)

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        def low24(x: np.ndarray) -> np.ndarray:
            v = np.asarray(x).astype(np.int64) & 0xFFFFFF
            return np.where(v >= 1 << 23, v - (1 << 24), v) if signed else v

        p = low24(a) * low24(b)
        return (p >> 16 if "hi" in info.other else p).astype(np.int64).astype(np_type(ty))

    if info.opcode == "mad24":
        return elementwise(ops, ty, [ty, ty, ty], lambda a, b, c: product(a, b) + c)
    return elementwise(ops, ty, [ty, ty], product)


def _add_sub(sign: int) -> Callable[[Operands, OpInfo], Op]:
    def build(ops: Operands, info: OpInfo) -> Op:
        ty = info.dtype
        if is_float(ty):
            return _float_binary(np.add if sign > 0 else np.subtract)(ops, info)
        if "sat" in info.other:
            return elementwise(ops, ty, [ty, ty], lambda a, b: _saturate_s32(
                np.asarray(a).astype(np.int64) + sign * np.asarray(b).astype(np.int64)))
        return elementwise(ops, ty, [ty, ty], np.add if sign > 0 else np.subtract)

    return build


def _carry(ops: Operands, info: OpInfo) -> Op:
    """add.cc, addc, sub.cc, subc, mad.cc, madc: carry/borrow through the per-lane CC.CF flag."""
    name, ty = info.opcode, info.dtype
    dt = np_type(ty)
    uty = "u" + ty[1:]
    udt = UINT[dt.itemsize]
    carry_in = name in ("addc", "subc", "madc")
    carry_out = name.endswith(".cc") or "cc" in info.other
    sub = name.startswith("sub")
    mad = name.startswith("mad")
    srcs = [ops.read(i, uty) for i in range(1, len(ops))]
    write = ops.write(0, uty)
    hi = "hi" in info.other

    def run(f, m):
        vals = [np.broadcast_to(r(f), (WARP,)) for r in srcs]
        cf = f.regs.get("%cc", np.zeros(WARP, dtype=udt)).astype(udt) if carry_in else udt.type(0)
        if mad:
            a = _mul_hi(vals[0], vals[1], uty) if hi else vals[0] * vals[1]
            b = vals[2]
        else:
            a, b = vals
        if sub:
            t = a - b
            out = t - cf
            flag = (a < b) | (t < cf)
        else:
            t = a + b
            out = t + cf
            flag = (t < a) | (out < t)
        write(f, out, m)
        if carry_out:
            f.regs["%cc"] = np.where(m, flag.astype(udt), f.regs.get("%cc", np.zeros(WARP, dtype=udt)))

    return run


def _div_rem(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    if info.opcode == "div" and is_float(ty):
        return _float_binary(np.divide)(ops, info)
    dt = np_type(ty)
    udt = UINT[dt.itemsize]
    ones = udt.type(~np.uint64(0) >> np.uint64(64 - 8 * dt.itemsize))
    signed, rem = is_signed(ty), info.opcode == "rem"

    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = lanes(a), lanes(b)
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

    return elementwise(ops, ty, [ty, ty], fn)


def _abs_neg(ops: Operands, info: OpInfo) -> Op:
    fn = np.abs if info.opcode == "abs" else np.negative
    if is_float(info.dtype):
        return elementwise(ops, info.dtype, [info.dtype], float_fn(info, fn))
    return elementwise(ops, info.dtype, [info.dtype], fn)


def _min_max(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    if is_float(ty):
        fn = _fmin(info) if info.opcode == "min" else _fmax(info)
        return elementwise(ops, ty, [ty] * (len(ops) - 1), float_fn(info, fn))
    fn = np.minimum if info.opcode == "min" else np.maximum
    if "relu" in info.other:
        return elementwise(ops, ty, [ty, ty], lambda a, b: np.maximum(fn(a, b), np_type(ty).type(0)))
    return elementwise(ops, ty, [ty, ty], fn)


def _sad(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    return elementwise(ops, ty, [ty, ty, ty], lambda a, b, c: np.where(a > b, a - b, b - a) + c)


def _dp(ops: Operands, info: OpInfo) -> Op:
    """dp4a / dp2a: byte or half-word dot products accumulated into a 32-bit integer."""
    at, bt = info.types[0], info.types[1]
    hi = "hi" in info.other

    def parts(x: np.ndarray, ty: str, size: int) -> np.ndarray:
        raw = np.ascontiguousarray(lanes(x).astype(np.uint32)).view((SINT if is_signed(ty) else UINT)[size])
        return raw.reshape(WARP, 4 // size).astype(np.int64)

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        if info.opcode == "dp4a":
            prod = parts(a, at, 1) * parts(b, bt, 1)
        else:
            prod = parts(a, at, 2) * parts(b, bt, 1)[:, 2:] if hi else parts(a, at, 2) * parts(b, bt, 1)[:, :2]
        return (prod.sum(axis=1) + np.asarray(c).astype(np.int64)).astype(np.int32)

    return elementwise(ops, "s32", [at, bt, "s32"], fn)


# ------------------------------------------------------------------------------------- comparison
def compare(cmp: str, ty: str) -> Fn:
    """``cmp`` as a numpy function of two values of type ``ty`` (half types are compared as floats)."""
    if ty in HALF_TYPES:
        inner = compare(cmp, "f32")
        return lambda a, b: inner(half_decode(lanes(a), ty), half_decode(lanes(b), ty))
    if is_float(ty):
        nan = lambda a, b: np.isnan(a) | np.isnan(b)  # noqa: E731
        table: dict[str, Fn] = {
            "eq": np.equal, "ne": lambda a, b: (a != b) & ~nan(a, b), "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal, "equ": lambda a, b: (a == b) | nan(a, b),
            "neu": np.not_equal, "ltu": lambda a, b: ~(a >= b), "leu": lambda a, b: ~(a > b),
            "gtu": lambda a, b: ~(a <= b), "geu": lambda a, b: ~(a < b), "num": lambda a, b: ~nan(a, b), "nan": nan,
        }
    else:
        table = {
            "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
        }
    if cmp not in table:
        raise EmulationError(f"comparison .{cmp} is not defined for .{ty}")
    return table[cmp]


_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _setp(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    if ty in ("f16x2", "bf16x2"):
        raise EmulationError(f"setp on .{ty} is not supported")
    test = compare(info.cmp, ty)
    if "ftz" in info.other:
        raw = test

        def test(a, b):
            return raw(flush_subnormal(a), flush_subnormal(b))
    a, b = ops.read(1, ty), ops.read(2, ty)
    combine = next((_BOOL[o] for o in info.other if o in _BOOL), None)
    c = ops.pred(3) if combine is not None else None
    dst = ops.items[0]
    pair = hasattr(dst, "second")
    p = ops.writer(dst.first if pair else dst, "pred")  # type: ignore[union-attr]
    q = ops.writer(dst.second, "pred") if pair else None  # type: ignore[union-attr]

    def run(f, m):
        t = lanes(test(a(f), b(f)))
        if combine is not None:
            cv = c(f)
            p(f, combine(t, cv), m)
            if q is not None:
                q(f, combine(~t, cv), m)
        else:
            p(f, t, m)
            if q is not None:
                q(f, ~t, m)

    return run


def _set(ops: Operands, info: OpInfo) -> Op:
    dty, sty = info.types[0], info.types[-1]
    test = compare(info.cmp, sty)
    combine = next((_BOOL[o] for o in info.other if o in _BOOL), None)
    true = np_type(dty).type(1.0) if is_float(dty) else np_type(dty).type(-1 if is_signed(dty) else ~np.uint32(0))
    false = np_type(dty).type(0)
    if combine is None:
        return elementwise(ops, dty, [sty, sty], lambda a, b: np.where(test(a, b), true, false))
    return elementwise(ops, dty, [sty, sty, "pred"], lambda a, b, c: np.where(combine(test(a, b), c), true, false))


def _selp(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    return elementwise(ops, ty, [ty, ty, "pred"], lambda a, b, c: np.where(c, a, b))


def _slct(ops: Operands, info: OpInfo) -> Op:
    ty, cty = info.types[0], info.types[-1]
    return elementwise(ops, ty, [ty, ty, cty], lambda a, b, c: np.where(c >= 0, a, b))


def _testp(ops: Operands, info: OpInfo) -> Op:
    tiny = np.finfo(np_type(info.dtype)).tiny
    tests: dict[str, Fn] = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x), "notanumber": np.isnan,
        "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny), "subnormal": lambda x: (x != 0) & (np.abs(x) < tiny),
    }
    test = next(tests[o] for o in info.other if o in tests)
    return elementwise(ops, "pred", [info.dtype], test)


def _copysign(ops: Operands, info: OpInfo) -> Op:
    return elementwise(ops, info.dtype, [info.dtype] * 2, lambda a, b: np.copysign(b, a))


BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    "add": _add_sub(1), "sub": _add_sub(-1), "mul": _mul, "mad": _mad,
    "fma": _float_binary(lambda a, b, c: a * b + c, fused=True),
    "mul24": _mul24, "mad24": _mul24, "div": _div_rem, "rem": _div_rem, "abs": _abs_neg, "neg": _abs_neg,
    "min": _min_max, "max": _min_max, "sad": _sad, "dp4a": _dp, "dp2a": _dp,
    **{op: _carry for op in ("add.cc", "addc", "sub.cc", "subc", "mad.cc", "madc")},
    **{op: _special for op in ("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh")},
    "setp": _setp, "set": _set, "selp": _selp, "slct": _slct, "testp": _testp, "copysign": _copysign,
}

