"""A :class:`~ptxstatic.gpu.device.Gpu` in a child process, restarted after a fault.

After an illegal address, a trap or a hang, CUDA leaves the context (and in practice the process) unusable.
The CUDA calls therefore run in a spawned worker: a call that faults, a call that outlives its timeout and a
worker that dies all become a sticky :class:`DeviceFault`; :meth:`WorkerGpu.reset` then kills the worker and
the next call starts a fresh one.
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.connection import Connection
from typing import Any

from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import DeviceFault, GpuInfo, KernelAttributes
from ptxstatic.limits import DEVICE_CALL_TIMEOUT_S, DEVICE_START_TIMEOUT_S

CUDA = "ptxstatic.gpu.cuda:CudaGpu"


def _serve(conn: Connection, index: int, factory: str) -> None:
    """The worker's loop: build the GPU (``factory``: module:callable taking the device index), then answer
    (method, args) requests until told to stop."""
    import importlib

    module, attr = factory.split(":")
    try:
        gpu = getattr(importlib.import_module(module), attr)(index)
        conn.send(("ok", gpu.info()))
    except Exception as exc:  # report any start-up failure, then leave
        conn.send(("error", str(exc)))
        return
    while True:
        try:
            method, args = conn.recv()
        except EOFError:
            return
        if method == "close":
            gpu.close()
            conn.send(("ok", None))
            return
        try:
            conn.send(("ok", getattr(gpu, method)(*args)))
        except DeviceFault as exc:
            conn.send(("fault", str(exc), exc.sticky))
        except PtxstaticError as exc:
            conn.send(("error", str(exc)))
        except Exception as exc:  # an unexpected failure of this call: the caller records it and goes on
            conn.send(("fault", f"{type(exc).__name__}: {exc}", False))


class WorkerGpu:
    """Forwards every :class:`Gpu` call to a worker process holding the GPU that ``factory`` builds."""

    def __init__(self, index: int = 0, timeout_s: float = DEVICE_CALL_TIMEOUT_S, factory: str = CUDA) -> None:
        self.index = index
        self.timeout_s = timeout_s
        self.factory = factory
        self._proc: Any = None
        self._conn: Connection | None = None
        self._info: GpuInfo | None = None
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.index, self.factory), daemon=True,
                                 name="ptxstatic-gpu")
        self._proc.start()
        child.close()
        self._conn = parent
        self._info = self._reply("start", DEVICE_START_TIMEOUT_S)

    def _reply(self, what: str, timeout: float) -> Any:
        assert self._conn is not None
        try:
            ready = self._conn.poll(timeout)
            message = self._conn.recv() if ready else None
        except (EOFError, OSError):
            self._kill()
            raise DeviceFault(f"the GPU worker died during {what}") from None
        except BaseException:  # interrupted while the worker is busy: its next reply would be out of step
            self._kill()
            raise
        if message is None:
            self._kill()
            raise DeviceFault(f"{what} did not finish in {timeout:.0f} s (the kernel may hang); worker stopped")
        if message[0] == "ok":
            return message[1]
        if what == "start":
            self._kill()
        if message[0] == "fault":
            raise DeviceFault(message[1], message[2])
        raise PtxstaticError(message[1])

    def _call(self, method: str, *args: Any) -> Any:
        if self._proc is None:
            self._start()
        assert self._conn is not None
        try:
            self._conn.send((method, args))
        except (BrokenPipeError, OSError):
            self._kill()
            raise DeviceFault(f"the GPU worker is gone (during {method})") from None
        return self._reply(method, self.timeout_s)

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(10)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def info(self) -> GpuInfo:
        if self._info is None:
            self._start()
        assert self._info is not None
        return self._info

    def load(self, ptx: str) -> int:
        return self._call("load", ptx)

    def unload(self, module: int) -> None:
        if self._proc is not None:  # a restarted worker has no such module
            self._call("unload", module)

    def prepare(self, module: int, kernel: str, launch: Any) -> int:
        return self._call("prepare", module, kernel, launch)

    def release(self, prepared: int) -> None:
        if self._proc is not None:
            self._call("release", prepared)

    def attributes(self, prepared: int) -> KernelAttributes:
        return self._call("attributes", prepared)

    def run(self, prepared: int) -> None:
        self._call("run", prepared)

    def outputs(self, prepared: int) -> dict[str, bytes]:
        return self._call("outputs", prepared)

    def read_global(self, module: int, name: str) -> bytes:
        return self._call("read_global", module, name)

    def time(self, prepared: int, chunks: int, per_chunk: int) -> list[float]:
        return self._call("time", prepared, chunks, per_chunk)

    def reset(self) -> None:
        self._kill()

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            assert self._conn is not None
            self._conn.send(("close", ()))
            self._conn.poll(30)
        except (BrokenPipeError, OSError):
            pass
        self._kill()
