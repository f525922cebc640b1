"""Run-time state of the emulator (CTAs, warps, call frames) and vectorised byte access to every state space."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ptxstatic.emulator.faults import EmulationError
from ptxstatic.emulator.lanes import LANES, WARP
from ptxstatic.emulator.memory import GLOBAL_BASE, Device, split_generic
from ptxstatic.launch import Launch
from ptxstatic.ptx.dtypes import as_uint

if TYPE_CHECKING:
    from ptxstatic.emulator.code import Code


class Cta:
    """One thread block: its index and its shared memory."""

    def __init__(self, ctaid: tuple[int, int, int], device: Device, launch: Launch) -> None:
        self.ctaid = ctaid
        self.device = device
        self.launch = launch
        self.shared = np.zeros(device.shared_size, dtype=np.uint8)


class Warp:
    """32 lanes of one CTA: thread indices, which lanes exist and have not exited, and local memory."""

    def __init__(self, index: int, cta: Cta) -> None:
        block = cta.launch.block
        linear = index * WARP + LANES
        self.index = index
        self.cta = cta
        self.alive = linear < block[0] * block[1] * block[2]
        x, y, z = linear % block[0], linear // block[0] % block[1], linear // (block[0] * block[1]) % block[2]
        self.tid = (x.astype(np.uint32), y.astype(np.uint32), z.astype(np.uint32))
        self.local = np.zeros((WARP, 0), dtype=np.uint8)
        self.local_top = 0
        self.depth = 0  # device-function calls in progress

    def push_frame(self, size: int) -> int:
        """Reserve ``size`` bytes of local memory per lane for a call frame; returns its base address."""
        base = -(-self.local_top // 16) * 16
        self.local_top = base + size
        if self.local_top > self.local.shape[1]:
            grown = np.zeros((WARP, max(self.local_top, 2 * self.local.shape[1])), dtype=np.uint8)
            grown[:, : self.local.shape[1]] = self.local
            self.local = grown
        return base

    def pop_frame(self, base: int) -> None:
        self.local_top = base


class RegFile(dict):
    """Registers of a frame: name -> raw-bit array over the lanes, zero until first written."""

    def __init__(self, types: dict[str, np.dtype]) -> None:
        super().__init__()
        self.types = types

    def __missing__(self, name: str) -> np.ndarray:
        value = np.zeros(WARP, dtype=self.types[name])
        self[name] = value
        return value


class Frame:
    """One activation of a function by a warp: registers, per-lane ``.param`` storage, local-memory base."""

    __slots__ = ("code", "cta", "device", "local_base", "params", "regs", "returned", "warp")

    def __init__(self, code: Code, warp: Warp, local_base: int) -> None:
        self.code = code
        self.warp = warp
        self.cta = warp.cta
        self.device = warp.cta.device
        self.regs = RegFile(code.regs)
        self.params: dict[str, np.ndarray] = {}
        self.local_base = local_base
        self.returned = np.zeros(WARP, dtype=bool)

    def param(self, name: str) -> np.ndarray:
        """The ``(32, size)`` byte storage of a ``.param`` variable of this frame."""
        store = self.params.get(name)
        if store is None:
            store = np.zeros((WARP, self.code.param_sizes.get(name, 8)), dtype=np.uint8)
            self.params[name] = store
        return store


# ------------------------------------------------------------------------------------- byte access
def _region(f: Frame, space: str, addr: np.ndarray, lanes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The byte array holding ``space`` and the offsets of ``width``-byte accesses by ``lanes``."""
    a = addr[lanes] if np.ndim(addr) else np.full(len(lanes), addr, dtype=np.uint64)
    if space in ("global", "const", "param"):
        mem, base, limit = f.device.memory, GLOBAL_BASE, len(f.device.memory)
    elif space == "shared":
        mem, base, limit = f.cta.shared, 0, len(f.cta.shared)
    elif space == "local":
        local = f.warp.local
        mem, base, limit = local.reshape(-1), 0, local.shape[1]
    else:
        raise EmulationError(f"state space .{space} is not supported")
    off = a.astype(np.int64) - base
    if len(a):  # checked with reductions; the lanes are looked at only to name a fault
        lowest, highest = a.min(), a.max()
        if lowest < base or highest > base + limit - width or highest >= 1 << 62:
            bad = (off < 0) | (off > limit - width) | (a >= np.uint64(1 << 62))
            at = int(a[np.flatnonzero(bad)[0]])
            raise EmulationError(f"{width}-byte {space} access at address {at:#x} is out of bounds")
        if width & (width - 1) == 0 and int(np.bitwise_or.reduce(a)) & (width - 1):
            at = int(a[np.flatnonzero(a & np.uint64(width - 1))[0]])
            raise EmulationError(f"misaligned {width}-byte {space} access at address {at:#x}")
    if space == "local":
        off = off + lanes * limit
    return mem, off


#: an access split by state space: (state space, addresses in it, lanes), as :func:`by_space` gives it
Parts = list[tuple[str, np.ndarray, np.ndarray]]


def by_space(space: str, addr: np.ndarray, m: np.ndarray) -> Parts:
    """(state space, addresses in it, lanes) of an access: a generic one split by window, others as they are."""
    if space == "generic":
        return split_generic(np.broadcast_to(addr, (WARP,)), m)
    return [(space, addr, m)]


def read(f: Frame, parts: Parts, width: int) -> np.ndarray:
    """``width`` bytes per lane from an access split by :func:`by_space`: a ``(32, width)`` array, zero for
    inactive lanes."""
    out = np.zeros((WARP, width), dtype=np.uint8)
    for sp, a, mm in parts:
        lanes = np.flatnonzero(mm)
        mem, off = _region(f, sp, a, lanes, width)
        out[lanes] = mem[off[:, None] + np.arange(width)]
    return out


def check(f: Frame, parts: Parts, width: int) -> None:
    """Raise the fault :func:`read` would for an access split by :func:`by_space`, reading nothing."""
    for sp, a, mm in parts:
        _region(f, sp, a, np.flatnonzero(mm), width)


def write(f: Frame, parts: Parts, data: np.ndarray) -> None:
    """Store ``data`` (``(32, width)`` bytes) for the active lanes of an access split by :func:`by_space`; the
    highest lane wins a conflict."""
    width = data.shape[1]
    for sp, a, mm in parts:
        lanes = np.flatnonzero(mm)
        mem, off = _region(f, sp, a, lanes, width)
        mem[off[:, None] + np.arange(width)] = data[lanes]


def atomic(f: Frame, parts: Parts, dtype: np.dtype,
           update: Callable[[np.ndarray, np.ndarray], np.ndarray],
           scan: tuple[np.ufunc, np.ndarray] | None = None) -> np.ndarray:
    """Read-modify-write per active lane of an access split by :func:`by_space`, lane after lane where addresses
    collide; returns the old values.

    ``update(old, lanes)`` gives the new values of the locations read by ``lanes`` (lane indices). When the
    operation is a ufunc of the old value and a per-lane operand, ``scan`` = (ufunc, operand over the warp)
    lets colliding lanes be done with one sequential ``ufunc.accumulate`` per address.
    """
    out = np.zeros(WARP, dtype=dtype)
    width = dtype.itemsize
    for sp, a, mm in parts:
        a = np.broadcast_to(a, (WARP,))
        lanes = np.flatnonzero(mm)
        _, first, inverse = np.unique(a[lanes], return_index=True, return_inverse=True)
        mem, off = _region(f, sp, a, lanes[first], width)
        idx = off[:, None] + np.arange(width)
        current = mem[idx].reshape(-1).view(dtype).copy()
        if len(first) == len(lanes):
            old = current[inverse]
            current[inverse] = update(old, lanes)
        elif scan is not None:
            old = np.empty(len(lanes), dtype=dtype)
            order = np.argsort(inverse, kind="stable")
            if scan[0] is np.add and dtype.kind in "iu":  # wrapping sums: one segmented prefix sum
                groups = inverse[order]
                values = scan[1][lanes[order]].astype(dtype)
                before = np.cumsum(values, dtype=dtype) - values
                starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
                old[order] = current[groups] + (before - before[starts][groups])
                current += np.add.reduceat(values, starts, dtype=dtype)
            else:
                for group in np.split(order, np.flatnonzero(np.diff(inverse[order])) + 1):
                    u = inverse[group[0]]
                    seq = np.concatenate((current[u: u + 1], scan[1][lanes[group]]))
                    acc = scan[0].accumulate(seq, dtype=dtype)
                    old[group] = acc[:-1]
                    current[u] = acc[-1]
        else:
            old = np.empty(len(lanes), dtype=dtype)
            for k, u in enumerate(inverse.tolist()):
                old[k] = current[u]
                current[u] = update(current[u: u + 1], lanes[k: k + 1])[0]
        mem[idx] = as_uint(current).view(np.uint8).reshape(len(first), width)
        out[lanes] = old
    return out
