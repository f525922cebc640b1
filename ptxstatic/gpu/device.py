"""The hardware boundary of ``ptxstatic collect``: what a measured GPU must offer.

Two small protocols. :class:`Gpu` is the compute side (the CUDA driver): load PTX, prepare a launch
(allocate and fill its buffers), run it once, read a module variable, and time repeated launches with
events. :class:`Board` is the management side (NVML): a trace of the board read at a fixed interval (the
total-energy counter, power, clocks, temperature and throttle reasons, each reading stamped on the board's
clock), and application-clock control for explicit clock sweeps.

Implementations: ``cuda`` (:mod:`ptxstatic.gpu.cuda` in a worker process, :mod:`ptxstatic.gpu.worker`, and
:mod:`ptxstatic.gpu.nvml`) and ``fake`` (:mod:`ptxstatic.gpu.fake`, a deterministic stand-in for tests that
mirrors them). This module imports none of them: :func:`ptxstatic.gpu.open.open_device` does. Everything
above these protocols is the same code for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch

#: NVML clocks-event (throttle) reason bits
THROTTLE_REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
#: reasons that mean the clocks were held below what was asked for (power, thermal, hardware slowdowns)
LIMITING = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
#: seconds between a trace's full readings (power, clocks, temperature, throttle reasons)
FULL_READING_S = 0.02


def throttle_names(mask: int) -> list[str]:
    """The names of the reason bits set in ``mask`` (unknown bits as hex)."""
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    rest = mask & ~sum(THROTTLE_REASONS)
    return names + ([hex(rest)] if rest else [])


class DeviceFault(PtxstaticError):
    """A kernel or the device failed. ``sticky``: the context is unusable (an illegal address, a trap, a
    timeout, a dead worker) and the device must be :meth:`Gpu.reset` before the next call."""

    def __init__(self, message: str, sticky: bool = True) -> None:
        super().__init__(message)
        self.sticky = sticky


@dataclass(frozen=True)
class GpuInfo:
    name: str  # the driver's device name, e.g. "NVIDIA H100 80GB HBM3"
    arch: str  # sm_XX for nvcc and ptxas
    pci_bus_id: str = ""
    memory_bytes: int = 0
    driver: str = ""  # driver / runtime versions as text
    sms: int = 0  # streaming multiprocessors


@dataclass(frozen=True)
class Telemetry:
    """One reading of the board; None where the board does not report the quantity (or a reading of the
    energy counter alone did not read it)."""

    t: float  # seconds on the board's clock (Board.now)
    power_w: float | None  # the board's power reading (averaged by the board over its own window)
    sm_clock_mhz: int | None
    mem_clock_mhz: int | None
    temperature_c: int | None
    throttle: int = 0  # bit mask of clock throttle (clocks-event) reasons
    energy_mj: float | None = None  # the total-energy counter (None: the board has none)


@dataclass(frozen=True)
class ClockState:
    """What the board's clock settings are, so that they can be put back exactly."""

    mem_mhz: int | None  # applications clocks now (None: not supported)
    core_mhz: int | None
    default_mem_mhz: int | None = None
    default_core_mhz: int | None = None

    @property
    def is_default(self) -> bool:
        return (self.mem_mhz, self.core_mhz) == (self.default_mem_mhz, self.default_core_mhz)

    def to_dict(self) -> dict:
        return {"mem_mhz": self.mem_mhz, "core_mhz": self.core_mhz, "default_mem_mhz": self.default_mem_mhz,
                "default_core_mhz": self.default_core_mhz}

    @classmethod
    def from_dict(cls, d: dict) -> ClockState:
        return cls(d.get("mem_mhz"), d.get("core_mhz"), d.get("default_mem_mhz"), d.get("default_core_mhz"))


@dataclass(frozen=True)
class KernelAttributes:
    registers: int | None = None  # per thread
    static_shared_bytes: int | None = None
    local_bytes: int | None = None  # per thread


class Gpu(Protocol):
    """Compute side. Handles are opaque integers, valid until :meth:`reset`."""

    def info(self) -> GpuInfo: ...

    def load(self, ptx: str) -> int:
        """Load (JIT) a PTX module; a module the driver rejects is a non-sticky DeviceFault."""

    def unload(self, module: int) -> None: ...

    def prepare(self, module: int, kernel: str, launch: Launch) -> int:
        """Allocate and fill the launch's buffers and pack its parameters."""

    def release(self, prepared: int) -> None: ...

    def attributes(self, prepared: int) -> KernelAttributes: ...

    def run(self, prepared: int) -> None:
        """Launch once and wait for it."""

    def outputs(self, prepared: int) -> dict[str, bytes]:
        """The bytes of the launch's buffers (its outputs, else all) after the last run, by parameter name."""

    def read_global(self, module: int, name: str) -> bytes:
        """The bytes of a module-scope variable."""

    def time(self, prepared: int, chunks: int, per_chunk: int) -> list[float]:
        """Launch ``chunks * per_chunk`` times back to back; milliseconds of each chunk by CUDA events."""

    def reset(self) -> None:
        """Recover from a sticky fault: every handle is invalid afterwards."""

    def close(self) -> None: ...


class Board(Protocol):
    """Management side (NVML)."""

    def describe(self) -> dict:
        """What the board is (name, driver, power limit, whether it has an energy counter), for the record."""

    def now(self) -> float:
        """Seconds on the clock that energy readings refer to."""

    def start_trace(self, interval_s: float) -> None:
        """Begin reading the board every ``interval_s`` seconds: the energy counter at every reading, power,
        clocks, temperature and throttle reasons at least every :data:`FULL_READING_S`."""

    def trace(self) -> list[Telemetry]:
        """Every reading since :meth:`start_trace`, oldest first; the trace goes on."""

    def stop_trace(self) -> list[Telemetry]:
        """End the trace: every reading it took, the last one taken now."""

    def clock_state(self) -> ClockState: ...

    def supported_clocks(self) -> list[tuple[int, int]]:
        """(memory, core) MHz pairs the board accepts as applications clocks."""

    def clock_permission(self) -> str | None:
        """None when clocks may be set; otherwise why not. Changes nothing."""

    def set_clocks(self, mem_mhz: int, core_mhz: int) -> None: ...

    def restore_clocks(self, state: ClockState) -> None: ...

    def close(self) -> None: ...


@dataclass
class Device:
    gpu: Gpu
    board: Board
    kind: str
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.gpu.close()
        self.board.close()
