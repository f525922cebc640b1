"""Vectorised PTX value semantics for the static block-count interpreter.

A :class:`Rows` holds the registers of many threads at once: every register is a numpy ``uint64`` array of
raw bits (one entry per row, or a 0-d array when all rows agree), or ``None`` when the value is *data*: it
came from memory, a warp exchange, a clock, or anything else a launch specification does not determine.
Pointers get a fake, distinct base address and a *base tag*; a comparison is only trusted when both sides
carry the same base (or none), so pointer loops are exact without knowing real addresses.

:func:`compile_instruction` turns one instruction into a closure that updates a :class:`Rows` in place.
Instructions it does not model write ``None`` to their destinations.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.registers import defs_uses
from ptxstatic.ptx.ast import Addr, Imm, Instruction, Neg, Pair, Reg, Sym, Vec
from ptxstatic.ptx.isa import TYPE_BITS, OpInfo

MIXED = -1  #: base tag of a value that mixes a pointer with something else: never trusted in comparisons
U64 = np.uint64
Bits = np.ndarray  # uint64 bits, 0-d (uniform) or 1-d (one entry per row)
Step = Callable[["Rows"], None]


@dataclass
class Rows:
    """Register state of a set of rows (thread fragments) at one point of one function."""

    n: int
    regs: dict[str, Bits | None]
    ptr: dict[str, int] = field(default_factory=dict)  # register -> pointer base tag
    tainted: set[str] = field(default_factory=set)  # registers written under a data-dependent branch
    params: dict[tuple[str, int], tuple[Bits | None, int, int | None, bool]] = field(default_factory=dict)
    shadowed: bool = False  # inside the influence of a data-dependent branch: every write is tainted

    def get(self, name: str) -> Bits | None:
        return self.regs.get(name)

    def put(self, name: str, bits: Bits | None, tag: int | None, tainted: bool) -> None:
        self.regs[name] = None if bits is None else np.asarray(bits, dtype=U64)
        if tag is None:
            self.ptr.pop(name, None)
        else:
            self.ptr[name] = tag
        if tainted or self.shadowed:
            self.tainted.add(name)
        else:
            self.tainted.discard(name)


# ------------------------------------------------------------------------------------------- bits


def width(t: str) -> int:
    return TYPE_BITS.get(t, 32)


def _mask(w: int) -> int:
    return (1 << w) - 1


def read(bits: Bits, t: str) -> np.ndarray:
    """Typed view of register bits: int64 (uint64 for u64/b64), floats, or bool for predicates."""
    if t == "pred":
        return np.asarray(bits) != 0
    if t == "f32":
        return np.asarray(bits & U64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    if t == "f64":
        return np.asarray(bits).view(np.float64)
    if t == "f16":
        return np.asarray(bits & U64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float32)
    if t == "bf16":
        return (np.asarray(bits & U64(0xFFFF)).astype(np.uint32) << np.uint32(16)).view(np.float32)
    w = width(t)
    if w >= 64:
        return np.asarray(bits).view(np.int64) if t[0] == "s" else np.asarray(bits)
    v = np.asarray(bits & U64(_mask(w))).astype(np.int64)
    if t[0] == "s":
        sign = 1 << (w - 1)
        v = (v ^ sign) - sign
    return v


def to_bits(x: np.ndarray | float | int | bool, t: str) -> Bits:
    """Raw bits of a typed value (integers wrap to the type's width)."""
    if t == "pred":
        return np.asarray(x).astype(bool).astype(U64)
    if t == "f32":
        return np.asarray(x, dtype=np.float32).view(np.uint32).astype(U64)
    if t == "f64":
        return np.asarray(x, dtype=np.float64).view(U64)
    if t == "f16":
        return np.asarray(x, dtype=np.float16).view(np.uint16).astype(U64)
    if t == "bf16":
        return (np.asarray(x, dtype=np.float32).view(np.uint32) >> np.uint32(16)).astype(U64)
    a = np.asarray(x)
    if a.dtype.kind == "f":
        a = np.nan_to_num(a).astype(np.int64)
    w = width(t)
    if w >= 64:
        return a.astype(np.int64).astype(U64) if a.dtype.kind in "ib" else a.astype(U64)
    return (a.astype(np.int64) & _mask(w)).astype(U64)


def imm_bits(text: str, t: str) -> Bits:
    """Bits of a literal as an operand of type ``t`` (``0f``/``0d`` literals are bit patterns)."""
    neg = text.startswith("-")
    body = text[1:] if neg else text
    if body[:2] in ("0f", "0F", "0d", "0D"):
        raw = int(body[2:], 16)
        if t in ("f32", "f64", "f16", "bf16"):
            fmt = ">f" if body[1] in "fF" else ">d"
            size = 4 if fmt == ">f" else 8
            v = struct.unpack(fmt, raw.to_bytes(size, "big"))[0]
            return to_bits(-v if neg else v, t)
        return to_bits(raw, t)
    v = Imm(text).value
    if isinstance(v, float) and t not in ("f32", "f64", "f16", "bf16"):
        v = int(v)
    return to_bits(v, t)


# ------------------------------------------------------------------------------------------ operands

Fetch = Callable[[Rows], "tuple[Bits | None, int | None, bool]"]


def _fetcher(op: object, t: str, symbols: dict[str, int]) -> Fetch:
    """Closure giving (bits, base tag, tainted) of a source operand read as type ``t``."""
    if isinstance(op, Reg):
        name = op.name

        def reg(g: Rows) -> tuple[Bits | None, int | None, bool]:
            return g.regs.get(name), g.ptr.get(name), name in g.tainted

        return reg
    if isinstance(op, Imm):
        bits = imm_bits(op.text, t)
        return lambda g: (bits, None, False)
    if isinstance(op, Sym) and op.name == "WARP_SZ":  # the predefined warp-size constant
        warp = to_bits(32, t)
        return lambda g: (warp, None, False)
    if isinstance(op, Sym) and op.name in symbols:
        tag = symbols[op.name]
        base = np.asarray(fake_base(tag), dtype=U64)
        return lambda g: (base, tag, False)
    return lambda g: (None, None, False)


def fake_base(tag: int) -> int:
    """A distinct, aligned, non-zero address for pointer base ``tag`` (parameters and symbols)."""
    return ((tag if tag >= 0 else maybe_null(tag)) + 1) << 40


def maybe_null(tag: int) -> int:
    """The tag of a pointer that may be null (a pointer argument not given), and back: a pointer with such a
    tag is only compared with pointers of the same tag; one with a plain tag (a symbol, a buffer) is also
    known to differ from 0."""
    return -tag - 2


def _dest_names(op: object) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Pair):
        return [op.first.name, op.second.name]
    if isinstance(op, Vec):
        return [o.name for o in op.items if isinstance(o, Reg)]
    return []


def _guarded(ins: Instruction, names: list[str], step: Step) -> Step:
    """Wrap a step so that its guard predicate picks, per row, between the new and the old values."""
    if ins.guard is None or not names:
        return step
    guard, negated = ins.guard.name, ins.guard_negated

    def run(g: Rows) -> None:
        p = g.regs.get(guard)
        cond = None if p is None else (p == 0 if negated else p != 0)
        p_tainted = guard in g.tainted
        if cond is not None and not np.any(cond):
            for n in names:
                if p_tainted:
                    g.tainted.add(n)
            return
        old = {n: (g.regs.get(n), g.ptr.get(n), n in g.tainted) for n in names}
        step(g)
        for n in names:
            (ob, otag, otaint), new, ntag = old[n], g.regs.get(n), g.ptr.get(n)
            tainted = p_tainted or otaint or n in g.tainted
            if cond is None:
                g.put(n, None, None, tainted)
            elif not np.all(cond):
                merged = None if new is None or ob is None else np.where(cond, new, ob)
                g.put(n, merged, ntag if ntag == otag else MIXED, tainted)
            elif p_tainted:
                g.tainted.add(n)

    return run


def _data(ins: Instruction) -> Step:
    """Every register the instruction writes becomes data."""
    names, _ = defs_uses(ins)

    def run(g: Rows) -> None:
        for n in names:
            g.put(n, None, None, False)

    return run


# ---------------------------------------------------------------------------------------- semantics

FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})
_CMP: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}


def compare(cmp: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """``setp`` comparison of typed values (unordered float forms are true when either side is NaN)."""
    if t not in FLOAT_TYPES:
        return _CMP[cmp](a, b)
    nan = np.isnan(a) | np.isnan(b)
    if cmp == "num":
        return ~nan
    if cmp == "nan":
        return nan
    if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
        return _CMP[cmp[:-1]](a, b) | nan
    return _CMP[cmp](a, b) & ~nan


def _shift(a: np.ndarray, s: np.ndarray, left: bool, t: str) -> np.ndarray:
    """PTX shifts: amounts past the width give 0 (or the sign for ``shr.s``)."""
    s = np.minimum(np.asarray(s).astype(np.int64) & 0xFFFFFFFF, 64)
    if a.dtype == U64:
        r = (a << np.minimum(s, 63).astype(U64)) if left else (a >> np.minimum(s, 63).astype(U64))
        return np.where(s >= 64, U64(0), r)
    if left:
        return np.where(s >= width(t), 0, a << np.minimum(s, 63))
    return a >> np.minimum(s, 63)  # arithmetic on sign-extended values, logical on zero-extended ones


def _int_div(a: np.ndarray, b: np.ndarray, rem: bool) -> np.ndarray:
    """C-style truncating division and remainder (division by zero gives 0: the result is undefined)."""
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    q = a // safe if a.dtype == U64 else np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
    return a - q * safe if rem else q


def _arith(opcode: str, t: str, hi: bool, vals: list[np.ndarray]) -> np.ndarray | None:
    """Result of an arithmetic or logic opcode on typed operand values (None when not modelled)."""
    isf = t in FLOAT_TYPES
    if opcode == "add":
        return vals[0] + vals[1]
    if opcode == "sub":
        return vals[0] - vals[1]
    if opcode in ("mul", "mad", "mul24", "mad24"):
        r = vals[0] * vals[1]
        if hi:
            r = r >> (16 if opcode.endswith("24") else width(t))
        return r + vals[2] if opcode.startswith("mad") else r
    if opcode == "fma":
        return vals[0] * vals[1] + vals[2]
    if opcode == "div":
        return vals[0] / vals[1] if isf else _int_div(vals[0], vals[1], False)
    if opcode == "rem":
        return _int_div(vals[0], vals[1], True)
    if opcode in ("min", "max"):
        if isf:
            return (np.fmin if opcode == "min" else np.fmax)(vals[0], vals[1])
        return (np.minimum if opcode == "min" else np.maximum)(vals[0], vals[1])
    unary = {"abs": np.abs, "neg": np.negative, "not": np.invert, "sqrt": np.sqrt}
    if opcode in unary:
        return unary[opcode](vals[0])
    if opcode in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[opcode](vals[0], vals[1])
    if opcode == "cnot":
        return (vals[0] == 0).astype(vals[0].dtype)
    if opcode in ("shl", "shr"):
        return _shift(vals[0], vals[1], opcode == "shl", t)
    if opcode == "popc":
        return np.bitwise_count(vals[0].astype(U64) & U64(_mask(width(t))))
    if opcode == "rcp":
        return 1.0 / vals[0]
    if opcode == "copysign":
        return np.copysign(vals[1], vals[0])
    return None


def _wide_type(t: str) -> str:
    return {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}.get(t, t)


def _compile_arith(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    op = info.opcode
    t = info.dtype
    dest = ins.operands[0]
    if not isinstance(dest, Reg) or not t or (op in ("mul", "mad") and width(t) >= 64 and "hi" in info.other):
        return _data(ins)
    wide = "wide" in info.other
    dest_t = _wide_type(t) if wide else t
    n_src = len(ins.operands) - 1
    types = [t] * n_src
    if op in ("shl", "shr"):
        types[1] = "u32"
    elif op in ("mad", "mad24") and wide:
        types[2] = dest_t
    srcs = [_fetcher(o, ts, symbols) for o, ts in zip(ins.operands[1:], types, strict=True)]
    name = dest.name
    tag_rule = {"add": "add", "sub": "sub", "mad": "mad"}.get(op, "mix")
    hi = "hi" in info.other
    integer = t not in FLOAT_TYPES and t != "pred"

    def run(g: Rows) -> None:
        got = [f(g) for f in srcs]
        tainted = any(x[2] for x in got)
        tag = _combine_tags(tag_rule, [x[1] for x in got])
        if any(x[0] is None for x in got):
            g.put(name, None, tag, tainted)
            return
        vals = [read(x[0], ts) for x, ts in zip(got, types, strict=True)]
        if integer and ((hi and t[0] == "u") or any(v.dtype == U64 for v in vals)):
            vals = [v.astype(U64) for v in vals]
        with np.errstate(all="ignore"):
            r = _arith(op, t, hi, vals)
        g.put(name, None if r is None else to_bits(r, dest_t), tag, tainted)

    return run


def _combine_tags(rule: str, tags: list[int | None]) -> int | None:
    """Base tag of a result from the tags of its sources (pointer arithmetic stays exact only for +/-)."""
    present = [t for t in tags if t is not None]
    if not present:
        return None
    if rule == "add" and len(present) == 1:
        return present[0]
    if rule == "sub" and tags[1] is None:
        return tags[0]
    if rule == "sub" and tags[0] == tags[1] and tags[0] != MIXED:
        return None
    if rule == "mad" and tags[0] is None and tags[1] is None:
        return tags[2]
    return MIXED


def _compile_setp(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``setp`` (with ``.and``/``.or``/``.xor`` and ``%p|%q`` destinations) and ``set``."""
    ops = ins.operands
    is_set = info.opcode == "set"
    out_t = info.types[0] if is_set else "pred"
    src_t = info.types[1] if is_set else info.dtype
    a, b = _fetcher(ops[1], src_t, symbols), _fetcher(ops[2], src_t, symbols)
    combine = next((o for o in info.other if o in ("and", "or", "xor")), None)
    c_op = ops[3] if len(ops) > 3 else None
    c_negated = isinstance(c_op, Neg)
    c = _fetcher(c_op.reg if isinstance(c_op, Neg) else c_op, "pred", symbols) if c_op is not None else None
    names = _dest_names(ops[0])
    cmp = info.cmp
    logic = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}

    def run(g: Rows) -> None:
        (ab, at, ata), (bb, bt, bta) = a(g), b(g)
        tainted = ata or bta
        r = None
        if ab is not None and bb is not None and ((at == bt and at != MIXED) or _null_test(cmp, ab, at, bb, bt)):
            r = compare(cmp, read(ab, src_t), read(bb, src_t), src_t)
        cv = None
        if c is not None:
            cb, _, cta = c(g)
            tainted = tainted or cta
            cv = None if cb is None else (cb == 0 if c_negated else cb != 0)
        for n, v in zip(names, (r, None if r is None else ~r), strict=False):
            if combine is not None:
                v = None if v is None or cv is None else logic[combine](v, cv)
            if v is not None and is_set:
                v = np.where(v, 1.0, 0.0) if out_t in FLOAT_TYPES else np.where(v, -1, 0)
            g.put(n, None if v is None else to_bits(v, out_t), None, tainted)

    return run


def _null_test(cmp: str, ab: Bits, at: int | None, bb: Bits, bt: int | None) -> bool:
    """Whether a comparison is a null test of a pointer known to be non-null (a symbol or a buffer)."""
    if cmp not in ("eq", "ne"):
        return False
    return (at is not None and at >= 0 and bt is None and not np.any(bb)) or (
        bt is not None and bt >= 0 and at is None and not np.any(ab))


def _compile_selp(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``selp d, a, b, p`` and ``slct d, a, b, c`` (``c >= 0`` picks ``a``)."""
    t = info.dtype
    ops = ins.operands
    fa, fb = _fetcher(ops[1], t, symbols), _fetcher(ops[2], t, symbols)
    slct = info.opcode == "slct"
    ct = info.types[-1] if slct else "pred"
    fc = _fetcher(ops[3], ct, symbols)
    name = ops[0].name if isinstance(ops[0], Reg) else ""

    def run(g: Rows) -> None:
        (ab, at, ata), (bb, bt, bta), (cb, _, cta) = fa(g), fb(g), fc(g)
        tainted = ata or bta or cta
        tag = at if at == bt else MIXED
        if ab is None or bb is None or cb is None:
            g.put(name, None, tag, tainted)
            return
        p = read(cb, ct) >= 0 if slct else cb != 0
        g.put(name, np.where(p, ab, bb), tag, tainted)

    return run


def _compile_mov(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``mov``/``cvta``: a register, literal or symbol address, or a vector pack/unpack."""
    t = info.dtype or "b64"
    dest, src = ins.operands[0], ins.operands[1]
    if isinstance(dest, Vec) or isinstance(src, Vec):
        return _compile_pack(ins, t, symbols)
    f = _fetcher(src, t, symbols)
    name = dest.name if isinstance(dest, Reg) else ""
    mask = U64(_mask(width(t))) if width(t) < 64 else None

    def run(g: Rows) -> None:
        bits, tag, tainted = f(g)
        if bits is not None and mask is not None:
            bits = bits & mask
        g.put(name, bits, tag, tainted)

    return run


def _compile_pack(ins: Instruction, t: str, symbols: dict[str, int]) -> Step:
    dest, src = ins.operands[0], ins.operands[1]
    if isinstance(dest, Reg) and isinstance(src, Vec):  # pack {lo, hi} -> wide
        part = width(t) // len(src.items)
        parts = [_fetcher(o, f"b{part}", symbols) for o in src.items]

        def pack(g: Rows) -> None:
            got = [p(g) for p in parts]
            tainted = any(x[2] for x in got)
            if any(x[0] is None or x[1] is not None for x in got):
                g.put(dest.name, None, None, tainted)
                return
            acc = np.asarray(U64(0))
            for i, x in enumerate(got):
                acc = acc | ((x[0] & U64(_mask(part))) << U64(i * part))
            g.put(dest.name, acc, None, tainted)

        return pack
    if isinstance(dest, Vec) and isinstance(src, Reg):  # unpack wide -> {lo, hi}
        part = width(t) // len(dest.items)
        names = [o.name if isinstance(o, Reg) else "" for o in dest.items]

        def unpack(g: Rows) -> None:
            bits, tag, tainted = g.regs.get(src.name), g.ptr.get(src.name), src.name in g.tainted
            for i, n in enumerate(names):
                if n:
                    v = None if bits is None or tag is not None else (bits >> U64(i * part)) & U64(_mask(part))
                    g.put(n, v, None, tainted)

        return unpack
    return _data(ins)


def _compile_cvt(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """Integer/float conversions with PTX rounding (float to int saturates, NaN gives 0)."""
    if len(info.types) < 2:
        return _data(ins)
    dt, st = info.types[0], info.types[1]
    f = _fetcher(ins.operands[1], st, symbols)
    name = ins.operands[0].name if isinstance(ins.operands[0], Reg) else ""
    rounding = {"rni": np.rint, "rmi": np.floor, "rpi": np.ceil}.get(info.rounding, np.trunc)
    sat = "sat" in info.other
    to_int = dt not in FLOAT_TYPES

    def run(g: Rows) -> None:
        bits, tag, tainted = f(g)
        if bits is None:
            g.put(name, None, None, tainted)
            return
        v = read(bits, st)
        with np.errstate(all="ignore"):
            if to_int and (v.dtype.kind == "f" or sat):
                lo, hi = _int_range(dt)
                v = np.clip(np.nan_to_num(rounding(v)) if v.dtype.kind == "f" else v, lo, hi)
        keep = tag if width(dt) == 64 and width(st) == 64 else (MIXED if tag is not None else None)
        g.put(name, to_bits(v, dt), keep, tainted)

    return run


def _int_range(t: str) -> tuple[int, int]:
    w = width(t)
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


def _compile_bfe(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """Bit-field extract (sign-extended for ``.s`` types)."""
    t = info.dtype
    fa, fb, fc = (_fetcher(o, ts, symbols) for o, ts in zip(ins.operands[1:], (t, "u32", "u32"), strict=True))
    name = ins.operands[0].name
    w = width(t)

    def run(g: Rows) -> None:
        got = [fa(g), fb(g), fc(g)]
        tainted = any(x[2] for x in got)
        if any(x[0] is None or x[1] is not None for x in got):
            g.put(name, None, None, tainted)
            return
        a = got[0][0] & U64(_mask(w))
        pos = np.minimum(got[1][0] & U64(0xFF), U64(w))
        ln = np.minimum(got[2][0] & U64(0xFF), U64(w))
        ones = np.where(ln >= U64(64), ~U64(0), (U64(1) << np.minimum(ln, U64(63))) - U64(1))
        out = (a >> np.minimum(pos, U64(63))) & ones
        if t[0] == "s":
            top = np.where(pos + ln > U64(0), np.minimum(pos + ln, U64(w)) - U64(1), U64(0))
            negative = (ln > U64(0)) & (((a >> top) & U64(1)) == U64(1))
            out = np.where(negative, out | ~ones, out)
        g.put(name, to_bits(out, t), None, tainted)

    return run


def _compile_ld_param(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``ld.param`` from a named parameter (kernel argument, call argument or returned value)."""
    addr = ins.operands[1]
    if not isinstance(addr, Addr) or not isinstance(addr.base, Sym):
        return _data(ins)
    size = max(1, width(info.dtype) // 8)
    names = _dest_names(ins.operands[0])
    keys = [(addr.base.name, addr.offset + i * size) for i in range(len(names))]
    t = info.dtype

    def run(g: Rows) -> None:
        for n, key in zip(names, keys, strict=True):
            bits, nbytes, tag, tainted = g.params.get(key, (None, 0, None, False))
            if bits is not None and nbytes != size:
                bits = tag = None
            if bits is not None and width(t) < 64:  # a narrow load extends into a wide register by its type
                bits = to_bits(read(bits, t), "s64" if t[0] == "s" else t)
            g.put(n, bits, tag, tainted)

    return run


def _compile_st_param(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``st.param`` to a named parameter (call arguments and returned values)."""
    addr, src = ins.operands[0], ins.operands[1]
    if not isinstance(addr, Addr) or not isinstance(addr.base, Sym):
        return lambda g: None
    size = max(1, width(info.dtype) // 8)
    items = src.items if isinstance(src, Vec) else (src,)
    fetch = [(addr.base.name, addr.offset + i * size, _fetcher(o, info.dtype, symbols))
             for i, o in enumerate(items)]

    def run(g: Rows) -> None:
        for sym, off, f in fetch:
            bits, tag, tainted = f(g)
            g.params[(sym, off)] = (bits, size, tag, tainted or g.shadowed)

    return run


_COMPILERS: dict[str, Callable[[Instruction, OpInfo, dict[str, int]], Step]] = {
    **dict.fromkeys(("add", "sub", "mul", "mad", "mul24", "mad24", "fma", "div", "rem", "min", "max", "abs",
                     "neg", "and", "or", "xor", "not", "cnot", "shl", "shr", "popc", "sqrt", "rcp",
                     "copysign"), _compile_arith),
    "setp": _compile_setp, "set": _compile_setp,
    "selp": _compile_selp, "slct": _compile_selp,
    "mov": _compile_mov, "cvta": _compile_mov,
    "cvt": _compile_cvt,
    "bfe": _compile_bfe,
}
_PARAM_COMPILERS = {"ld": _compile_ld_param, "st": _compile_st_param}


def compile_instruction(ins: Instruction, symbols: dict[str, int]) -> Step:
    """A closure that applies ``ins`` to a :class:`Rows` (guards included; unmodelled opcodes give data).

    ``symbols`` maps every addressable symbol (parameters, variables, functions) to its base tag.
    Parameter-space loads and stores, calls and branches are handled by the interpreter, not here.
    """
    info = ins.info
    make = _PARAM_COMPILERS.get(info.opcode) if info.space == "param" else _COMPILERS.get(info.opcode)
    if make is None:
        step = _data(ins)
    else:
        try:
            step = make(ins, info, symbols)
        except (AttributeError, IndexError, ValueError, KeyError, TypeError):
            step = _data(ins)
    names, _ = defs_uses(ins)
    return _guarded(ins, names, step)
