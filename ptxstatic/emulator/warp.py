"""Warp-level instructions over the lanes active on the current path of a lockstep warp.

``activemask``, ``vote``, ``shfl``, ``redux``, ``match`` and ``elect`` see exactly the lanes of the warp that
execute the instruction together (intersected with the member mask), which is what CUDA guarantees for
converged code. A shuffle from a lane that is not active reads that lane's register as it stands.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands
from ptxstatic.emulator.faults import EmulationError
from ptxstatic.emulator.lanes import LANES, lanes
from ptxstatic.ptx.ast import Pair
from ptxstatic.ptx.dtypes import np_type
from ptxstatic.ptx.isa import OpInfo

_LANE_BITS = LANES.astype(np.uint32)


def ballot(v: np.ndarray) -> np.uint32:
    """The 32 lane flags as a bit mask (lane 0 in bit 0)."""
    return np.packbits(v, bitorder="little").view(np.uint32)[0]


def _members(ops: Operands, i: int) -> Callable[..., np.ndarray]:
    """Lanes named by the member-mask operand ``i`` (all lanes when the instruction has none)."""
    if i >= len(ops):
        return lambda f, m: m
    read = ops.read(i, "b32")

    def members(f, m):
        mask = lanes(read(f))[int(np.argmax(m))]
        return m & ((mask >> _LANE_BITS) & np.uint32(1)).astype(bool)

    return members


def _activemask(ops: Operands, info: OpInfo) -> Op:
    dest = ops.write(0, "b32")
    return lambda f, m: dest(f, ballot(m), m)


def _vote(ops: Operands, info: OpInfo) -> Op:
    mode = next(o for o in info.other if o in ("all", "any", "uni", "ballot"))
    a = ops.pred(1)
    members = _members(ops, 2)
    dest = ops.write(0, "b32" if mode == "ballot" else "pred")

    def run(f, m):
        act = members(f, m)
        v = lanes(a(f)) & act
        if mode == "ballot":
            dest(f, ballot(v), m)
        elif mode == "all":
            dest(f, np.bool_(not (act & ~v).any()), m)
        elif mode == "any":
            dest(f, np.bool_(v.any()), m)
        else:
            dest(f, np.bool_(not v.any() or np.array_equal(v, act)), m)

    return run


def _shfl(ops: Operands, info: OpInfo) -> Op:
    mode = next(o for o in info.other if o in ("up", "down", "bfly", "idx"))
    dst = ops.items[0]
    value = ops.writer(dst.first if isinstance(dst, Pair) else dst, "b32")
    flag = ops.writer(dst.second, "pred") if isinstance(dst, Pair) else None
    a, b, c = ops.read(1, "b32"), ops.read(2, "b32"), ops.read(3, "b32")
    lane = LANES.astype(np.int64)

    def run(f, m):
        bval = lanes(b(f)).astype(np.int64) & 31
        cv = lanes(c(f)).astype(np.int64)
        seg = (cv >> 8) & 31
        max_lane = (lane & seg) | (cv & 31 & ~seg)
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = (lane & seg) | (bval & ~seg)
            ok = j <= max_lane
        src = np.where(ok, j, lane)
        value(f, lanes(a(f))[src], m)
        if flag is not None:
            flag(f, ok, m)

    return run


def _redux(ops: Operands, info: OpInfo) -> Op:
    op = next(o for o in info.other if o in ("add", "min", "max", "and", "or", "xor"))
    ty = info.dtype
    dt = np_type(ty)
    a = ops.read(1, ty)
    members = _members(ops, 2)
    dest = ops.write(0, ty)
    if dt.kind == "f":
        reduce = {"min": np.fmin, "max": np.fmax}.get(op) if "NaN" not in info.other else \
            {"min": np.minimum, "max": np.maximum}.get(op)
        if reduce is None or "abs" in info.other:
            raise EmulationError(f"redux.{op} on .{ty} with {'.'.join(info.other)} is not supported")
    else:
        reduce = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
                  "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def run(f, m):
        vals = lanes(a(f))[members(f, m)]
        if vals.size:
            dest(f, reduce.reduce(vals.astype(dt), dtype=dt), m)

    return run


def _match(ops: Operands, info: OpInfo) -> Op:
    ty = info.dtype
    mode = "all" if "all" in info.other else "any"
    dst = ops.items[0]
    value = ops.writer(dst.first if isinstance(dst, Pair) else dst, "b32")
    flag = ops.writer(dst.second, "pred") if isinstance(dst, Pair) else None
    a = ops.read(1, ty)
    members = _members(ops, 2)

    def run(f, m):
        act = members(f, m)
        v = lanes(a(f))
        if mode == "any":
            same = (v[:, None] == v[None, :]) & act[None, :]
            value(f, np.packbits(same, axis=1, bitorder="little").view(np.uint32).reshape(-1), m)
            return
        uniform = bool((v[act] == v[act][0]).all()) if act.any() else True
        value(f, ballot(act) if uniform else np.uint32(0), m)
        if flag is not None:
            flag(f, np.bool_(uniform), m)

    return run


def _elect(ops: Operands, info: OpInfo) -> Op:
    dst = ops.items[0]
    if not isinstance(dst, Pair):
        raise EmulationError("elect.sync needs a destination pair d|p")
    leader_w, is_leader = ops.writer(dst.first, "b32"), ops.writer(dst.second, "pred")
    members = _members(ops, 1)

    def run(f, m):
        act = members(f, m)
        leader = int(np.argmax(act)) if act.any() else 0
        leader_w(f, np.uint32(leader), m)
        is_leader(f, act & (leader == LANES), m)

    return run


BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    "activemask": _activemask, "vote": _vote, "shfl": _shfl, "redux": _redux, "match": _match, "elect": _elect,
}
