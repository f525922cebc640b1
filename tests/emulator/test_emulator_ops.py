"""Instruction semantics of the emulator, one instruction at a time, against references written in plain
Python from the PTX ISA's definitions (Python integers, so wrapping and widths are explicit).

Every test runs a one-warp kernel whose registers ``%a``, ``%b``, ``%c`` are loaded from per-lane inputs;
the instruction under test writes ``%d`` (and ``%e``), which are stored per lane.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from ptxstatic.emulator import EmulationError, emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.dtypes import NP
from ptxstatic.ptx.parser import parse_text

RNG = np.random.default_rng(7)
_REG = {"pred": "pred", "f32": "f32", "f64": "f64", "f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}
_MEM = {"pred": "u8", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}  # type of the ld/st moving a value
_BUF = {"pred": "u8", "bf16": "u16", "f16x2": "u32", "bf16x2": "u32"}  # Buffer element type holding it


def _reg_type(ty: str) -> str:
    return _REG.get(ty) or f"b{max(16, int(ty[1:]))}"


def run(body: str, inputs: dict[str, tuple[str, np.ndarray]], outputs: dict[str, str], lanes: int = 32,
        decls: str = "") -> dict[str, np.ndarray]:
    """Run ``body`` with each input register loaded per lane; returns each output register per lane."""
    params, load, store, regs = [], [], [], []
    for kind, table in (("in", inputs), ("out", outputs)):
        for name, spec in table.items():
            ty = spec[0] if kind == "in" else spec
            params.append(f".param .u64 {kind}_{name}")
            regs.append(f".reg .{_reg_type(ty)} %{name};")
            mem_ty = _MEM.get(ty, ty)
            size = 1 if ty == "pred" else max(1, int("".join(c for c in mem_ty if c.isdigit())) // 8)
            addr = [f"ld.param.u64 %ptr, [{kind}_{name}];", f"mul.wide.u32 %off, %tid, {size};",
                    "add.s64 %ptr, %ptr, %off;"]
            if kind == "in":
                get = (["ld.global.u8 %byte, [%ptr];", f"setp.ne.u16 %{name}, %byte, 0;"] if ty == "pred"
                       else [f"ld.global.{mem_ty} %{name}, [%ptr];"])
                load += addr + get
            else:
                put = ([f"selp.u16 %byte, 1, 0, %{name};", "st.global.u8 [%ptr], %byte;"] if ty == "pred"
                       else [f"st.global.{mem_ty} [%ptr], %{name};"])
                store += addr + put
    text = "\n".join([
        ".version 8.0", ".target sm_80", ".address_size 64",
        f".visible .entry t({', '.join(params)})", "{",
        ".reg .b32 %tid;", ".reg .b64 %ptr, %off;", ".reg .b16 %byte;", ".reg .pred %p, %q;",
        ".reg .b32 %r<8>;", ".reg .b64 %rd<8>;", ".reg .f32 %f<8>;", *regs, decls,
        "mov.u32 %tid, %tid.x;", *load, body, *store, "ret;", "}",
    ])
    args: dict = {}
    data: dict = {}
    for name, (ty, values) in inputs.items():
        args[f"in_{name}"] = Buffer(_BUF.get(ty, ty), lanes)
        data[f"in_{name}"] = np.asarray(values)
    for name, ty in outputs.items():
        args[f"out_{name}"] = Buffer(_BUF.get(ty, ty), lanes)
    e = emulate(parse_text(text, "op.ptx"), "t", Launch((1, 1, 1), (lanes, 1, 1), 0, args), inputs=data)
    return {name: e.buffers[f"out_{name}"] for name in outputs}


def ints(bits: int, signed: bool, n: int = 32) -> np.ndarray:
    """Random values with the extremes of the type mixed in."""
    dtype = NP[f"{'s' if signed else 'u'}{bits}"]
    lo, hi = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
    v = [lo, hi, 0, 1, -1 if signed else 2, lo + 1, hi - 1, *RNG.integers(lo, hi, n - 7, dtype, True).tolist()]
    return np.array(v[:n], dtype=dtype)


def wrap(x: int, bits: int, signed: bool) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if signed and x >> (bits - 1) else x


# ----------------------------------------------------------------------------------------- integer
@pytest.mark.parametrize("ty", ["s32", "u32", "s64", "u64", "s16", "u16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul.lo", "mul.hi"])
def test_integer_arithmetic_wraps(op: str, ty: str) -> None:
    bits, signed = int(ty[1:]), ty[0] == "s"
    a, b = ints(bits, signed), ints(bits, signed)[::-1].copy()
    got = run(f"{op}.{ty} %d, %a, %b;", {"a": (ty, a), "b": (ty, b)}, {"d": ty})["d"]
    fn = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul.lo": lambda x, y: x * y,
          "mul.hi": lambda x, y: (x * y) >> bits}[op]
    assert got.tolist() == [wrap(fn(int(x), int(y)), bits, signed) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("ty", ["s32", "u32", "s16", "u16"])
def test_wide_multiply_and_mad(ty: str) -> None:
    bits, signed = int(ty[1:]), ty[0] == "s"
    wide = f"{ty[0]}{2 * bits}"
    a, b = ints(bits, signed), ints(bits, signed)[::-1].copy()
    c = ints(2 * bits, signed)
    got = run(f"mul.wide.{ty} %d, %a, %b; mad.wide.{ty} %e, %a, %b, %c;",
              {"a": (ty, a), "b": (ty, b), "c": (wide, c)}, {"d": wide, "e": wide})
    assert got["d"].tolist() == [int(x) * int(y) for x, y in zip(a, b, strict=True)]
    assert got["e"].tolist() == [wrap(int(x) * int(y) + int(z), 2 * bits, signed)
                                 for x, y, z in zip(a, b, c, strict=True)]


@pytest.mark.parametrize("ty", ["s32", "u32"])
def test_mul24(ty: str) -> None:
    signed = ty == "s32"
    a, b = ints(32, signed), ints(32, signed)[::-1].copy()

    def low24(x: int) -> int:
        x &= 0xFFFFFF
        return x - (1 << 24) if signed and x >> 23 else x

    got = run(f"mul24.lo.{ty} %d, %a, %b; mul24.hi.{ty} %e, %a, %b;", {"a": (ty, a), "b": (ty, b)},
              {"d": ty, "e": ty})
    products = [low24(int(x)) * low24(int(y)) for x, y in zip(a, b, strict=True)]
    assert got["d"].tolist() == [wrap(p, 32, signed) for p in products]
    assert got["e"].tolist() == [wrap(p >> 16, 32, signed) for p in products]


@pytest.mark.parametrize("ty", ["s32", "u32", "s64", "u64"])
def test_division_truncates_toward_zero(ty: str) -> None:
    bits, signed = int(ty[1:]), ty[0] == "s"
    a = ints(bits, signed)
    b = ints(bits, signed)[::-1].copy()
    b[b == 0] = 3
    got = run(f"div.{ty} %d, %a, %b; rem.{ty} %e, %a, %b;", {"a": (ty, a), "b": (ty, b)}, {"d": ty, "e": ty})
    quot = [wrap(int(abs(int(x)) // abs(int(y))) * (-1 if (x < 0) != (y < 0) else 1), bits, signed)
            for x, y in zip(a, b, strict=True)]
    rem = [wrap(int(x) - int(y) * int(abs(int(x)) // abs(int(y))) * (-1 if (x < 0) != (y < 0) else 1), bits, signed)
           for x, y in zip(a, b, strict=True)]
    assert got["d"].tolist() == quot
    assert got["e"].tolist() == rem


def test_carry_chain_adds_and_subtracts_64_bit_values() -> None:
    a, b = ints(64, False), ints(64, False)[::-1].copy()
    body = """
    mov.b64 {%r0, %r1}, %a; mov.b64 {%r2, %r3}, %b;
    add.cc.u32 %r4, %r0, %r2; addc.u32 %r5, %r1, %r3; mov.b64 %d, {%r4, %r5};
    sub.cc.u32 %r4, %r0, %r2; subc.u32 %r5, %r1, %r3; mov.b64 %e, {%r4, %r5};
    """
    got = run(body, {"a": ("u64", a), "b": ("u64", b)}, {"d": "u64", "e": "u64"})
    assert got["d"].tolist() == [(int(x) + int(y)) % (1 << 64) for x, y in zip(a, b, strict=True)]
    assert got["e"].tolist() == [(int(x) - int(y)) % (1 << 64) for x, y in zip(a, b, strict=True)]


def test_multiword_multiply_with_mad_carry() -> None:
    a, b = ints(32, False), ints(32, False)[::-1].copy()
    c = ints(64, False)
    # 32x32 -> 64 product plus a 64-bit addend, low and high words chained through CC.CF
    body = """
    mov.b64 {%r0, %r1}, %c;
    mad.lo.cc.u32 %r2, %a, %b, %r0; madc.hi.u32 %r3, %a, %b, %r1;
    mov.b64 %d, {%r2, %r3};
    """
    got = run(body, {"a": ("u32", a), "b": ("u32", b), "c": ("u64", c)}, {"d": "u64"})
    assert got["d"].tolist() == [(int(x) * int(y) + int(z)) % (1 << 64) for x, y, z in zip(a, b, c, strict=True)]


@pytest.mark.parametrize("ty", ["b32", "s32", "u32", "b64", "s64"])
def test_shifts_clamp_large_amounts(ty: str) -> None:
    bits = int(ty[1:])
    signed = ty[0] == "s"
    a = ints(bits, signed)
    n = np.array([0, 1, bits - 1, bits, bits + 5, 1000, 3, 7] * 4, dtype=np.uint32)
    shr = "shr." + ty
    got = run(f"shl.b{bits} %d, %a, %b; {shr} %e, %a, %b;", {"a": (ty, a), "b": ("u32", n)}, {"d": ty, "e": ty})
    assert got["d"].tolist() == [wrap(int(x) << min(int(k), bits), bits, signed) for x, k in zip(a, n, strict=True)]
    assert got["e"].tolist() == [wrap(int(x) >> min(int(k), bits), bits, signed) if signed else
                                 (int(x) % (1 << bits)) >> min(int(k), bits) for x, k in zip(a, n, strict=True)]


def _bfe(a: int, pos: int, length: int, bits: int, signed: bool) -> int:
    """bfe from the PTX ISA pseudo-code."""
    a %= 1 << bits
    pos, length = pos & 0xFF, length & 0xFF
    msb = bits - 1
    sbit = (a >> min(pos + length - 1, msb)) & 1 if signed and length else 0
    out = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if i < length and pos + i <= msb else sbit
        out |= bit << i
    return wrap(out, bits, signed)


def _bfi(a: int, b: int, pos: int, length: int, bits: int) -> int:
    a, b, pos, length = a % (1 << bits), b % (1 << bits), pos & 0xFF, length & 0xFF
    out = b
    for i in range(length):
        if pos + i < bits:
            out = (out & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
    return out


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
def test_bit_field_extract_and_insert(ty: str) -> None:
    bits, signed = int(ty[1:]), ty[0] == "s"
    a, b = ints(bits, signed), ints(bits, False)
    pos = RNG.integers(0, bits + 8, 32).astype(np.uint32)
    length = RNG.integers(0, bits + 8, 32).astype(np.uint32)
    pos[:4], length[:4] = [0, bits - 1, bits, 300], [0, 1, 5, bits]
    bt = f"b{bits}"
    got = run(f"bfe.{ty} %d, %a, %b, %c; bfi.{bt} %e, %a, %f, %b, %c;",
              {"a": (ty, a), "f": (f"u{bits}", b), "b": ("u32", pos), "c": ("u32", length)}, {"d": ty, "e": f"u{bits}"})
    assert got["d"].tolist() == [_bfe(int(x), int(p), int(n), bits, signed)
                                 for x, p, n in zip(a, pos, length, strict=True)]
    assert got["e"].tolist() == [_bfi(int(x), int(y), int(p), int(n), bits)
                                 for x, y, p, n in zip(a, b, pos, length, strict=True)]


@pytest.mark.parametrize("ty", ["u32", "s32", "u64", "s64"])
def test_bit_counts(ty: str) -> None:
    bits, signed = int(ty[1:]), ty[0] == "s"
    a = ints(bits, signed)
    bt = f"b{bits}"
    got = run(f"popc.{bt} %d, %a; clz.{bt} %e, %a; bfind.{ty} %f, %a; bfind.shiftamt.{ty} %g, %a; brev.{bt} %h, %a;",
              {"a": (ty, a)}, {"d": "u32", "e": "u32", "f": "u32", "g": "u32", "h": f"u{bits}"})
    raw = [int(x) % (1 << bits) for x in a]
    assert got["d"].tolist() == [bin(x).count("1") for x in raw]
    assert got["e"].tolist() == [bits - x.bit_length() for x in raw]
    msb = [(~x % (1 << bits) if signed and x >> (bits - 1) else x).bit_length() - 1 for x in raw]
    assert got["f"].tolist() == [m if m >= 0 else 0xFFFFFFFF for m in msb]
    assert got["g"].tolist() == [bits - 1 - m if m >= 0 else 0xFFFFFFFF for m in msb]
    assert got["h"].tolist() == [int(f"{x:0{bits}b}"[::-1], 2) for x in raw]


def test_prmt_default_and_modes() -> None:
    a, b = ints(32, False), ints(32, False)[::-1].copy()
    sel = RNG.integers(0, 1 << 16, 32).astype(np.uint32)
    body = "prmt.b32 %d, %a, %b, %c; prmt.b32.f4e %e, %a, %b, %c; prmt.b32.b4e %f, %a, %b, %c;" \
           "prmt.b32.rc8 %g, %a, %b, %c; prmt.b32.ecl %h, %a, %b, %c; prmt.b32.ecr %i, %a, %b, %c;" \
           "prmt.b32.rc16 %j, %a, %b, %c;"
    outs = {k: "u32" for k in "defghij"}
    got = run(body, {"a": ("u32", a), "b": ("u32", b), "c": ("u32", sel)}, outs)
    modes = {
        "e": lambda s, i: (s + i) & 7, "f": lambda s, i: (s - i) & 7, "g": lambda s, i: s,
        "h": lambda s, i: max(s, i), "i": lambda s, i: min(s, i), "j": lambda s, i: 2 * (s & 1) + (i & 1),
    }
    for lane in range(32):
        pool = (int(b[lane]) << 32 | int(a[lane])).to_bytes(8, "little")
        c = int(sel[lane])
        default = 0
        for i in range(4):
            nib = (c >> 4 * i) & 0xF
            byte = pool[nib & 7]
            default |= ((0xFF if byte & 0x80 else 0) if nib & 8 else byte) << 8 * i
        assert got["d"][lane] == default
        for reg, pick in modes.items():
            assert got[reg][lane] == sum(pool[pick(c & 3, i)] << 8 * i for i in range(4)), reg


def test_lop3_and_funnel_shifts() -> None:
    a, b, c = ints(32, False), ints(32, False)[::-1].copy(), RNG.integers(0, 1 << 32, 32).astype(np.uint32)
    n = np.array([0, 1, 31, 32, 33, 64, 5, 100] * 4, dtype=np.uint32)
    body = "lop3.b32 %d, %a, %b, %c, 0x96; lop3.b32 %e, %a, %b, %c, 0xE8;" \
           "shf.l.wrap.b32 %f, %a, %b, %n; shf.r.clamp.b32 %g, %a, %b, %n;"
    got = run(body, {"a": ("u32", a), "b": ("u32", b), "c": ("u32", c), "n": ("u32", n)},
              {k: "u32" for k in "defg"})
    for lane in range(32):
        x, y, z, k = int(a[lane]), int(b[lane]), int(c[lane]), int(n[lane])
        assert got["d"][lane] == x ^ y ^ z
        assert got["e"][lane] == (x & y) | (x & z) | (y & z)  # majority
        joined = y << 32 | x
        assert got["f"][lane] == ((joined << (k & 31)) >> 32) & 0xFFFFFFFF
        assert got["g"][lane] == (joined >> min(k, 32)) & 0xFFFFFFFF


# ------------------------------------------------------------------------------------- comparison
_CMP = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
    "equ": lambda x, y: math.isnan(x) or math.isnan(y) or x == y, "neu": lambda x, y: x != y,
    "ltu": lambda x, y: not x >= y, "leu": lambda x, y: not x > y, "gtu": lambda x, y: not x <= y,
    "geu": lambda x, y: not x < y, "num": lambda x, y: not (math.isnan(x) or math.isnan(y)),
    "nan": lambda x, y: math.isnan(x) or math.isnan(y),
}


@pytest.mark.parametrize("cmp", sorted(_CMP))
def test_float_comparisons_ordered_and_unordered(cmp: str) -> None:
    vals = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.5]
    a = np.array([vals[i % 8] for i in range(32)], dtype=np.float32)
    b = np.array([vals[(i // 8 + i) % 8] for i in range(32)], dtype=np.float32)
    got = run(f"setp.{cmp}.f32 %d|%e, %a, %b;", {"a": ("f32", a), "b": ("f32", b)}, {"d": "pred", "e": "pred"})
    want = [_CMP[cmp](float(x), float(y)) for x, y in zip(a, b, strict=True)]
    assert got["d"].astype(bool).tolist() == want
    assert got["e"].astype(bool).tolist() == [not w for w in want]


def test_integer_comparisons_signed_unsigned_and_combined() -> None:
    a, b = ints(32, True), ints(32, True)[::-1].copy()
    p = RNG.integers(0, 2, 32).astype(np.uint8)
    body = "setp.lt.s32 %d, %a, %b; setp.lo.u32 %e, %a, %b; setp.ge.or.s32 %f, %a, %b, %p;" \
           "setp.ne.and.s32 %g, %a, %b, !%p;"
    got = run(body, {"a": ("s32", a), "b": ("s32", b), "p": ("pred", p)}, {k: "pred" for k in "defg"})
    for lane in range(32):
        x, y, q = int(a[lane]), int(b[lane]), bool(p[lane])
        assert got["d"][lane] == (x < y)
        assert got["e"][lane] == (x % (1 << 32) < y % (1 << 32))
        assert got["f"][lane] == ((x >= y) or q)
        assert got["g"][lane] == ((x != y) and not q)


def test_selp_slct_set() -> None:
    a, b = ints(32, True), ints(32, True)[::-1].copy()
    c = RNG.normal(size=32).astype(np.float32)
    p = RNG.integers(0, 2, 32).astype(np.uint8)
    body = "selp.s32 %d, %a, %b, %p; slct.s32.f32 %e, %a, %b, %c; set.gt.u32.s32 %f, %a, %b; set.lt.f32.s32 %g, %a, %b;"
    got = run(body, {"a": ("s32", a), "b": ("s32", b), "c": ("f32", c), "p": ("pred", p)},
              {"d": "s32", "e": "s32", "f": "u32", "g": "f32"})
    assert got["d"].tolist() == np.where(p.astype(bool), a, b).tolist()
    assert got["e"].tolist() == np.where(c >= 0, a, b).tolist()
    assert got["f"].tolist() == [0xFFFFFFFF if x > y else 0 for x, y in zip(a, b, strict=True)]
    assert got["g"].tolist() == [1.0 if x < y else 0.0 for x, y in zip(a, b, strict=True)]


# ---------------------------------------------------------------------------------- floating point
def test_float_min_max_ignore_nan_and_abs_neg() -> None:
    a = np.array([1.0, np.nan, -2.0, np.nan, 0.5, -np.inf] * 5 + [3, 4], dtype=np.float32)
    b = np.array([np.nan, 2.0, -3.0, np.nan, 0.25, 7.0] * 5 + [4, 3], dtype=np.float32)
    got = run("min.f32 %d, %a, %b; max.f32 %e, %a, %b; abs.f32 %f, %a; neg.f32 %g, %b;",
              {"a": ("f32", a), "b": ("f32", b)}, {k: "f32" for k in "defg"})

    def pick(fn, x, y):
        return y if math.isnan(x) else x if math.isnan(y) else fn(x, y)

    np.testing.assert_array_equal(got["d"], [pick(min, float(x), float(y)) for x, y in zip(a, b, strict=True)])
    np.testing.assert_array_equal(got["e"], [pick(max, float(x), float(y)) for x, y in zip(a, b, strict=True)])
    np.testing.assert_array_equal(got["f"], [abs(float(x)) for x in a])
    np.testing.assert_array_equal(got["g"], [-float(y) for y in b])


def test_fma_rounds_once() -> None:
    # a*b needs 48 bits: rounding the product first would lose the low part that fma keeps
    a = (1 + RNG.integers(1, 1 << 23, 32) / (1 << 23)).astype(np.float32)
    b = (1 + RNG.integers(1, 1 << 23, 32) / (1 << 23)).astype(np.float32)
    c = (-(a.astype(np.float64) * b)).astype(np.float32)
    got = run("fma.rn.f32 %d, %a, %b, %c;", {"a": ("f32", a), "b": ("f32", b), "c": ("f32", c)}, {"d": "f32"})["d"]
    from fractions import Fraction

    exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in zip(a, b, c, strict=True)]
    assert got.tolist() == [float(np.float32(float(e))) for e in exact]
    assert np.count_nonzero(got) > 16  # the unfused result would be zero almost everywhere


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_to_f32_rounding_modes(mode: str) -> None:
    x = np.concatenate([RNG.normal(size=28) * 1e3, [1 + 2.0**-30, -(1 + 2.0**-30), 1e40, -1e40]])
    got = run(f"cvt.{mode}.f32.f64 %d, %a;", {"a": ("f64", x)}, {"d": "f32"})["d"]
    with np.errstate(over="ignore"):
        for v, r in zip(x, got, strict=True):
            toward = {"rz": np.float32(0), "rm": np.float32(np.inf), "rp": np.float32(-np.inf)}
            if mode == "rn":
                assert r == np.float32(v)
                continue
            nxt = float(np.nextafter(r, np.float32(np.copysign(np.inf, v)) if mode == "rz" else toward[mode]))
            if mode == "rz":
                assert abs(float(r)) <= abs(v) < abs(nxt)  # the largest magnitude not above |v|
            elif mode == "rm":
                assert float(r) <= v < nxt
            else:
                assert nxt < v <= float(r)


def test_float_to_int_saturates_and_nan_is_zero() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 2147483647.0, -2147483649.0,
                  3.7, -3.7, 4294967296.0, 0.0] * 2, dtype=np.float32)
    got = run("cvt.rni.s32.f32 %d, %a; cvt.rzi.s32.f32 %e, %a; cvt.rmi.u32.f32 %f, %a; cvt.rpi.s16.f32 %g, %a;",
              {"a": ("f32", x)}, {"d": "s32", "e": "s32", "f": "u32", "g": "s16"})

    def sat(v: float, rnd, bits: int, signed: bool) -> int:
        if math.isnan(v):
            return 0
        lo, hi = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
        return hi if v == math.inf else lo if v == -math.inf else max(lo, min(hi, int(rnd(v))))

    assert got["d"].tolist() == [sat(float(v), round, 32, True) for v in x]  # round() is half-to-even
    assert got["e"].tolist() == [sat(float(v), math.trunc, 32, True) for v in x]
    assert got["f"].tolist() == [sat(float(v), math.floor, 32, False) for v in x]
    assert got["g"].tolist() == [sat(float(v), math.ceil, 16, True) for v in x]


def test_integer_conversions_extend_truncate_and_saturate() -> None:
    a = ints(32, True)
    got = run("cvt.s64.s32 %d, %a; cvt.u64.u32 %e, %a; cvt.u16.u32 %f, %a; cvt.sat.s8.s32 %g, %a;"
              "cvt.sat.u16.s32 %h, %a; cvt.s32.s8 %i, %a;",
              {"a": ("s32", a)}, {"d": "s64", "e": "u64", "f": "u16", "g": "s16", "h": "u16", "i": "s32"})
    assert got["d"].tolist() == a.tolist()
    assert got["e"].tolist() == [int(x) % (1 << 32) for x in a]
    assert got["f"].tolist() == [int(x) % (1 << 16) for x in a]
    assert got["g"].tolist() == [max(-128, min(127, int(x))) for x in a]
    assert got["h"].tolist() == [max(0, min(65535, int(x))) for x in a]
    assert got["i"].tolist() == [wrap(int(x), 8, True) for x in a]


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_int_to_float_rounding(mode: str) -> None:
    a = ints(64, True)
    got = run(f"cvt.{mode}.f32.s64 %d, %a; cvt.{mode}.f64.s64 %e, %a;", {"a": ("s64", a)}, {"d": "f32", "e": "f64"})
    from fractions import Fraction

    for v, r32, r64 in zip(a.tolist(), got["d"], got["e"], strict=True):
        for r, ty in ((r32, np.float32), (r64, np.float64)):
            exact, val = Fraction(v), Fraction(float(r))
            below = Fraction(float(np.nextafter(ty(r), ty(-np.inf))))
            above = Fraction(float(np.nextafter(ty(r), ty(np.inf))))
            assert below < exact < above or val == exact
            if mode == "rz":
                assert abs(val) <= abs(exact)
            elif mode == "rm":
                assert val <= exact
            elif mode == "rp":
                assert val >= exact
            else:
                assert abs(val - exact) <= min(abs(above - exact), abs(exact - below))


def test_half_precision_conversions_and_packed_arithmetic() -> None:
    x = (RNG.normal(size=32) * 100).astype(np.float32)
    y = (RNG.normal(size=32) * 100).astype(np.float32)
    body = """
    cvt.rn.f16.f32 %h0, %a; cvt.rn.f16.f32 %h1, %b; mov.b32 %r0, {%h0, %h1};
    add.f16x2 %r1, %r0, %r0; fma.rn.f16x2 %r2, %r0, %r0, %r0;
    mov.b32 {%h2, %h3}, %r2; cvt.f32.f16 %d, %h2; cvt.f32.f16 %e, %h3; mov.b32 %f, %r1;
    cvt.rn.bf16.f32 %h4, %a; cvt.f32.bf16 %g, %h4; cvt.rn.bf16x2.f32 %i, %a, %b;
    """
    got = run(body, {"a": ("f32", x), "b": ("f32", y)}, {"d": "f32", "e": "f32", "f": "u32", "g": "f32", "i": "u32"},
              decls=".reg .b16 %h<5>;")
    hx, hy = x.astype(np.float16), y.astype(np.float16)

    def fma16(v: np.ndarray) -> np.ndarray:
        return (v.astype(np.float64) * v + v).astype(np.float16)

    np.testing.assert_array_equal(got["d"], fma16(hx).astype(np.float32))
    np.testing.assert_array_equal(got["e"], fma16(hy).astype(np.float32))
    packed = (hx + hx).view(np.uint16).astype(np.uint32) | (hy + hy).view(np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(got["f"], packed)

    def bf16(v: float) -> int:  # round to nearest even on the float32 bits
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF

    widened = [struct.unpack("<f", struct.pack("<I", bf16(float(v)) << 16))[0] for v in x]
    np.testing.assert_array_equal(got["g"], widened)
    np.testing.assert_array_equal(got["i"], [bf16(float(v)) | bf16(float(w)) << 16 for v, w in zip(y, x, strict=True)])


# ---------------------------------------------------------------------------------------- warp-level
def test_shuffles_with_clamp_and_segment_masks() -> None:
    a = RNG.integers(0, 1 << 32, 32).astype(np.uint32)
    # width-8 segments: c = ((32 - width) << 8) | 0x1f for idx/down/bfly; (32 - width) << 8 for up
    body = """
    shfl.sync.idx.b32 %d|%p, %a, 3, 0x181f, -1;
    shfl.sync.up.b32 %e|%q, %a, 2, 0x1800, -1;
    shfl.sync.down.b32 %f, %a, 5, 0x1f, -1;
    shfl.sync.bfly.b32 %g, %a, 9, 0x1f, -1;
    """
    got = run(body + "selp.u32 %h, 1, 0, %p; selp.u32 %i, 1, 0, %q;", {"a": ("u32", a)}, {k: "u32" for k in "defghi"})
    for lane in range(32):
        seg = lane & ~7
        assert got["d"][lane] == a[seg + 3] and got["h"][lane] == 1
        ok = lane - 2 >= seg
        assert got["e"][lane] == (a[lane - 2] if ok else a[lane]) and got["i"][lane] == ok
        assert got["f"][lane] == (a[lane + 5] if lane + 5 <= 31 else a[lane])
        assert got["g"][lane] == a[lane ^ 9]


def test_votes_match_and_redux() -> None:
    a = RNG.integers(0, 4, 32).astype(np.uint32)
    p = (a > 1).astype(np.uint8)
    body = """
    vote.sync.ballot.b32 %d, %p, -1; vote.sync.any.pred %q, %p, -1; selp.u32 %e, 1, 0, %q;
    vote.sync.all.pred %q, %p, -1; selp.u32 %f, 1, 0, %q;
    match.any.sync.b32 %g, %a, -1; redux.sync.add.u32 %h, %a, -1; redux.sync.max.u32 %i, %a, -1;
    redux.sync.or.b32 %j, %a, -1;
    """
    got = run(body, {"a": ("u32", a), "p": ("pred", p)}, {k: "u32" for k in "defghij"})
    ballot = sum(1 << k for k in range(32) if p[k])
    assert set(got["d"].tolist()) == {ballot}
    assert set(got["e"].tolist()) == {int(p.any())}
    assert set(got["f"].tolist()) == {int(p.all())}
    assert got["g"].tolist() == [sum(1 << j for j in range(32) if a[j] == a[k]) for k in range(32)]
    assert set(got["h"].tolist()) == {int(a.sum())}
    assert set(got["i"].tolist()) == {int(a.max())}
    assert set(got["j"].tolist()) == {int(np.bitwise_or.reduce(a))}


def test_warp_operations_see_only_the_active_lanes() -> None:
    a = RNG.integers(0, 100, 32).astype(np.uint32)
    p = RNG.integers(0, 2, 32).astype(np.uint8)
    p[:2] = [0, 1]
    body = """
    mov.u32 %d, 0; mov.u32 %e, 0; mov.u32 %f, 99;
    @!%p bra SKIP;
    activemask.b32 %d; redux.sync.add.u32 %e, %a, %d; elect.sync %f|%q, %d;
    SKIP:
    """
    got = run(body, {"a": ("u32", a), "p": ("pred", p)}, {k: "u32" for k in "def"})
    on = p.astype(bool)
    mask = sum(1 << k for k in range(32) if on[k])
    assert got["d"].tolist() == [mask if t else 0 for t in on]
    assert got["e"].tolist() == [int(a[on].sum()) if t else 0 for t in on]
    assert got["f"].tolist() == [int(np.argmax(on)) if t else 99 for t in on]


# ------------------------------------------------------------------------------------------ atomics
@pytest.mark.parametrize("op", ["add", "min", "max", "inc", "dec", "exch", "cas", "and", "or", "xor"])
def test_atomics_are_sequential_in_lane_order(op: str) -> None:
    """All lanes hit four words; old values must be those of one lane after another, lowest lane first."""
    ty = "b32" if op in ("and", "or", "xor", "exch", "cas") else "u32"
    b = RNG.integers(0, 12, 32).astype(np.uint32)
    c = RNG.integers(0, 12, 32).astype(np.uint32)
    extra = ", %c" if op == "cas" else ""
    body = f"""
    and.b32 %r0, %tid, 3; ld.param.u64 %rd0, [in_m]; mul.wide.u32 %rd1, %r0, 4; add.s64 %rd0, %rd0, %rd1;
    atom.global.{op}.{ty} %d, [%rd0], %b{extra};
    """
    start = RNG.integers(0, 12, 4).astype(np.uint32)
    e = _run_with_memory(body, b, c, start)
    mem = [int(v) for v in start]
    olds = []
    for lane in range(32):
        w, x, y = lane & 3, int(b[lane]), int(c[lane])
        old = mem[w]
        olds.append(old)
        mem[w] = {
            "add": old + x, "min": min(old, x), "max": max(old, x), "inc": 0 if old >= x else old + 1,
            "dec": x if old == 0 or old > x else old - 1, "exch": x, "cas": y if old == x else old,
            "and": old & x, "or": old | x, "xor": old ^ x,
        }[op] % (1 << 32)
    assert e["d"].tolist() == olds
    assert e["m"].tolist() == mem


def _run_with_memory(body: str, b: np.ndarray, c: np.ndarray, start: np.ndarray) -> dict[str, np.ndarray]:
    text = "\n".join([
        ".version 8.0", ".target sm_80", ".address_size 64",
        ".visible .entry t(.param .u64 in_b, .param .u64 in_c, .param .u64 in_m, .param .u64 out_d)", "{",
        ".reg .b32 %tid, %b, %c, %d, %r<4>;", ".reg .b64 %rd<4>;", ".reg .f32 %f<4>;",
        "mov.u32 %tid, %tid.x;", "mul.wide.u32 %rd3, %tid, 4;",
        "ld.param.u64 %rd2, [in_b]; add.s64 %rd2, %rd2, %rd3; ld.global.u32 %b, [%rd2];",
        "ld.param.u64 %rd2, [in_c]; add.s64 %rd2, %rd2, %rd3; ld.global.u32 %c, [%rd2];",
        body,
        "ld.param.u64 %rd2, [out_d]; add.s64 %rd2, %rd2, %rd3; st.global.u32 [%rd2], %d;", "ret;", "}",
    ])
    args = {"in_b": Buffer("u32", 32), "in_c": Buffer("u32", 32), "in_m": Buffer("u32", 4), "out_d": Buffer("u32", 32)}
    e = emulate(parse_text(text), "t", Launch((1, 1, 1), (32, 1, 1), 0, args),
                inputs={"in_b": b, "in_c": c, "in_m": start})
    return {"d": e.buffers["out_d"], "m": e.buffers["in_m"]}


def test_float_atomic_add_accumulates_in_lane_order() -> None:
    b = RNG.normal(size=32).astype(np.float32)
    body = "ld.param.u64 %rd0, [in_m]; mov.b32 %f0, %b; atom.global.add.f32 %f1, [%rd0], %f0; mov.b32 %d, %f1;"
    out = _run_with_memory(body.replace("%rd0, [in_m]", "%rd0, [in_m]"), b.view(np.uint32), b.view(np.uint32),
                           np.zeros(4, dtype=np.uint32))
    acc = np.float32(0)
    olds = []
    for v in b:
        olds.append(acc)
        acc = np.float32(acc + v)
    np.testing.assert_array_equal(out["d"].view(np.float32), olds)
    assert out["m"].view(np.float32)[0] == acc


# ------------------------------------------------------------------------------------------- memory
def test_vector_loads_stores_and_sign_extension_through_local_and_shared() -> None:
    a = ints(32, True)
    body = """
    .local .align 16 .b8 buf[16];
    .shared .align 16 .b8 sm[512];
    mov.u32 %r0, 0; mov.u32 %r1, 1;
    st.local.v4.u32 [buf], {%a, %r0, %r1, %a};
    ld.local.v2.u32 {%r2, %r3}, [buf+8];
    ld.local.s8 %d, [buf];
    mov.u64 %rd0, sm; mul.wide.u32 %rd2, %tid, 16; add.s64 %rd0, %rd0, %rd2; cvta.shared.u64 %rd1, %rd0;
    st.v2.u32 [%rd1+8], {%r2, %a};
    ld.shared.u32 %e, [%rd0+12];
    ld.u32 %f, [%rd1+8];
    mov.u64 %rd3, buf; cvta.local.u64 %rd3, %rd3; ld.u16 %g, [%rd3+2];
    isspacep.shared %p; isspacep.local %q;
    """
    body = body.replace("isspacep.shared %p;", "isspacep.shared %p, %rd1;").replace("isspacep.local %q;",
                                                                                      "isspacep.global %q, %rd1;")
    got = run(body + "selp.u32 %h, 1, 0, %p; selp.u32 %i, 1, 0, %q;", {"a": ("s32", a)},
              {"d": "s32", "e": "s32", "f": "u32", "g": "u16", "h": "u32", "i": "u32"})
    assert got["d"].tolist() == [wrap(int(x), 8, True) for x in a]
    assert got["e"].tolist() == a.tolist()
    assert got["f"].tolist() == [1] * 32
    assert got["g"].tolist() == [(int(x) % (1 << 32)) >> 16 for x in a]
    assert got["h"].tolist() == [1] * 32 and got["i"].tolist() == [0] * 32


@pytest.mark.parametrize(("body", "message"), [
    ("ld.param.u64 %rd0, [in_a]; ld.global.u32 %d, [%rd0+4096];", "out of bounds"),
    ("ld.param.u64 %rd0, [in_a]; ld.global.u32 %d, [%rd0+2];", "misaligned"),
    ("mov.u64 %rd0, 16; ld.u32 %d, [%rd0];", "no memory window"),
    ("trap;", "trap"),
    ("tex.2d.v4.f32.f32 {%f0, %f1, %f2, %f3}, [tx, {%f4, %f5}]; mov.u32 %d, 0;", "tex"),
])
def test_faults_and_unsupported_instructions_are_clear_errors(body: str, message: str) -> None:
    with pytest.raises(EmulationError, match=message) as info:
        run(body, {"a": ("u32", np.zeros(32, dtype=np.uint32))}, {"d": "u32"})
    assert "op.ptx:" in str(info.value)  # the PTX position of the instruction


def test_unsupported_instruction_on_a_path_not_taken_is_harmless() -> None:
    a = ints(32, False)
    got = run("mov.u32 %d, %a; setp.eq.u32 %p, %tid, 99; @%p bra BAD; bra.uni OK; BAD: tex.2d.v4.f32.f32 "
              "{%f0, %f1, %f2, %f3}, [tx, {%f4, %f5}]; OK:", {"a": ("u32", a)}, {"d": "u32"})
    assert got["d"].tolist() == a.tolist()


def _nearest(r: float, exact, ty=np.float32) -> bool:
    """Whether ``r`` is the float of type ``ty`` nearest to the Fraction ``exact`` (ties either way)."""
    from fractions import Fraction

    lo = Fraction(float(np.nextafter(ty(r), ty(-np.inf))))
    hi = Fraction(float(np.nextafter(ty(r), ty(np.inf))))
    mid = Fraction(float(r))
    return (lo + mid) / 2 <= exact <= (mid + hi) / 2


def test_correctly_rounded_division_square_root_and_reciprocal() -> None:
    from fractions import Fraction

    a = (RNG.random(32) * 100 + 0.01).astype(np.float32)
    b = (RNG.random(32) * 10 + 0.01).astype(np.float32)
    got = run("div.rn.f32 %d, %a, %b; sqrt.rn.f32 %e, %a; rcp.rn.f32 %f, %b;", {"a": ("f32", a), "b": ("f32", b)},
              {"d": "f32", "e": "f32", "f": "f32"})
    for x, y, q, s, r in zip(a, b, got["d"], got["e"], got["f"], strict=True):
        assert _nearest(q, Fraction(float(x)) / Fraction(float(y)))
        assert _nearest(r, 1 / Fraction(float(y)))
        lo = Fraction(float(np.nextafter(s, np.float32(0))))
        hi = Fraction(float(np.nextafter(s, np.float32(np.inf))))
        mid = Fraction(float(s))
        assert ((lo + mid) / 2) ** 2 <= Fraction(float(x)) <= ((mid + hi) / 2) ** 2


def test_approximate_functions_are_close() -> None:
    x = (RNG.random(32) * 4 + 0.1).astype(np.float32)
    body = "sin.approx.f32 %d, %a; cos.approx.f32 %e, %a; lg2.approx.f32 %f, %a; ex2.approx.ftz.f32 %g, %a;" \
           "rsqrt.approx.f32 %h, %a; tanh.approx.f32 %i, %a; div.approx.f32 %j, %a, %a;"
    got = run(body, {"a": ("f32", x)}, {k: "f32" for k in "defghij"})
    for reg, fn in {"d": math.sin, "e": math.cos, "f": math.log2, "g": lambda v: 2.0**v,
                    "h": lambda v: 1 / math.sqrt(v), "i": math.tanh, "j": lambda v: 1.0}.items():
        np.testing.assert_allclose(got[reg], [fn(float(v)) for v in x], rtol=2e-6, atol=1e-6)


def test_testp_copysign_sad_dp4a() -> None:
    a = np.array([1.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -2.5, 0.0] * 4, dtype=np.float32)
    b = RNG.normal(size=32).astype(np.float32)
    u, v, w = ints(32, False), ints(32, False)[::-1].copy(), ints(32, False)
    body = """
    testp.finite.f32 %p, %a; selp.u32 %d, 1, 0, %p; testp.subnormal.f32 %p, %a; selp.u32 %e, 1, 0, %p;
    testp.notanumber.f32 %p, %a; selp.u32 %f, 1, 0, %p; copysign.f32 %g, %a, %b;
    sad.u32 %h, %u, %v, %w; dp4a.s32.u32 %i, %u, %v, %w;
    """
    got = run(body, {"a": ("f32", a), "b": ("f32", b), "u": ("u32", u), "v": ("u32", v), "w": ("u32", w)},
              {"d": "u32", "e": "u32", "f": "u32", "g": "f32", "h": "u32", "i": "u32"})
    assert got["d"].tolist() == [int(math.isfinite(float(x))) for x in a]
    assert got["e"].tolist() == [int(x != 0 and abs(float(x)) < 2.0**-126) for x in a]
    assert got["f"].tolist() == [int(math.isnan(float(x))) for x in a]
    np.testing.assert_array_equal(got["g"], [math.copysign(float(y), float(x)) for x, y in zip(a, b, strict=True)])
    assert got["h"].tolist() == [(abs(int(x) - int(y)) + int(z)) % (1 << 32) for x, y, z in zip(u, v, w, strict=True)]
    dots = []
    for x, y, z in zip(u, v, w, strict=True):
        xs = [wrap(int(x) >> 8 * k, 8, True) for k in range(4)]  # a is .s32: signed bytes
        ys = [(int(y) >> 8 * k) & 0xFF for k in range(4)]  # b is .u32: unsigned bytes
        dots.append((sum(p * q for p, q in zip(xs, ys, strict=True)) + int(z)) % (1 << 32))
    assert got["i"].tolist() == dots


def test_match_all_vote_uni_and_signed_redux() -> None:
    uniform = np.full(32, 5, dtype=np.uint32)
    mixed = ints(32, True)
    body = """
    match.all.sync.b32 %d|%p, %a, -1; selp.u32 %e, 1, 0, %p;
    match.all.sync.b32 %f|%q, %b, -1; selp.u32 %g, 1, 0, %q;
    setp.eq.u32 %p, %a, 5; vote.sync.uni.pred %q, %p, -1; selp.u32 %h, 1, 0, %q;
    setp.gt.s32 %p, %b, 0; vote.sync.uni.pred %q, %p, -1; selp.u32 %i, 1, 0, %q;
    redux.sync.min.s32 %j, %b, -1;
    """
    got = run(body, {"a": ("u32", uniform), "b": ("s32", mixed)},
              {"d": "u32", "e": "u32", "f": "u32", "g": "u32", "h": "u32", "i": "u32", "j": "s32"})
    assert set(got["d"].tolist()) == {0xFFFFFFFF} and set(got["e"].tolist()) == {1}
    assert set(got["f"].tolist()) == {0} and set(got["g"].tolist()) == {0}
    assert set(got["h"].tolist()) == {1}
    assert set(got["i"].tolist()) == {int(len(set((mixed > 0).tolist())) == 1)}
    assert set(got["j"].tolist()) == {int(mixed.min())}
