"""Symbolic register values for the static block-count interpreter.

A :class:`Rows` holds the registers of many threads at once: every register is a numpy ``uint64`` array of
raw bits (one entry per row, or a 0-d array when all rows agree), or ``None`` when the value is *data*: it
came from memory, a warp exchange, a clock, or anything else a launch specification does not determine.
Pointers get a fake, distinct base address and a *base tag*; a comparison is only trusted when both sides
carry the same base (or none), so pointer loops are exact without knowing real addresses.

What an instruction computes is :mod:`ptxstatic.ptx.semantics`: operands are read from their bits as typed
values (:func:`~ptxstatic.ptx.dtypes.from_raw`), the semantics' function is applied and the result is stored
as bits again. This module adds only the symbolic part: data, pointer base tags and taint.
:func:`compile_instruction` turns one instruction into a closure that updates a :class:`Rows` in place.
Instructions it does not model write ``None`` to their destinations.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ptxstatic.analysis.registers import defs_uses
from ptxstatic.ptx import semantics
from ptxstatic.ptx.ast import Addr, Imm, Instruction, Neg, Pair, Reg, Sym, Vec
from ptxstatic.ptx.dtypes import U64, Unsupported, const, from_raw, is_signed, literal, np_type, to_raw
from ptxstatic.ptx.isa import OpInfo, bit_width

if TYPE_CHECKING:
    from ptxstatic.counts.static.memory import KnownMemory

MIXED = -1  #: base tag of a value that mixes a pointer with something else: never trusted in comparisons
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
    key: np.ndarray | None = None  # thread of each row within its CTA, when CTAs are compared (ctas.py)

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


def constant_bits(value: int | float, t: str) -> Bits:
    """Bits of a number as a value of type ``t`` (integers wrap to the type's width, floats convert)."""
    return to_raw(const(value, np_type(t)), t)


@functools.lru_cache(maxsize=4096)
def imm_bits(text: str, t: str) -> Bits:
    """Bits of a literal operand of type ``t`` (read-only: shared between the instructions that use it)."""
    bits = to_raw(literal(text, Imm(text).value, np_type(t)), t)
    bits.flags.writeable = False
    return bits


def extend(bits: Bits, t: str) -> Bits:
    """Bits of a ``t`` value widened to 64 bits by its type (sign-extended for signed types)."""
    v = from_raw(bits, t)
    return to_raw(v.astype(np.int64), "s64") if is_signed(t) else to_raw(v, t)


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
        warp = constant_bits(32, t)
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


# ------------------------------------------------------------------------------------- instructions

#: opcodes whose value the interpreter computes (through ptx.semantics); others give data
_VALUES = frozenset({
    "add", "sub", "mul", "mad", "mul24", "mad24", "fma", "div", "rem", "min", "max", "abs", "neg", "and", "or",
    "xor", "not", "cnot", "shl", "shr", "popc", "sqrt", "rcp", "copysign", "selp", "slct", "cvt", "bfe",
})


def _compile_value(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """An instruction of :data:`_VALUES`: the semantics' value of its operands, with the result's base tag."""
    dest = ins.operands[0]
    if not isinstance(dest, Reg) or not info.dtype:
        return _data(ins)
    op = semantics.value_op(info, len(ins.operands) - 1)
    srcs = [_fetcher(o, ts, symbols) for o, ts in zip(ins.operands[1:], op.srcs, strict=True)]
    name, fn, dst = dest.name, op.fn, op.dst
    opaque = info.opcode == "bfe"  # a field of a pointer is data

    def run(g: Rows) -> None:
        got = [f(g) for f in srcs]
        tainted = any(x[2] for x in got)
        tags = [x[1] for x in got]
        if opaque and any(x is not None for x in tags):
            g.put(name, None, None, tainted)
            return
        tag = _result_tag(info, tags)
        if any(x[0] is None for x in got):
            g.put(name, None, tag, tainted)
            return
        vals = [from_raw(x[0], ts) for x, ts in zip(got, op.srcs, strict=True)]
        g.put(name, to_raw(fn(*vals), dst), tag, tainted)

    return run


def _result_tag(info: OpInfo, tags: list[int | None]) -> int | None:
    """Base tag of a result from the tags of its sources (pointer arithmetic stays exact only for +/-)."""
    present = [t for t in tags if t is not None]
    if not present:
        return None
    op = info.opcode
    if op == "cvt":
        return tags[0] if bit_width(info.types[0]) == 64 and bit_width(info.types[1]) == 64 else MIXED
    if op in ("selp", "slct"):
        return tags[0] if tags[0] == tags[1] else MIXED
    if op == "add" and len(present) == 1:
        return present[0]
    if op == "sub" and tags[1] is None:
        return tags[0]
    if op == "sub" and tags[0] == tags[1] and tags[0] != MIXED:
        return None
    if op == "mad" and tags[0] is None and tags[1] is None:
        return tags[2]
    return MIXED


def _compile_setp(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``setp`` (with ``.and``/``.or``/``.xor`` and ``%p|%q`` destinations) and ``set``."""
    ops = ins.operands
    if info.opcode == "set":
        op = semantics.value_op(info, len(ops) - 1)
        src_t, combined, out_t = op.srcs[0], len(op.srcs) == 3, op.dst

        def compute(a: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> tuple[np.ndarray, ...]:
            return (op.fn(a, b, c) if combined else op.fn(a, b),)
    else:
        src_t, combined, compute = semantics.setp(info)
        out_t = "pred"
    a, b = _fetcher(ops[1], src_t, symbols), _fetcher(ops[2], src_t, symbols)
    c_op = ops[3] if combined else None
    c_negated = isinstance(c_op, Neg)
    c = _fetcher(c_op.reg if isinstance(c_op, Neg) else c_op, "pred", symbols) if c_op is not None else None
    names = _dest_names(ops[0])
    cmp = info.cmp

    def run(g: Rows) -> None:
        (ab, at, ata), (bb, bt, bta) = a(g), b(g)
        tainted = ata or bta
        cv = None
        if c is not None:
            cb, _, cta = c(g)
            tainted = tainted or cta
            cv = None if cb is None else (cb == 0 if c_negated else cb != 0)
        trusted = ab is not None and bb is not None and (
            (at == bt and at != MIXED) or _null_test(cmp, ab, at, bb, bt))
        if not trusted or (combined and cv is None):
            for n in names:
                g.put(n, None, None, tainted)
            return
        results = compute(from_raw(ab, src_t), from_raw(bb, src_t), cv)
        for n, v in zip(names, results, strict=False):
            g.put(n, to_raw(v, out_t), None, tainted)

    return run


Operands = Callable[[Rows], "tuple[np.ndarray, ...] | None"]


def operand_types(ins: Instruction) -> tuple[str, ...]:
    """The types a ``setp``/``set`` compares its two operands in, or a widening ``cvt`` or ``.wide`` multiply
    reads its sources in."""
    info = ins.info
    if info.opcode == "cvt":
        return (info.types[1],)
    t = info.types[-1] if info.opcode == "set" else info.dtype
    return (t, t)


def compile_operands(ins: Instruction, symbols: dict[str, int]) -> Operands:
    """For a ``setp``/``set``: a closure giving its two compared operands as typed values (numpy arrays of the
    type it compares in), or None where the comparison is on data (its result is data); for a ``cvt`` or a
    ``.wide`` multiply, its sources as it reads them (None where one is data)."""
    types = operand_types(ins)
    fetch = [_fetcher(o, t, symbols) for o, t in zip(ins.operands[1:], types, strict=False)]
    compare = ins.info.opcode in ("setp", "set")

    def operands(g: Rows) -> tuple[np.ndarray, ...] | None:
        got = [f(g) for f in fetch]
        if any(x[0] is None for x in got) or (compare and (got[0][1] != got[1][1] or got[0][1] == MIXED)):
            return None
        return tuple(from_raw(x[0], t) for x, t in zip(got, types, strict=True))

    return operands


def _null_test(cmp: str, ab: Bits, at: int | None, bb: Bits, bt: int | None) -> bool:
    """Whether a comparison is a null test of a pointer known to be non-null (a symbol or a buffer)."""
    if cmp not in ("eq", "ne"):
        return False
    return (at is not None and at >= 0 and bt is None and not np.any(bb)) or (
        bt is not None and bt >= 0 and at is None and not np.any(ab))


def _compile_mov(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``mov``/``cvta``: a register, literal or symbol address, or a vector pack/unpack."""
    t = info.dtype or "b64"
    dest, src = ins.operands[0], ins.operands[1]
    if isinstance(dest, Vec) or isinstance(src, Vec):
        return _compile_pack(ins, t, symbols)
    f = _fetcher(src, t, symbols)
    name = dest.name if isinstance(dest, Reg) else ""
    mask = U64((1 << bit_width(t)) - 1) if bit_width(t) < 64 else None

    def run(g: Rows) -> None:
        bits, tag, tainted = f(g)
        if bits is not None and mask is not None:
            bits = bits & mask
        g.put(name, bits, tag, tainted)

    return run


def _compile_pack(ins: Instruction, t: str, symbols: dict[str, int]) -> Step:
    """``mov`` of a vector: parts packed into one wide register, or one unpacked into parts."""
    dest, src = ins.operands[0], ins.operands[1]
    wide = f"b{bit_width(t)}"
    if isinstance(dest, Reg) and isinstance(src, Vec):
        part = f"b{bit_width(t) // len(src.items)}"
        parts, dtype = [_fetcher(o, part, symbols) for o in src.items], np_type(wide)

        def pack(g: Rows) -> None:
            got = [p(g) for p in parts]
            tainted = any(x[2] for x in got)
            if any(x[0] is None or x[1] is not None for x in got):
                g.put(dest.name, None, None, tainted)
                return
            g.put(dest.name, to_raw(semantics.pack([from_raw(x[0], part) for x in got], dtype), wide), None,
                  tainted)

        return pack
    if isinstance(dest, Vec) and isinstance(src, Reg):
        part = f"b{bit_width(t) // len(dest.items)}"
        np_type(part)  # Unsupported (the instruction gives data) for a part type without a numpy type
        names = [o.name if isinstance(o, Reg) else "" for o in dest.items]

        def unpack(g: Rows) -> None:
            bits, tag, tainted = g.regs.get(src.name), g.ptr.get(src.name), src.name in g.tainted
            values = None if bits is None or tag is not None else semantics.unpack(from_raw(bits, wide), len(names))
            for i, n in enumerate(names):
                if n:
                    g.put(n, None if values is None else to_raw(values[i], part), None, tainted)

        return unpack
    return _data(ins)


def _compile_ld_param(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``ld.param`` from a named parameter (kernel argument, call argument or returned value)."""
    addr = ins.operands[1]
    if not isinstance(addr, Addr) or not isinstance(addr.base, Sym):
        return _data(ins)
    t = info.dtype
    size = max(1, bit_width(t) // 8)
    names = _dest_names(ins.operands[0])
    keys = [(addr.base.name, addr.offset + i * size) for i in range(len(names))]
    narrow = bit_width(t) < 64
    if narrow:
        np_type(t)  # Unsupported (the load gives data) for a narrow type without a numpy type

    def run(g: Rows) -> None:
        for n, key in zip(names, keys, strict=True):
            bits, nbytes, tag, tainted = g.params.get(key, (None, 0, None, False))
            if bits is not None and nbytes != size:
                bits = tag = None
            if bits is not None and narrow:  # a narrow load extends into a wide register by its type
                bits = extend(bits, t)
            g.put(n, bits, tag, tainted)

    return run


def _compile_st_param(ins: Instruction, info: OpInfo, symbols: dict[str, int]) -> Step:
    """``st.param`` to a named parameter (call arguments and returned values)."""
    addr, src = ins.operands[0], ins.operands[1]
    if not isinstance(addr, Addr) or not isinstance(addr.base, Sym):
        return lambda g: None
    size = max(1, bit_width(info.dtype) // 8)
    items = src.items if isinstance(src, Vec) else (src,)
    fetch = [(addr.base.name, addr.offset + i * size, _fetcher(o, info.dtype, symbols))
             for i, o in enumerate(items)]

    def run(g: Rows) -> None:
        for sym, off, f in fetch:
            bits, tag, tainted = f(g)
            g.params[(sym, off)] = (bits, size, tag, tainted or g.shadowed)

    return run


def _compile_load(ins: Instruction, info: OpInfo, symbols: dict[str, int], memory: KnownMemory) -> Step:
    """``ld``/``ldu`` of global, const or generic memory: the values where the address is in known memory
    (:mod:`ptxstatic.counts.static.memory`), data elsewhere."""
    addr, dest = ins.operands[1], ins.operands[0]
    items = dest.items if isinstance(dest, Vec) else (dest,)
    t = info.dtype
    if not isinstance(addr, Addr) or not t or not isinstance(addr.base, (Reg, Sym)):
        return _data(ins)
    width = max(1, bit_width(t) // 8)
    narrow = bit_width(t) < 64
    if narrow:
        np_type(t)  # Unsupported (the load gives data) for a narrow type without a numpy type
    names = [(j, o.name) for j, o in enumerate(items) if isinstance(o, Reg)]
    base, offset = addr.base, addr.offset
    fixed_tag = symbols.get(base.name) if isinstance(base, Sym) else None
    fixed = np.asarray(U64(fake_base(fixed_tag))) if fixed_tag is not None else None

    def run(g: Rows) -> None:
        if isinstance(base, Reg):
            bits, tag, tainted = g.regs.get(base.name), g.ptr.get(base.name), base.name in g.tainted
        else:
            bits, tag, tainted = fixed, fixed_tag, False
        known = bits is not None and tag is not None and tag in memory
        if known:
            at = (bits - U64(fake_base(tag))).astype(np.int64) + offset  # type: ignore[operator,arg-type]
        for j, name in names:
            value = memory.read(tag, at + j * width, width) if known else None  # type: ignore[arg-type]
            if value is not None and narrow:  # a narrow load extends into a wide register by its type
                value = extend(value, t)
            g.put(name, value, None, tainted)

    return run


_COMPILERS: dict[str, Callable[[Instruction, OpInfo, dict[str, int]], Step]] = {
    **dict.fromkeys(_VALUES, _compile_value),
    "setp": _compile_setp, "set": _compile_setp,
    "mov": _compile_mov, "cvta": _compile_mov,
}
_PARAM_COMPILERS = {"ld": _compile_ld_param, "st": _compile_st_param}


def compile_instruction(ins: Instruction, symbols: dict[str, int], memory: KnownMemory | None = None) -> Step:
    """A closure that applies ``ins`` to a :class:`Rows` (guards included; unmodelled opcodes give data).

    ``symbols`` maps every addressable symbol (parameters, variables, functions) to its base tag; ``memory``,
    for a load that may read known memory: what it reads (without: a load gives data). Calls and branches are
    handled by the interpreter, not here.
    """
    info = ins.info
    make = _PARAM_COMPILERS.get(info.opcode) if info.space == "param" else _COMPILERS.get(info.opcode)
    if memory is not None and info.opcode in ("ld", "ldu") and info.space not in ("param", "shared", "local"):
        make = functools.partial(_compile_load, memory=memory)
    if make is None:
        step = _data(ins)
    else:
        try:
            step = make(ins, info, symbols)
        except (Unsupported, AttributeError, IndexError, ValueError, KeyError, TypeError):
            step = _data(ins)
    names, _ = defs_uses(ins)
    return _guarded(ins, names, step)
