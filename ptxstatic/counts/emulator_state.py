"""Run-time state of the emulator (CTAs, warps, call frames) and vectorised byte access to every state space."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ptxstatic.counts.emulator_memory import GLOBAL_BASE, Device, split_generic
from ptxstatic.counts.emulator_types import LANES, WARP, EmulationError, as_uint
from ptxstatic.counts.launch import Launch

if TYPE_CHECKING:
    from ptxstatic.counts.emulator_code import Code


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
        self.tid = tuple(
            (v % n).astype(np.uint32)
            for v, n in ((linear, block[0]), (linear // block[0], block[1]), (linear // (block[0] * block[1]), block[2]))
        )
        self.local = np.zeros((WARP, 0), dtype=np.uint8)
        self.local_top = 0

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
    bad = (off < 0) | (off > limit - width) | (a >= np.uint64(1 << 62))
    if bad.any():
        at = int(a[np.flatnonzero(bad)[0]])
        raise EmulationError(f"{width}-byte {space} access at address {at:#x} is out of bounds")
    if width & (width - 1) == 0 and (a & np.uint64(width - 1)).any():
        at = int(a[np.flatnonzero(a & np.uint64(width - 1))[0]])
        raise EmulationError(f"misaligned {width}-byte {space} access at address {at:#x}")
    if space == "local":
        off = off + lanes * limit
    return mem, off


def _parts(space: str, addr: np.ndarray, m: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
    if space == "generic":
        return split_generic(np.broadcast_to(addr, (WARP,)), m)
    return [(space, addr, m)]


def read(f: Frame, space: str, addr: np.ndarray, m: np.ndarray, width: int) -> np.ndarray:
    """``width`` bytes per lane from ``space`` at ``addr``: a ``(32, width)`` array, zero for inactive lanes."""
    out = np.zeros((WARP, width), dtype=np.uint8)
    for sp, a, mm in _parts(space, addr, m):
        lanes = np.flatnonzero(mm)
        mem, off = _region(f, sp, a, lanes, width)
        out[lanes] = mem[off[:, None] + np.arange(width)]
    return out


def write(f: Frame, space: str, addr: np.ndarray, m: np.ndarray, data: np.ndarray) -> None:
    """Store ``data`` (``(32, width)`` bytes) for the active lanes; the highest lane wins a conflict."""
    width = data.shape[1]
    for sp, a, mm in _parts(space, addr, m):
        lanes = np.flatnonzero(mm)
        mem, off = _region(f, sp, a, lanes, width)
        mem[off[:, None] + np.arange(width)] = data[lanes]


def atomic(f: Frame, space: str, addr: np.ndarray, m: np.ndarray, dtype: np.dtype,
           update: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Read-modify-write per active lane, in lane order where addresses collide; returns the old values.

    ``update(old, lanes)`` gives the new values for the lanes ``lanes`` (whose addresses are distinct).
    """
    out = np.zeros(WARP, dtype=dtype)
    width = dtype.itemsize
    for sp, a, mm in _parts(space, addr, m):
        a = np.broadcast_to(a, (WARP,))
        remaining = np.flatnonzero(mm)
        while remaining.size:
            _, first = np.unique(a[remaining], return_index=True)
            first.sort()
            lanes = remaining[first]
            mem, off = _region(f, sp, a, lanes, width)
            idx = off[:, None] + np.arange(width)
            old = mem[idx].reshape(-1).view(dtype)
            new = np.asarray(update(old, lanes), dtype=dtype)
            mem[idx] = as_uint(new).view(np.uint8).reshape(len(lanes), width)
            out[lanes] = old
            remaining = np.delete(remaining, first)
    return out
