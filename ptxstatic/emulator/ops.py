"""The emulator's arithmetic, logic, comparison, move and conversion instructions, over the lanes of a warp.

What each instruction computes is :mod:`ptxstatic.ptx.semantics`; a builder here binds it to the
instruction's operands and returns ``op(frame, mask)``, which reads the sources for the whole warp (numpy
arrays over the 32 lanes, or scalars for immediates) and writes the results for the lanes in ``mask``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands
from ptxstatic.emulator.lanes import WARP
from ptxstatic.emulator.memory import from_generic, in_window, to_generic
from ptxstatic.ptx import semantics
from ptxstatic.ptx.ast import Pair, Vec
from ptxstatic.ptx.dtypes import Unsupported, np_type, size_of
from ptxstatic.ptx.isa import OpInfo

Fn = Callable[..., np.ndarray]


def elementwise(ops: Operands, dst: str, srcs: list[str] | tuple[str, ...], fn: Fn, first: int = 1) -> Op:
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


def _value(ops: Operands, info: OpInfo) -> Op:
    op = semantics.value_op(info, len(ops) - 1)
    return elementwise(ops, op.dst, op.srcs, op.fn)


def _setp(ops: Operands, info: OpInfo) -> Op:
    """``setp`` with one or two (``p|q``) destinations, optionally combined with a predicate operand."""
    ty, combined, fn = semantics.setp(info)
    a, b = ops.read(1, ty), ops.read(2, ty)
    c = ops.pred(3) if combined else None
    dst = ops.items[0]
    pair = isinstance(dst, Pair)
    p = ops.writer(dst.first if pair else dst, "pred")  # type: ignore[union-attr]
    q = ops.writer(dst.second, "pred") if pair else None  # type: ignore[union-attr]

    def run(f, m):
        pv, qv = fn(a(f), b(f), c(f) if c is not None else None)
        p(f, pv, m)
        if q is not None:
            q(f, qv, m)

    return run


def _carry(ops: Operands, info: OpInfo) -> Op:
    """add.cc, addc, sub.cc, subc, mad.cc, madc: carry/borrow through the per-lane CC.CF flag."""
    uty, carry_in, carry_out, fn = semantics.carry(info)
    udt = np_type(uty)
    srcs = [ops.read(i, uty) for i in range(1, len(ops))]
    write = ops.write(0, uty)

    def run(f, m):
        vals = [np.broadcast_to(r(f), (WARP,)) for r in srcs]
        cf = f.regs.get("%cc", np.zeros(WARP, dtype=udt)).astype(udt) if carry_in else udt.type(0)
        out, flag = fn(*vals, cf)
        write(f, out, m)
        if carry_out:
            f.regs["%cc"] = np.where(m, flag.astype(udt), f.regs.get("%cc", np.zeros(WARP, dtype=udt)))

    return run


def _lop3(ops: Operands, info: OpInfo) -> Op:
    if len(ops) != 5:
        raise Unsupported("lop3 with a predicate result is not supported")
    lut = int(ops.items[4].value)  # type: ignore[union-attr]
    return elementwise(ops, "b32", ("b32", "b32", "b32"), semantics.lop3(lut))


def _mov(ops: Operands, info: OpInfo) -> Op:
    """``mov``: a value, or a vector of parts packed into (or unpacked from) one wide register."""
    ty = info.dtype
    dst, src = ops.items[0], ops.items[1]
    wide = f"b{8 * size_of(ty)}"
    if isinstance(dst, Vec):
        read = ops.read(1, wide)
        writers = [ops.writer(item, f"b{8 * size_of(ty) // len(dst.items)}") for item in dst.items]

        def unpack(f, m):
            for w, part in zip(writers, semantics.unpack(read(f), len(writers)), strict=True):
                w(f, part, m)

        return unpack
    if isinstance(src, Vec):
        readers = [ops.reader(item, f"b{8 * size_of(ty) // len(src.items)}") for item in src.items]
        write, dtype = ops.write(0, wide), np_type(wide)
        return lambda f, m: write(f, semantics.pack([r(f) for r in readers], dtype), m)
    return _value(ops, info)


def _cvta(ops: Operands, info: OpInfo) -> Op:
    space = info.space
    ty = info.dtype or "u64"
    convert = from_generic if "to" in info.other else to_generic
    return elementwise(ops, ty, ["u64"], lambda a: convert(space, np.asarray(a, dtype=np.uint64)))


def _isspacep(ops: Operands, info: OpInfo) -> Op:
    return elementwise(ops, "pred", ["u64"], lambda a: in_window(info.space, np.asarray(a, dtype=np.uint64)))


BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    **dict.fromkeys(semantics.ELEMENTWISE, _value),
    **dict.fromkeys(("add.cc", "addc", "sub.cc", "subc", "mad.cc", "madc"), _carry),
    "setp": _setp, "lop3": _lop3, "mov": _mov, "cvta": _cvta, "isspacep": _isspacep,
}
