"""A kernel's parameters packed for a launch: scalars as bytes, buffers allocated and filled on the device.

:class:`KernelArgs` works on any device memory with ``alloc``, ``free``, ``upload`` and ``download`` (the CUDA
driver, or the fake GPU's address-only memory), so the real and the fake GPU pack arguments the same way.
Buffers start as the emulator's buffers do (:func:`host_fill`), and can be reset to those contents. The
initial bytes of recently packed buffers are kept (:class:`FillCache`, at most
:data:`~ptxstatic.limits.HOST_FILL_CACHE_BYTES`), so that a buffer packed again is not filled again:
``collect`` packs each launch twice (its instrumented run, then its measured one), and the microbenchmark
suite's 49 GB of random buffers hold only 6.6 GB of distinct ones.
"""

from __future__ import annotations

import ctypes
import math
from collections import OrderedDict
from collections.abc import Callable, Sized
from typing import Any, Protocol

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import HOST_FILL_CACHE_BYTES
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.dtypes import NP, f32_to_bf16


class DeviceMemory(Protocol):
    def alloc(self, nbytes: int) -> int: ...

    def free(self, ptr: int) -> None: ...

    def upload(self, ptr: int, data: bytes) -> None: ...

    def download(self, ptr: int, nbytes: int) -> bytes: ...


def host_fill(buf: Buffer) -> np.ndarray:
    """A buffer's initial contents (:meth:`~ptxstatic.launch.Buffer.values`), as the emulator makes them;
    bf16 as 16-bit words rounded to nearest even."""
    if buf.dtype == "bf16":
        return f32_to_bf16(buf.values(np.float32))
    dtype = NP.get(buf.dtype)
    if dtype is None or buf.dtype == "pred":
        raise PtxstaticError(f"buffer type {buf.dtype!r} is not supported; one of {', '.join(sorted(NP))}")
    return buf.values(dtype)


class FillCache:
    """Initial bytes of recently packed buffers, by buffer; the least recently used are dropped beyond ``limit``
    bytes, and a buffer larger than that is not kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.entries: OrderedDict[tuple, Sized] = OrderedDict()

    def get(self, buf: Buffer, make: Callable[[Buffer], Any]) -> Any:
        """The buffer's bytes, kept from an earlier packing or made by ``make`` (and kept)."""
        key = (buf.dtype, buf.count, buf.fill, buf.value, buf.seed)
        data = self.entries.pop(key, None)
        if data is None:
            data = make(buf)
        else:
            self.held -= len(data)
        if len(data) <= self.limit:
            self.entries[key] = data
            self.held += len(data)
            while self.held > self.limit:
                self.held -= len(self.entries.popitem(last=False)[1])
        return data


#: the fills of this process's packings
RECENT_FILLS = FillCache(HOST_FILL_CACHE_BYTES)


def _param_size(p: A.VarDecl) -> int:
    from ptxstatic.ptx.isa import TYPE_BITS

    elems = math.prod(d or 1 for d in p.names[0].dims) if p.names[0].dims else 1
    return max(1, TYPE_BITS.get(p.dtype, 8) // 8) * elems


class KernelArgs:
    """The kernel's parameters as bytes, with device buffers that can be reset to their initial contents."""

    def __init__(self, drv: DeviceMemory, fn: A.Function, launch: Launch) -> None:
        self.drv = drv
        self.buffers: dict[str, tuple[int, bytes]] = {}  # name -> (device address, initial bytes)
        self.outputs: list[str] = []
        self.owned: list[int] = []
        self.values: list[bytes] = []
        params = fn.params or ()
        unknown = set(launch.args) - {p.names[0].name for p in params} - {str(i) for i in range(len(params))}
        if unknown:
            raise PtxstaticError(f"{fn.name} has no parameter {', '.join(sorted(unknown))}; its parameters: "
                                 + ", ".join(p.names[0].name for p in params))
        for i, p in enumerate(params):
            name = p.names[0].name
            value = launch.args.get(name, launch.args.get(str(i)))
            if value is None:
                raise PtxstaticError(f"no --arg for parameter {i} ({name}, .{p.dtype}) of {fn.name}")
            self.values.append(self._pack(p, name, value))

    def _pack(self, p: A.VarDecl, name: str, value: Any) -> bytes:
        size = _param_size(p)
        if isinstance(value, Buffer) or hasattr(value, "__cuda_array_interface__"):
            if size != 8:
                raise PtxstaticError(f"parameter {name} (.{p.dtype}, {size} bytes) cannot hold a device pointer")
            if isinstance(value, Buffer):
                data = RECENT_FILLS.get(value, lambda b: host_fill(b).tobytes())
                ptr = self.drv.alloc(len(data))
                self.owned.append(ptr)
                if value.output:
                    self.outputs.append(name)
            else:
                iface = value.__cuda_array_interface__
                ptr = int(iface["data"][0])
                nbytes = math.prod(iface["shape"]) * np.dtype(iface["typestr"]).itemsize
                data = self.drv.download(ptr, nbytes)
                self.outputs.append(name)
            self.buffers[name] = (ptr, data)
            return np.uint64(ptr).tobytes()
        dtype = NP.get(p.dtype)
        if dtype is None or p.names[0].dims:
            raise PtxstaticError(f"parameter {name} (.{p.dtype}{'[]' if p.names[0].dims else ''}) takes no "
                                 "scalar value; aggregates are not supported")
        try:
            return np.array(value).astype(dtype, casting="unsafe").tobytes()
        except (TypeError, ValueError):
            raise PtxstaticError(f"bad value {value!r} for parameter {name} (.{p.dtype})") from None

    def reset(self) -> None:
        for ptr, data in self.buffers.values():
            self.drv.upload(ptr, data)

    def snapshot(self) -> dict[str, bytes]:
        names = self.outputs or list(self.buffers)
        return {n: self.drv.download(self.buffers[n][0], len(self.buffers[n][1])) for n in names}

    def ctypes(self) -> list[ctypes.Array]:
        return [(ctypes.c_ubyte * len(v)).from_buffer_copy(v) for v in self.values]

    def free(self) -> None:
        for ptr in self.owned:
            self.drv.free(ptr)
