"""Opening a device by kind: the real GPU (CUDA in a worker process, NVML) or the fake one for tests."""

from __future__ import annotations

from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import Device
from ptxstatic.limits import DEVICE_CALL_TIMEOUT_S

#: the kinds :func:`open_device` accepts
DEVICES = ("cuda", "fake")


def open_device(kind: str, index: int = 0, timeout_s: float = DEVICE_CALL_TIMEOUT_S) -> Device:
    """The GPU numbered ``index`` (CUDA order) through ``kind``: ``cuda`` or ``fake`` (tests only)."""
    if kind == "fake":  # implementations are imported on use: the fake one brings the emulator
        from ptxstatic.gpu.fake import open_fake

        return open_fake()
    if kind != "cuda":
        raise PtxstaticError(f"unknown device {kind!r}: one of {', '.join(DEVICES)}")
    from ptxstatic.gpu.nvml import NvmlBoard
    from ptxstatic.gpu.worker import WorkerGpu

    gpu = WorkerGpu(index, timeout_s)
    try:
        board = NvmlBoard(gpu.info().pci_bus_id)
    except BaseException:
        gpu.close()
        raise
    return Device(gpu, board, "cuda")
