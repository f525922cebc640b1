"""The management side of a real GPU through NVML (``nvidia-ml-py``, imported lazily).

Reads the total-energy counter, power, SM and memory clocks, temperature and clocks-event (throttle)
reasons, on a thread for a trace (:class:`Poller`), and, for explicit clock sweeps only, sets and restores
applications clocks. Nothing here changes a setting unless :meth:`NvmlBoard.set_clocks` or
:meth:`NvmlBoard.restore_clocks` is called.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import FULL_READING_S, ClockState, Telemetry

T = TypeVar("T")
NO_NVML = "NVML is not available"


def _nvml() -> Any:
    try:
        import pynvml
    except ImportError:
        raise PtxstaticError(f"{NO_NVML}: install nvidia-ml-py (pip install 'ptxstatic[gpu]')") from None
    return pynvml


class Poller:
    """Reads a board on a thread every ``interval`` seconds until :meth:`stop`: ``quick`` (the energy counter
    alone) at every reading, ``full`` (everything) every :data:`FULL_READING_S` and at the first and last."""

    def __init__(self, quick: Callable[[], Telemetry], full: Callable[[], Telemetry], interval: float) -> None:
        self.quick, self.full, self.interval = quick, full, interval
        self.readings: list[Telemetry] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ptxstatic-board-trace")
        self._thread.start()

    def _loop(self) -> None:
        last_full = -FULL_READING_S
        while True:
            now = time.monotonic()
            if now - last_full >= FULL_READING_S:
                reading, last_full = self.full(), now
            else:
                reading = self.quick()
            with self._lock:
                self.readings.append(reading)
            if self._stop.wait(self.interval):
                return

    def snapshot(self) -> list[Telemetry]:
        with self._lock:
            return list(self.readings)

    def stop(self) -> list[Telemetry]:
        self._stop.set()
        self._thread.join()
        self.readings.append(self.full())
        return self.readings


class NvmlBoard:
    """:class:`ptxstatic.gpu.device.Board` for the GPU at a PCI bus id (as the CUDA driver reports it)."""

    def __init__(self, pci_bus_id: str) -> None:
        self.nv = nv = _nvml()
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise PtxstaticError(f"{NO_NVML}: {exc} (is the NVIDIA driver loaded?)") from None
        try:
            self.handle = nv.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
        except nv.NVMLError as exc:
            nv.nvmlShutdown()
            raise PtxstaticError(f"NVML cannot open the GPU at PCI {pci_bus_id}: {exc}") from None
        self._energy = self._optional(lambda: nv.nvmlDeviceGetTotalEnergyConsumption(self.handle)) is not None
        self._poller: Poller | None = None

    def _optional(self, read: Callable[[], T]) -> T | None:
        """A reading, or None when the GPU or driver does not support it."""
        try:
            return read()
        except self.nv.NVMLError as exc:
            if exc.value in (self.nv.NVML_ERROR_NOT_SUPPORTED, self.nv.NVML_ERROR_NO_PERMISSION,
                             self.nv.NVML_ERROR_FUNCTION_NOT_FOUND):
                return None
            raise PtxstaticError(f"NVML read failed: {exc}") from None

    def describe(self) -> dict[str, Any]:
        nv, h = self.nv, self.handle
        limit = self._optional(lambda: nv.nvmlDeviceGetPowerManagementLimit(h))
        return {
            "nvml_name": nv.nvmlDeviceGetName(h), "uuid": nv.nvmlDeviceGetUUID(h),
            "driver": nv.nvmlSystemGetDriverVersion(), "power_limit_w": limit / 1000 if limit else None,
            "energy_counter": self._energy,
        }

    def now(self) -> float:
        return time.monotonic()

    def _energy_mj(self) -> float | None:
        """The total-energy counter in millijoules, None when the board has none."""
        if not self._energy:
            return None
        return float(self.nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))

    def _quick(self) -> Telemetry:
        """The energy counter alone, stamped with the time just after it was read."""
        energy = self._energy_mj()
        return Telemetry(time.monotonic(), None, None, None, None, 0, energy)

    def _full(self) -> Telemetry:
        nv, h = self.nv, self.handle
        energy = self._energy_mj()
        t = time.monotonic()
        power = self._optional(lambda: nv.nvmlDeviceGetPowerUsage(h))
        reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nv.nvmlDeviceGetCurrentClocksThrottleReasons
        return Telemetry(
            t, power / 1000 if power is not None else None,
            self._optional(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            self._optional(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            self._optional(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            int(self._optional(lambda: reasons(h)) or 0), energy,
        )

    def start_trace(self, interval_s: float) -> None:
        self._poller = Poller(self._quick, self._full, interval_s)

    def trace(self) -> list[Telemetry]:
        assert self._poller is not None, "no trace started"
        return self._poller.snapshot()

    def stop_trace(self) -> list[Telemetry]:
        assert self._poller is not None, "no trace started"
        readings, self._poller = self._poller.stop(), None
        return readings

    def clock_state(self) -> ClockState:
        nv, h = self.nv, self.handle
        return ClockState(
            self._optional(lambda: nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_MEM)),
            self._optional(lambda: nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_GRAPHICS)),
            self._optional(lambda: nv.nvmlDeviceGetDefaultApplicationsClock(h, nv.NVML_CLOCK_MEM)),
            self._optional(lambda: nv.nvmlDeviceGetDefaultApplicationsClock(h, nv.NVML_CLOCK_GRAPHICS)),
        )

    def supported_clocks(self) -> list[tuple[int, int]]:
        nv, h = self.nv, self.handle
        pairs = []
        for mem in self._optional(lambda: nv.nvmlDeviceGetSupportedMemoryClocks(h)) or []:
            for core in self._optional(lambda m=mem: nv.nvmlDeviceGetSupportedGraphicsClocks(h, m)) or []:
                pairs.append((int(mem), int(core)))
        return sorted(pairs)

    def clock_permission(self) -> str | None:
        nv, h = self.nv, self.handle
        state = self.clock_state()
        if state.mem_mhz is None or state.core_mhz is None:
            return "this GPU or driver does not support applications clocks"
        restricted = self._optional(
            lambda: nv.nvmlDeviceGetAPIRestriction(h, nv.NVML_RESTRICTED_API_SET_APPLICATION_CLOCKS))
        if restricted == nv.NVML_FEATURE_ENABLED and os.geteuid() != 0:
            return ("setting applications clocks is restricted to root on this GPU (an administrator can lift "
                    "that with `nvidia-smi -acp UNRESTRICTED`)")
        return None

    def set_clocks(self, mem_mhz: int, core_mhz: int) -> None:
        try:
            self.nv.nvmlDeviceSetApplicationsClocks(self.handle, mem_mhz, core_mhz)
        except self.nv.NVMLError as exc:
            raise PtxstaticError(f"NVML refused applications clocks mem {mem_mhz} MHz, core {core_mhz} MHz: "
                                 f"{exc}") from None

    def restore_clocks(self, state: ClockState) -> None:
        if state.mem_mhz is None or state.core_mhz is None:
            return
        try:
            if state.is_default:
                self.nv.nvmlDeviceResetApplicationsClocks(self.handle)
            else:
                self.nv.nvmlDeviceSetApplicationsClocks(self.handle, state.mem_mhz, state.core_mhz)
        except self.nv.NVMLError as exc:
            raise PtxstaticError(f"NVML could not restore applications clocks to mem {state.mem_mhz} MHz, "
                                 f"core {state.core_mhz} MHz: {exc}") from None

    def close(self) -> None:
        if self._poller is not None:
            self._poller.stop()
        self.nv.nvmlShutdown()
