"""A fake GPU for tests: deterministic, no hardware, selected with ``--device fake``.

It mirrors the real modules: :class:`FakeGpu` is :class:`ptxstatic.gpu.cuda.CudaGpu` (and can run in the
same worker, :func:`worker_gpu`), :class:`FakeBoard` is :class:`ptxstatic.gpu.nvml.NvmlBoard`, and arguments
are packed by the same :class:`ptxstatic.gpu.args.KernelArgs`.

It stands in for the hardware only. Kernels really run, on the project's PTX emulator
(:func:`ptxstatic.emulator.emulate`), so instrumented kernels fill their counters and a kernel that
traps or touches a bad address faults (stickily: every later call fails until :meth:`FakeGpu.reset`);
module variables keep their values from one run to the next, as on a GPU. Time and power are simple
functions of the launch, the emulated block counts and the clocks, on a virtual clock that only timed
loops advance:

* one launch takes ``2 µs + thread instructions × 1 ps × 1755 / core MHz + buffer bytes × 0.3 ps × 2619 /
  memory MHz``; in a timed loop of three chunks or more, the first chunk takes three times as long (an
  outlier for the filter);
* while a loop runs, the board draws ``60 W + 200 W × min(1, warps / 512) × (core MHz / 1755)²``, reached
  from the power of the loop before (60 W before the first) exponentially with time constant
  ``power_tau_s``; the energy counter integrates that power but changes only every ``energy_period_s``
  (at multiples of it on the virtual clock), and the power reading is its mean over the last
  ``power_window_s`` (all three 0 by default: a current counter, an instantaneous reading, no ramp);
* a trace (:meth:`FakeBoard.start_trace`) holds the readings a host polling every interval would have
  taken, on the virtual clock.

Configuration (optional): a JSON file named by ``PTXSTATIC_FAKE_DEVICE``, which also holds the board's
settings, so that clock changes persist across processes as on a real board. Keys: ``name``, ``arch``,
``clock_permission`` (bool), ``energy_counter`` (bool), ``energy_period_s``, ``power_window_s``,
``power_tau_s``, ``wall_seconds_per_call`` (a real sleep in every timed loop, so tests can kill a run
mid-way), ``time_scale`` (real seconds slept per virtual second of a timed loop: 1 makes loops last as long as
on a GPU), ``clocks`` and ``default_clocks`` (``{"mem_mhz", "core_mhz"}``), ``supported`` (pairs), and
``changes``, a log of every settings change the fake board was asked to make.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ptxstatic.emulator import Emulation, emulate
from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.gpu.args import KernelArgs
from ptxstatic.gpu.device import ClockState, Device, DeviceFault, GpuInfo, KernelAttributes, Telemetry
from ptxstatic.launch import Launch
from ptxstatic.limits import FAKE_DEVICE_MAX_STEPS
from ptxstatic.ptx.ast import Module
from ptxstatic.ptx.parser import parse_text

ENV = "PTXSTATIC_FAKE_DEVICE"
DEFAULTS: dict[str, Any] = {
    "name": "ptxstatic fake GPU", "arch": "sm_90", "clock_permission": False, "energy_counter": True,
    "energy_period_s": 0.0, "power_window_s": 0.0, "power_tau_s": 0.0, "wall_seconds_per_call": 0.0,
    "time_scale": 0.0, "clocks": {"mem_mhz": 2619, "core_mhz": 1755},
    "default_clocks": {"mem_mhz": 2619, "core_mhz": 1755},
    "supported": [[2619, 1755], [2619, 1410], [2619, 1005], [1593, 1755], [1593, 1005]], "changes": [],
}
IDLE_W, DYNAMIC_W = 60.0, 200.0


class _Memory:
    """Device memory of the fake: addresses only (the emulator holds the data of a run)."""

    def __init__(self) -> None:
        self.top = 1 << 32

    def alloc(self, nbytes: int) -> int:
        ptr = self.top
        self.top += -(-max(1, nbytes) // 256) * 256
        return ptr

    def free(self, ptr: int) -> None:
        pass

    def upload(self, ptr: int, data: bytes) -> None:
        pass

    def download(self, ptr: int, nbytes: int) -> bytes:
        return bytes(nbytes)


@dataclass(frozen=True)
class _Span:
    """The board's power from ``t0`` to ``t1``: ``start_w`` relaxing toward ``target_w`` with time constant tau."""

    t0: float
    t1: float
    target_w: float
    start_w: float


class PowerTimeline:
    """What the fake board draws over virtual time: back-to-back spans of timed loops, idle before the first."""

    def __init__(self, tau_s: float) -> None:
        self.tau = tau_s
        self.spans: list[_Span] = []
        self.starts: list[float] = []
        self.energy_at_start: list[float] = []  # joules from time 0 to each span's start

    def _level(self, span: _Span, t: float) -> float:
        if self.tau <= 0:
            return span.target_w
        return span.target_w + (span.start_w - span.target_w) * math.exp(-(t - span.t0) / self.tau)

    def _integral(self, span: _Span, t: float) -> float:
        """Joules from the span's start to ``t``."""
        dt = t - span.t0
        if self.tau <= 0:
            return span.target_w * dt
        return span.target_w * dt + (span.start_w - span.target_w) * self.tau * (1 - math.exp(-dt / self.tau))

    def run(self, t0: float, seconds: float, target_w: float) -> None:
        """A loop drawing ``target_w`` (once reached) from ``t0`` for ``seconds``."""
        start = self._level(self.spans[-1], t0) if self.spans else IDLE_W
        self.energy_at_start.append(self.energy_j(t0))
        self.spans.append(_Span(t0, t0 + seconds, target_w, start))
        self.starts.append(t0)

    def _span(self, t: float) -> int:
        return bisect.bisect_right(self.starts, t) - 1

    def level(self, t: float) -> float:
        """Watts drawn at ``t`` (the span that starts at ``t`` counts; after the last span, its final level)."""
        i = self._span(t)
        return IDLE_W if i < 0 else self._level(self.spans[i], min(t, self.spans[i].t1))

    def energy_j(self, t: float) -> float:
        """Joules drawn from time 0 to ``t`` (negative before 0, at idle power)."""
        i = self._span(t)
        if i < 0:
            return IDLE_W * min(t, 0.0)
        span = self.spans[i]
        return self.energy_at_start[i] + self._integral(span, min(t, span.t1))

    def mean_w(self, t: float, window: float) -> float:
        """Mean watts over the ``window`` seconds up to ``t`` (the level at ``t`` without a window)."""
        if window <= 0:
            return self.level(t)
        return (self.energy_j(t) - self.energy_j(t - window)) / window


@dataclass
class FakeState:
    """The board's settings, virtual clock and power, shared by the fake GPU and board."""

    config: dict[str, Any]
    path: Path | None = None
    now: float = 0.0  # virtual seconds
    broken: str = ""  # why the context is unusable, after a fault
    timeline: PowerTimeline = field(init=False)

    def __post_init__(self) -> None:
        self.timeline = PowerTimeline(float(self.config["power_tau_s"]))

    @classmethod
    def load(cls) -> FakeState:
        path = os.environ.get(ENV)
        config = dict(DEFAULTS)
        if path:
            try:
                config.update(json.loads(Path(path).read_text()) if Path(path).is_file() else {})
            except (OSError, json.JSONDecodeError) as exc:
                raise PtxstaticError(f"{path}: bad fake-device file: {exc}") from None
        return cls(config, Path(path) if path else None)

    def save(self) -> None:
        if self.path is not None:
            write_atomic(self.path, json.dumps(self.config, indent=1) + "\n")

    @property
    def core(self) -> int:
        return int(self.config["clocks"]["core_mhz"])

    @property
    def mem(self) -> int:
        return int(self.config["clocks"]["mem_mhz"])


@dataclass
class _Prepared:
    module: int
    kernel: str
    launch: Launch
    nbytes: int
    power_w: float  # what the board draws while it runs
    emulation: Emulation | None = None


@dataclass
class FakeGpu:
    """:class:`ptxstatic.gpu.device.Gpu` on the emulator."""

    state: FakeState
    modules: dict[int, Module] = field(default_factory=dict)
    globals: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    prepared: dict[int, _Prepared] = field(default_factory=dict)
    memory: _Memory = field(default_factory=_Memory)
    _next: int = 0

    def _alive(self) -> None:
        if self.state.broken:
            raise DeviceFault(f"the context is unusable after an earlier fault ({self.state.broken})")

    def _handle(self) -> int:
        self._next += 1
        return self._next

    def info(self) -> GpuInfo:
        return GpuInfo(self.state.config["name"], self.state.config["arch"], "fake:0", 80 << 30, "fake", 132)

    def load(self, ptx: str) -> int:
        self._alive()
        try:
            module = parse_text(ptx, "<fake>")
        except PtxstaticError as exc:
            raise DeviceFault(f"the fake driver rejected the PTX: {exc}", sticky=False) from None
        h = self._handle()
        self.modules[h] = module
        self.globals[h] = {}
        return h

    def unload(self, module: int) -> None:
        del self.modules[module], self.globals[module]

    def prepare(self, module: int, kernel: str, launch: Launch) -> int:
        self._alive()
        args = KernelArgs(self.memory, self.modules[module].function(kernel), launch)
        nbytes = sum(len(data) for _, data in args.buffers.values())
        warps = launch.blocks * launch.warps_per_block
        power = IDLE_W + DYNAMIC_W * min(1.0, warps / 512) * (self.state.core / 1755) ** 2
        h = self._handle()
        self.prepared[h] = _Prepared(module, kernel, launch, nbytes, power)
        return h

    def release(self, prepared: int) -> None:
        del self.prepared[prepared]

    def attributes(self, prepared: int) -> KernelAttributes:
        return KernelAttributes(32, 0, 0)

    def run(self, prepared: int) -> None:
        self._alive()
        p = self.prepared[prepared]
        try:
            p.emulation = emulate(self.modules[p.module], p.kernel, p.launch, max_steps=FAKE_DEVICE_MAX_STEPS,
                                  symbols=self.globals[p.module])
        except PtxstaticError as exc:
            self.state.broken = str(exc)
            raise DeviceFault(f"kernel fault: {exc}") from None
        self.globals[p.module] = p.emulation.globals

    def outputs(self, prepared: int) -> dict[str, bytes]:
        p = self.prepared[prepared]
        if p.emulation is None:
            raise DeviceFault("no run of this launch yet", sticky=False)
        buffers = p.emulation.buffers
        names = [n for n, v in p.launch.args.items() if getattr(v, "output", False) and n in buffers] or list(buffers)
        return {n: buffers[n].tobytes() for n in names}

    def read_global(self, module: int, name: str) -> bytes:
        self._alive()
        if name not in self.globals[module]:
            raise DeviceFault(f"no module variable {name} written by a run", sticky=False)
        return self.globals[module][name].tobytes()

    def launch_seconds(self, p: _Prepared) -> float:
        assert p.emulation is not None
        instructions = p.emulation.thread_instructions
        return 2e-6 + instructions * 1e-12 * 1755 / self.state.core + p.nbytes * 0.3e-12 * 2619 / self.state.mem

    def time(self, prepared: int, chunks: int, per_chunk: int) -> list[float]:
        p = self.prepared[prepared]
        if p.emulation is None:
            self.run(prepared)
        self._alive()
        chunk_ms = self.launch_seconds(p) * per_chunk * 1e3
        times = [chunk_ms * (3.0 if c == 0 and chunks >= 3 else 1.0) for c in range(chunks)]
        seconds = sum(times) / 1e3
        self.state.timeline.run(self.state.now, seconds, p.power_w)
        self.state.now += seconds
        config = self.state.config
        time.sleep(float(config["wall_seconds_per_call"]) + float(config["time_scale"]) * seconds)
        return times

    def reset(self) -> None:
        self.state.broken = ""
        self.modules.clear()
        self.globals.clear()
        self.prepared.clear()

    def close(self) -> None:
        self.reset()


@dataclass
class FakeBoard:
    """:class:`ptxstatic.gpu.device.Board` of the fake GPU."""

    state: FakeState
    _trace: list[Telemetry] = field(default_factory=list)
    _trace_from: float | None = None
    _trace_every: float = 0.0

    def describe(self) -> dict:
        config = self.state.config
        return {"fake": True, "energy_counter": bool(config["energy_counter"]),
                **{k: float(config[k]) for k in ("energy_period_s", "power_window_s", "power_tau_s")}}

    def now(self) -> float:
        return self.state.now

    def _energy_mj(self, t: float) -> float | None:
        """The counter at ``t``: the energy drawn up to its last update."""
        if not self.state.config["energy_counter"]:
            return None
        period = float(self.state.config["energy_period_s"])
        updated = math.floor(t / period + 1e-9) * period if period > 0 else t
        return self.state.timeline.energy_j(updated) * 1e3

    def _reading(self, t: float) -> Telemetry:
        power = self.state.timeline.mean_w(t, float(self.state.config["power_window_s"]))
        return Telemetry(t, power, self.state.core, self.state.mem, int(30 + power / 10), 0, self._energy_mj(t))

    def start_trace(self, interval_s: float) -> None:
        self._trace, self._trace_from, self._trace_every = [], self.state.now, interval_s

    def trace(self) -> list[Telemetry]:
        assert self._trace_from is not None, "no trace started"
        n = math.floor((self.state.now - self._trace_from) / self._trace_every + 1e-9)
        self._trace += [self._reading(self._trace_from + k * self._trace_every) for k in range(len(self._trace), n + 1)]
        return list(self._trace)

    def stop_trace(self) -> list[Telemetry]:
        readings = self.trace()
        if readings[-1].t < self.state.now:
            readings.append(self._reading(self.state.now))
        self._trace_from = None
        return readings

    def clock_state(self) -> ClockState:
        c, d = self.state.config["clocks"], self.state.config["default_clocks"]
        return ClockState(c["mem_mhz"], c["core_mhz"], d["mem_mhz"], d["core_mhz"])

    def supported_clocks(self) -> list[tuple[int, int]]:
        return sorted((int(m), int(c)) for m, c in self.state.config["supported"])

    def clock_permission(self) -> str | None:
        return None if self.state.config["clock_permission"] else "the fake board does not permit clock changes"

    def set_clocks(self, mem_mhz: int, core_mhz: int) -> None:
        reason = self.clock_permission()
        if reason:
            raise PtxstaticError(reason)
        if (mem_mhz, core_mhz) not in self.supported_clocks():
            raise PtxstaticError(f"the fake board does not support mem {mem_mhz} MHz, core {core_mhz} MHz")
        self._write(mem_mhz, core_mhz)

    def restore_clocks(self, state: ClockState) -> None:
        if state.mem_mhz is not None and state.core_mhz is not None:
            self._write(state.mem_mhz, state.core_mhz)

    def _write(self, mem_mhz: int, core_mhz: int) -> None:
        self.state.config["clocks"] = {"mem_mhz": mem_mhz, "core_mhz": core_mhz}
        self.state.config["changes"] = [*self.state.config["changes"], [mem_mhz, core_mhz]]
        self.state.save()

    def close(self) -> None:
        pass


def worker_gpu(index: int = 0) -> FakeGpu:
    """A fake GPU for :class:`ptxstatic.gpu.worker.WorkerGpu` (``factory="ptxstatic.gpu.fake:worker_gpu"``)."""
    return FakeGpu(FakeState.load())


def open_fake() -> Device:
    state = FakeState.load()
    return Device(FakeGpu(state), FakeBoard(state), "fake", ["fake device: deterministic stand-in for tests"])
