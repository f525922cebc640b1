"""A thin layer over the CUDA driver API (cuda-python's ``cuda.bindings.driver``), imported only when used.

Everything a profiling run needs: load PTX, find kernels and globals, allocate and copy memory, launch with
parameters packed by ctypes, time with events. Every failure is a :class:`PtxstaticError`; a machine without
the bindings, the driver or a GPU gets one clear message.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from ptxstatic.errors import PtxstaticError

NO_GPU = "no CUDA driver / GPU found"


class Driver:
    """The current device's primary context, made current on this thread."""

    def __init__(self, device: int = 0) -> None:
        try:
            from cuda.bindings import driver as cu
        except ImportError:
            raise PtxstaticError(f"{NO_GPU}: the CUDA driver bindings are not installed "
                                 "(pip install 'ptxstatic[gpu]', which installs cuda-python)") from None
        self.cu = cu
        try:
            self.check(cu.cuInit(0), "cuInit")
        except PtxstaticError:
            raise
        except Exception as exc:  # the bindings raise their own error when libcuda.so is missing
            raise PtxstaticError(f"{NO_GPU}: {exc}") from None
        count = self.check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        if count <= device:
            raise PtxstaticError(f"{NO_GPU}: the driver sees {count} devices")
        self.device = self.check(cu.cuDeviceGet(device), "cuDeviceGet")
        self.context = self.check(cu.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        self.check(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, result: Any, what: str) -> Any:
        """Unpack a bindings result ``(status, *values)``; a failed status is an error naming the call."""
        status, *values = result if isinstance(result, tuple) else (result,)
        if status != self.cu.CUresult.CUDA_SUCCESS:
            err, text = self.cu.cuGetErrorString(status)
            msg = text.decode() if err == self.cu.CUresult.CUDA_SUCCESS and text else str(status)
            prefix = f"{NO_GPU}: " if what in ("cuInit", "cuDeviceGetCount") else ""
            raise PtxstaticError(f"{prefix}{what} failed: {msg}")
        return values[0] if len(values) == 1 else tuple(values) or None

    @property
    def name(self) -> str:
        raw = self.check(self.cu.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        return raw.split(b"\0", 1)[0].decode()

    @property
    def compute_capability(self) -> tuple[int, int]:
        attr = self.cu.CUdevice_attribute
        major = self.check(self.cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device), "cuDeviceGetAttribute")
        minor = self.check(self.cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device), "cuDeviceGetAttribute")
        return major, minor

    # ---------------------------------------------------------------------------------- modules
    def load(self, ptx: str) -> Any:
        return self.check(self.cu.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData (JIT of the PTX)")

    def unload(self, module: Any) -> None:
        self.check(self.cu.cuModuleUnload(module), "cuModuleUnload")

    def function(self, module: Any, name: str) -> Any:
        return self.check(self.cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")

    def global_(self, module: Any, name: str) -> tuple[int, int]:
        """(device address, size in bytes) of a module-scope variable."""
        ptr, size = self.check(self.cu.cuModuleGetGlobal(module, name.encode()), f"cuModuleGetGlobal({name})")
        return int(ptr), int(size)

    # ----------------------------------------------------------------------------------- memory
    def alloc(self, nbytes: int) -> int:
        return int(self.check(self.cu.cuMemAlloc(max(1, nbytes)), "cuMemAlloc"))

    def free(self, ptr: int) -> None:
        self.check(self.cu.cuMemFree(ptr), "cuMemFree")

    def upload(self, ptr: int, data: bytes | bytearray | memoryview) -> None:
        if len(data):
            self.check(self.cu.cuMemcpyHtoD(ptr, bytes(data), len(data)), "cuMemcpyHtoD")

    def download(self, ptr: int, nbytes: int) -> bytes:
        buf = bytearray(nbytes)
        if nbytes:
            self.check(self.cu.cuMemcpyDtoH(buf, ptr, nbytes), "cuMemcpyDtoH")
        return bytes(buf)

    def zero(self, ptr: int, nbytes: int) -> None:
        self.check(self.cu.cuMemsetD8(ptr, 0, nbytes), "cuMemsetD8")

    # ----------------------------------------------------------------------------------- launch
    def launch(self, function: Any, grid: Sequence[int], block: Sequence[int], shared_bytes: int,
               params: Sequence[ctypes._SimpleCData | ctypes.Array]) -> None:
        """Launch on the default stream; ``params`` are ctypes objects in parameter order."""
        pointers = (ctypes.c_void_p * max(1, len(params)))(*[ctypes.addressof(p) for p in params])
        if shared_bytes > 48 * 1024:
            attr = self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.cu.cuFuncSetAttribute(function, attr, shared_bytes), "cuFuncSetAttribute")
        self.check(self.cu.cuLaunchKernel(function, *grid, *block, shared_bytes, 0, ctypes.addressof(pointers), 0),
                   "cuLaunchKernel")

    def synchronize(self) -> None:
        self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize (the kernel faulted or timed out)")

    def time_ms(self, run: Any, repeats: int) -> list[float]:
        """Milliseconds of ``repeats`` calls of ``run()`` (each one launch), timed by CUDA events."""
        start = self.check(self.cu.cuEventCreate(0), "cuEventCreate")
        stop = self.check(self.cu.cuEventCreate(0), "cuEventCreate")
        times = []
        try:
            for _ in range(repeats):
                self.check(self.cu.cuEventRecord(start, 0), "cuEventRecord")
                run()
                self.check(self.cu.cuEventRecord(stop, 0), "cuEventRecord")
                self.check(self.cu.cuEventSynchronize(stop), "cuEventSynchronize")
                times.append(float(self.check(self.cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime")))
        finally:
            self.cu.cuEventDestroy(start)
            self.cu.cuEventDestroy(stop)
        return times
