"""Logic and bit-field instructions: bitwise operations, shifts, funnel shifts, ``lop3``, bit counts,
``brev``, ``bfe``/``bfi`` and ``prmt``, each vectorised over the warp with the widths of the PTX ISA."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands
from ptxstatic.emulator.ops import elementwise, lanes
from ptxstatic.emulator.types import UINT, WARP, EmulationError, as_uint, is_signed, np_type
from ptxstatic.ptx.isa import OpInfo


def _int_info(info: OpInfo) -> tuple[str, np.dtype, int]:
    ty = info.dtype
    dt = np_type(ty)
    return ty, dt, 8 * dt.itemsize


def _bitwise(ops: Operands, info: OpInfo) -> Op:
    name, ty = info.opcode, info.dtype
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.get(name)
    if fn is not None:
        return elementwise(ops, ty, [ty, ty], fn)
    if name == "not":
        return elementwise(ops, ty, [ty], np.invert)
    return elementwise(ops, ty, [ty], lambda a: (a == 0).astype(np_type(ty)))  # cnot


def _shift(ops: Operands, info: OpInfo) -> Op:
    ty, dt, bits = _int_info(info)
    if info.opcode == "shl" or not is_signed(ty):
        ty = "b" + ty[1:] if ty[0] == "s" else ty
        dt = np_type(ty)
    left = info.opcode == "shl"
    arith = dt.kind == "i"

    def fn(a: np.ndarray, n: np.ndarray) -> np.ndarray:
        k = np.minimum(n, np.uint32(bits - 1)).astype(dt)
        if arith:
            return a >> k
        r = a << k if left else a >> k
        return np.where(n >= bits, dt.type(0), r)

    return elementwise(ops, ty, [ty, "u32"], fn)


def _shf(ops: Operands, info: OpInfo) -> Op:
    left, clamp = "l" in info.other, "clamp" in info.other

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        n = np.minimum(c, np.uint32(32)) if clamp else c & np.uint32(31)
        joined = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        n64 = np.asarray(n).astype(np.uint64)
        out = (joined << n64) >> np.uint64(32) if left else joined >> n64
        return np.where(n64 >= 64, np.uint64(0), out).astype(np.uint32)

    return elementwise(ops, "b32", ["b32", "b32", "u32"], fn)


def _lop3(ops: Operands, info: OpInfo) -> Op:
    if len(ops) != 5:
        raise EmulationError("lop3 with a predicate result is not supported")
    lut = int(ops.items[4].value)  # type: ignore[union-attr]

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        out = np.zeros(WARP, dtype=np.uint32)
        for i in range(8):
            if lut >> i & 1:
                out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
        return out

    return elementwise(ops, "b32", ["b32", "b32", "b32"], fn)


def bit_length(x: np.ndarray) -> np.ndarray:
    """Number of significant bits of unsigned values (0 for 0), as uint32."""
    x = as_uint(np.asarray(x)).copy()
    s = 1
    while s < 8 * x.dtype.itemsize:
        x |= x >> x.dtype.type(s)
        s *= 2
    return np.bitwise_count(x).astype(np.uint32)


def _count(ops: Operands, info: OpInfo) -> Op:
    ty, _, bits = _int_info(info)
    if info.opcode == "popc":
        return elementwise(ops, "u32", [ty], lambda a: np.bitwise_count(as_uint(np.asarray(a))).astype(np.uint32))
    if info.opcode == "clz":
        return elementwise(ops, "u32", [ty], lambda a: np.uint32(bits) - bit_length(a))
    shiftamt = "shiftamt" in info.other

    def bfind(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        v = np.where(a < 0, ~a, a) if is_signed(ty) else a
        n = bit_length(v)
        pos = n - np.uint32(1)
        if shiftamt:
            pos = np.uint32(bits - 1) - pos
        return np.where(n == 0, np.uint32(0xFFFFFFFF), pos).astype(np.uint32)

    return elementwise(ops, "u32", [ty], bfind)


_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def _brev(ops: Operands, info: OpInfo) -> Op:
    ty, dt, _ = _int_info(info)

    def fn(a: np.ndarray) -> np.ndarray:
        raw = np.ascontiguousarray(lanes(as_uint(np.asarray(a)))).view(np.uint8).reshape(WARP, dt.itemsize)
        return np.ascontiguousarray(_REVERSED_BYTES[raw][:, ::-1]).view(dt).reshape(WARP)

    return elementwise(ops, ty, [ty], fn)


def _bfe(ops: Operands, info: OpInfo) -> Op:
    ty, dt, bits = _int_info(info)
    udt = UINT[dt.itemsize]

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        a = lanes(as_uint(np.asarray(a)))
        pos = lanes(b & np.uint32(0xFF)).astype(np.int64)
        length = lanes(c & np.uint32(0xFF)).astype(np.int64)
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
        return np.where(length == 0, udt.type(0), out).view(dt)

    return elementwise(ops, ty, [ty, "u32", "u32"], fn)


def _bfi(ops: Operands, info: OpInfo) -> Op:
    ty, dt, bits = _int_info(info)

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        a, b = lanes(as_uint(np.asarray(a))), lanes(as_uint(np.asarray(b)))
        pos = lanes(c & np.uint32(0xFF)).astype(np.int64)
        length = np.minimum(lanes(d & np.uint32(0xFF)).astype(np.int64), bits)
        ones = (np.where(length >= bits, ~dt.type(0), (dt.type(1) << np.minimum(length, bits - 1).astype(dt)) - 1)
                .astype(dt))
        shift = np.minimum(pos, bits - 1).astype(dt)
        mask = np.where(pos >= bits, dt.type(0), ones << shift)
        return np.where(pos >= bits, b, (b & ~mask) | ((a << shift) & mask)).astype(dt)

    return elementwise(ops, ty, [ty, ty, "u32", "u32"], fn)


_PRMT_MODES = {
    "f4e": lambda s, i: (s + i) & 7, "b4e": lambda s, i: (s - i) & 7, "rc8": lambda s, i: s,
    "ecl": lambda s, i: np.maximum(s, i), "ecr": lambda s, i: np.minimum(s, i),
    "rc16": lambda s, i: 2 * (s & 1) + (i & 1),
}


def _prmt(ops: Operands, info: OpInfo) -> Op:
    mode = next((o for o in info.other if o in _PRMT_MODES), "")

    def fn(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        pool = np.stack([lanes(a), lanes(b)], axis=1).astype(np.uint32).view(np.uint8).reshape(WARP, 8)
        c = lanes(c).astype(np.int64)
        out = np.zeros((WARP, 4), dtype=np.uint8)
        rows = np.arange(WARP)
        for i in range(4):
            if mode:
                sel = _PRMT_MODES[mode](c & 3, i)
                out[:, i] = pool[rows, sel]
            else:
                nib = (c >> (4 * i)) & 0xF
                byte = pool[rows, nib & 7]
                out[:, i] = np.where(nib & 8, np.where(byte & 0x80, 0xFF, 0), byte)
        return out.view(np.uint32).reshape(WARP)

    return elementwise(ops, "b32", ["b32", "b32", "b32"], fn)


BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    "and": _bitwise, "or": _bitwise, "xor": _bitwise, "not": _bitwise, "cnot": _bitwise,
    "shl": _shift, "shr": _shift, "shf": _shf, "lop3": _lop3, "popc": _count, "clz": _count, "bfind": _count,
    "brev": _brev, "bfe": _bfe, "bfi": _bfi, "prmt": _prmt,
}
