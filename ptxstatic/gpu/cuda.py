"""The compute side of a real GPU, in-process, over the CUDA driver layer.

Loading, argument packing and buffers come from :mod:`ptxstatic.gpu.driver` and
:mod:`ptxstatic.gpu.args`; what is here is specific to measurement: handles, kernel attributes and the
timed launch loop (launches issued back to back with prebuilt parameters, an event between chunks).
:mod:`ptxstatic.gpu.worker` runs this class in a child process, because a kernel fault leaves a
CUDA context (and so the process) unusable.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.args import KernelArgs
from ptxstatic.gpu.device import DeviceFault, GpuInfo, KernelAttributes
from ptxstatic.gpu.driver import Driver
from ptxstatic.launch import Launch
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.parser import parse_text


@dataclass
class _Prepared:
    function: Any
    launch: Launch
    args: KernelArgs
    params: list  # ctypes arrays, kept alive for the pointer array
    pointers: ctypes.Array


class CudaGpu:
    """:class:`ptxstatic.gpu.device.Gpu` on the CUDA device numbered ``index``."""

    def __init__(self, index: int = 0) -> None:
        self.drv = Driver(index)
        self.modules: dict[int, tuple[Any, Module]] = {}
        self.prepared: dict[int, _Prepared] = {}
        self._next = 1

    def _handle(self) -> int:
        self._next += 1
        return self._next

    def info(self) -> GpuInfo:
        cu, drv = self.drv.cu, self.drv
        major, minor = drv.compute_capability
        bus = drv.check(cu.cuDeviceGetPCIBusId(64, drv.device), "cuDeviceGetPCIBusId")
        memory = drv.check(cu.cuDeviceTotalMem(drv.device), "cuDeviceTotalMem")
        version = drv.check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        sms = drv.check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                drv.device), "cuDeviceGetAttribute")
        return GpuInfo(drv.name, f"sm_{major}{minor}", bus.split(b"\0", 1)[0].decode(), int(memory),
                       f"CUDA driver API {version // 1000}.{version % 1000 // 10}", int(sms))

    def load(self, ptx: str) -> int:
        module = parse_text(ptx, "<collect>")
        try:
            handle = self.drv.load(ptx)
        except PtxstaticError as exc:
            raise DeviceFault(str(exc), sticky=False) from None
        h = self._handle()
        self.modules[h] = (handle, module)
        return h

    def unload(self, module: int) -> None:
        handle, _ = self.modules.pop(module)
        self.drv.unload(handle)

    def prepare(self, module: int, kernel: str, launch: Launch) -> int:
        handle, parsed = self.modules[module]
        fn: Function = parsed.function(kernel)
        args = KernelArgs(self.drv, fn, launch)
        try:
            args.reset()
            function = self.drv.function(handle, kernel)
            if launch.shared_bytes > 48 * 1024:
                attr = self.drv.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                self.drv.check(self.drv.cu.cuFuncSetAttribute(function, attr, launch.shared_bytes),
                               "cuFuncSetAttribute")
        except BaseException:
            args.free()
            raise
        params = args.ctypes()
        pointers = (ctypes.c_void_p * max(1, len(params)))(*[ctypes.addressof(p) for p in params])
        h = self._handle()
        self.prepared[h] = _Prepared(function, launch, args, params, pointers)
        return h

    def release(self, prepared: int) -> None:
        self.prepared.pop(prepared).args.free()

    def attributes(self, prepared: int) -> KernelAttributes:
        cu, p = self.drv.cu, self.prepared[prepared]
        a = cu.CUfunction_attribute

        def get(attr: Any) -> int:
            return int(self.drv.check(cu.cuFuncGetAttribute(attr, p.function), "cuFuncGetAttribute"))

        return KernelAttributes(get(a.CU_FUNC_ATTRIBUTE_NUM_REGS), get(a.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                                get(a.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES))

    def _launch(self, p: _Prepared) -> None:
        status = self.drv.cu.cuLaunchKernel(p.function, *p.launch.grid, *p.launch.block, p.launch.shared_bytes, 0,
                                            ctypes.addressof(p.pointers), 0)
        self._fault_check(status, "cuLaunchKernel")

    def _fault_check(self, result: Any, what: str) -> Any:
        try:
            return self.drv.check(result, what)
        except PtxstaticError as exc:
            raise DeviceFault(str(exc)) from None

    def run(self, prepared: int) -> None:
        self._launch(self.prepared[prepared])
        self._fault_check(self.drv.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def outputs(self, prepared: int) -> dict[str, bytes]:
        return self.prepared[prepared].args.snapshot()

    def read_global(self, module: int, name: str) -> bytes:
        ptr, size = self.drv.global_(self.modules[module][0], name)
        return self.drv.download(ptr, size)

    def time(self, prepared: int, chunks: int, per_chunk: int) -> list[float]:
        cu, p = self.drv.cu, self.prepared[prepared]
        events = [self._fault_check(cu.cuEventCreate(0), "cuEventCreate") for _ in range(chunks + 1)]
        try:
            self._fault_check(cu.cuEventRecord(events[0], 0), "cuEventRecord")
            for c in range(chunks):
                for _ in range(per_chunk):
                    self._launch(p)
                self._fault_check(cu.cuEventRecord(events[c + 1], 0), "cuEventRecord")
            self._fault_check(cu.cuEventSynchronize(events[-1]), "cuEventSynchronize (the kernel faulted)")
            return [float(self._fault_check(cu.cuEventElapsedTime(events[c], events[c + 1]), "cuEventElapsedTime"))
                    for c in range(chunks)]
        finally:
            for e in events:
                cu.cuEventDestroy(e)

    def reset(self) -> None:
        raise DeviceFault("an in-process CUDA context cannot recover from a sticky fault; use the worker")

    def close(self) -> None:
        for h in list(self.prepared):
            self.release(h)
        for h in list(self.modules):
            self.unload(h)
