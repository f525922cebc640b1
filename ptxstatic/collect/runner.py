"""``ptxstatic collect``: measure every (benchmark, launch, clock setting) of a manifest into a dataset.

Samples go in priority order (:mod:`ptxstatic.collect.plan`). Sources compile, parse and instrument on
worker threads in the order the samples need them (:mod:`ptxstatic.collect.sources`), and each module and
its instrumented copy is loaded on the device once per run. Before the first sample the board is probed
(how often its energy counter updates, how long its power reading takes to follow a kernel). For each
sample not yet in the dataset: count blocks with one instrumented run (first time per launch), time the
uninstrumented kernel and measure its power until repeats agree (:mod:`ptxstatic.collect.measure`), and
write everything in one transaction (:mod:`ptxstatic.dataset.samples`). A kernel that faults or is
rejected is recorded as failed and the run goes on (after restarting the device's worker when the fault is
sticky). Under a budget, a sample starts only when it is expected to end in time. Clocks change only under
``--clocks`` (:mod:`ptxstatic.collect.clock_settings`).
"""

from __future__ import annotations

import fcntl
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import numpy as np

from ptxstatic.collect.clock_settings import ClockGuard, Pair, parse_clocks, repair, setting_name, snap
from ptxstatic.collect.compile import CompiledSource
from ptxstatic.collect.features import count_blocks, kernel_record, quietly
from ptxstatic.collect.manifest import BenchSpec, LaunchSpec, Manifest, load_manifest
from ptxstatic.collect.measure import (
    POWER_PRECISION,
    PROBE_MAX_S,
    REPEATS,
    WARMUP_FRACTION,
    BoardTiming,
    Timing,
    board_words,
    conditions,
    measure,
    probe,
)
from ptxstatic.collect.plan import Budget, Task, ordered
from ptxstatic.collect.sources import SourcePrep, SourceWork
from ptxstatic.dataset.samples import KernelRecord, Sample, SampleStore, utc_now
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import Device, DeviceFault, KernelAttributes, throttle_names
from ptxstatic.gpu.open import open_device
from ptxstatic.hardware.occupancy import ARCHS, GpuSpec
from ptxstatic.limits import BUDGET_RESERVE_S, DEVICE_CALL_TIMEOUT_S
from ptxstatic.toolchain.nvcc import nvcc_version

#: samples after which a budgeted run says how many of the rest fit
OUTLOOK_AFTER = 3


class Ui(Protocol):
    """Where collect reports: messages, and progress of a phase (measuring)."""

    def say(self, text: str) -> None: ...

    def phase(self, name: str, total: int) -> None: ...

    def current(self, text: str) -> None:
        """What is being worked on now."""

    def advance(self) -> None:
        """One unit of the phase is done."""


class SilentUi:
    def say(self, text: str) -> None:
        pass

    def phase(self, name: str, total: int) -> None:
        pass

    def current(self, text: str) -> None:
        pass

    def advance(self) -> None:
        pass


@dataclass(frozen=True)
class CollectOptions:
    manifest: Path
    db: Path
    gpu: str  # the GPU's name in the dataset
    device: str = "cuda"
    index: int = 0
    clocks: str | None = None  # None: never touch clocks; "all" or "MEM:CORE,..." for a sweep
    repeat_seconds: float | None = None  # overrides the manifest's min_seconds
    only: str | None = None
    retry_failed: bool = False
    arch: str | None = None  # default: the device's
    timeout_s: float = DEVICE_CALL_TIMEOUT_S
    jobs: int | None = None
    budget_s: float | None = None  # stop starting samples that would not end within this many seconds
    power_precision: float = POWER_PRECISION
    started: float = field(default_factory=time.monotonic)  # when the budget began


@dataclass
class Summary:
    db: str
    total: int  # samples the selection asks for
    already: int  # of those, already in the dataset
    written: int = 0
    failed: int = 0
    settings_changed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    budget_s: float | None = None
    left: int = 0  # samples the budget left for the next run
    elapsed_s: float = 0.0
    overhead: dict[str, float] | None = None  # per-sample overhead measured (median, high)
    board: dict | None = None  # what the probe measured of the board


@dataclass
class _Run:
    """Everything one collect invocation shares between samples."""

    opts: CollectOptions
    manifest: Manifest
    device: Device
    samples: SampleStore
    run_id: int
    arch: str
    prep: SourcePrep
    supported: list[Pair]
    summary: Summary
    budget: Budget
    target: GpuSpec | None = None
    timing: BoardTiming | None = None
    aside_s: float = 0.0  # wall seconds of work done once per run or source (probe, waiting for a source)
    said: set[str] = field(default_factory=set)
    modules: dict[tuple[Path, bool], int] = field(default_factory=dict)  # (source, instrumented) -> handle
    counters: dict[Path, np.ndarray] = field(default_factory=dict)  # counters after the last instrumented run

    def module(self, path: Path, text: str, instrumented: bool) -> int:
        """The source's module (or its instrumented copy) on the device, loaded once per run."""
        if (path, instrumented) not in self.modules:
            self.modules[(path, instrumented)] = self.device.gpu.load(text)
        return self.modules[(path, instrumented)]

    def reset(self) -> None:
        """After a sticky fault: every handle is gone."""
        self.device.gpu.reset()
        self.modules.clear()
        self.counters.clear()

    def forget(self, path: Path) -> None:
        """Unload the source's instrumented module (loaded afresh, counters at zero, when next needed)."""
        handle = self.modules.pop((path, True), None)
        self.counters.pop(path, None)
        if handle is not None:
            with quietly():
                self.device.gpu.unload(handle)

    def unload(self) -> None:
        for handle in self.modules.values():
            with quietly():
                self.device.gpu.unload(handle)
        self.modules.clear()

    def nominal(self, spec: LaunchSpec) -> float:
        """Board seconds a sample of ``spec`` asks for (the probe's longest, before the board is probed)."""
        seconds = self.opts.repeat_seconds or spec.min_seconds
        if self.timing is None:
            return seconds * (1 + WARMUP_FRACTION) + PROBE_MAX_S
        return REPEATS * self.timing.repeat_seconds(seconds, self.opts.power_precision) + WARMUP_FRACTION * seconds

    def label(self, bench: BenchSpec) -> str:
        base = self.manifest.path.resolve().parent
        try:
            return str(bench.source.relative_to(base))
        except ValueError:
            return bench.source.name


def collect(opts: CollectOptions, ui: Ui | None = None) -> Summary:
    """Measure what the manifest selection asks for and is not yet in the dataset (module docstring)."""
    ui = ui or SilentUi()
    manifest = load_manifest(opts.manifest)
    benches = manifest.select(opts.only)
    if opts.repeat_seconds is not None and opts.repeat_seconds <= 0:
        raise PtxstaticError(f"--repeat-seconds must be positive, not {opts.repeat_seconds}")
    if opts.budget_s is not None and opts.budget_s <= 0:
        raise PtxstaticError(f"--budget must be positive, not {opts.budget_s}")
    if not 0 < opts.power_precision < 1:
        raise PtxstaticError(f"--power-precision must be a fraction between 0 and 1, not {opts.power_precision}")
    lock = dataset_lock(opts.db)
    store = DatasetStore(opts.db, create=True)
    try:
        samples = SampleStore(store)
        device = open_device(opts.device, opts.index, opts.timeout_s)
        try:
            return _collect(opts, ui, manifest, benches, store, samples, device)
        finally:
            device.close()
    finally:
        store.close()
        lock.close()


def dataset_lock(db: str) -> IO[bytes]:
    """An exclusive lock on ``DB.lock`` for the run (released when the file is closed or the process ends);
    another ``collect`` holding it is refused before anything is opened."""
    path = Path(f"{db}.lock")
    handle = path.open("ab")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise PtxstaticError(f"{db}: another ptxstatic collect is writing this dataset (it holds {path}); "
                             "wait for it to finish or give another --db") from None
    return handle


def _collect(opts: CollectOptions, ui: Ui, manifest: Manifest, benches: list[BenchSpec], store: DatasetStore,
             samples: SampleStore, device: Device) -> Summary:
    info = device.gpu.info()
    board = device.board
    repair(board, store, info.pci_bus_id, ui.say)
    supported = board.supported_clocks()
    pairs: list[Pair | None] = [None]
    if opts.clocks is not None:
        reason = board.clock_permission()
        if reason:
            raise PtxstaticError(f"--clocks: changing clocks is not permitted here: {reason}. Nothing was changed; "
                                 "run without --clocks to measure at the current settings")
        pairs = list(parse_clocks(opts.clocks, supported, board.clock_state().mem_mhz))
    if opts.gpu not in store.gpus():
        with store.transaction():
            store.add_gpu(opts.gpu, [], description=f"{info.name} ({info.arch}), {info.driver}",
                          source="measured with ptxstatic collect")
    tasks = ordered(pairs, benches, samples.done(opts.gpu, opts.retry_failed))
    summary = Summary(str(opts.db), len(pairs) * sum(len(b.launches) for b in benches), 0, budget_s=opts.budget_s)
    summary.already = summary.total - len(tasks)
    if not tasks:
        return summary
    arch = opts.arch or info.arch
    described = {"gpu": info.__dict__, "board": board.describe(), "arch": arch, "nvcc": nvcc_version(),
                 "nvcc_flags": manifest.nvcc_flags, "repeat_seconds": opts.repeat_seconds,
                 "clocks": opts.clocks, "budget_s": opts.budget_s, "power_precision": opts.power_precision,
                 "notes": device.notes}
    run_id = samples.begin_run(opts.gpu, device.kind, described, str(opts.manifest), manifest.sha256)
    target = GpuSpec(info.name, arch, info.sms) if arch in ARCHS and info.sms else None
    with SourcePrep(arch, manifest.nvcc_flags, opts.jobs) as prep:
        counting = {t[1].source for t in tasks if samples.kernel_benchmark(t[1].name, t[3].key) is None}
        prep.submit(list(dict.fromkeys(t[1].source for t in tasks)), counting)
        run = _Run(opts, manifest, device, samples, run_id, arch, prep, supported, summary,
                   Budget(opts.budget_s or math.inf, opts.started), target)
        status = "interrupted"
        with ClockGuard(board, store, info.pci_bus_id, ui.say) as guard:
            try:
                status = _measure_all(run, tasks, guard, ui)
            finally:
                run.unload()
                summary.settings_changed = list(guard.changes)
                summary.elapsed_s = time.monotonic() - opts.started
                summary.overhead = run.budget.overhead()
                summary.board = run.timing.to_dict() if run.timing else None
                samples.end_run(run_id, status, guard.changes, summary.board)
    return summary


def _measure_all(run: _Run, tasks: list[Task], guard: ClockGuard, ui: Ui) -> str:
    """Every task in order while the budget lasts: ``finished``, or ``budget`` with samples left."""
    summary, budget = run.summary, run.budget
    if run.opts.budget_s is not None:
        ui.say(f"budget {run.opts.budget_s:.0f} s for {len(tasks)} samples: the middle launch of every benchmark "
               "first (source files interleaved), then the other launches; rerun the same command to continue")
    ui.phase("measuring", len(tasks))
    current: object = ()
    for i, (pair, bench, index, spec) in enumerate(tasks):
        if not budget.fits(run.nominal(spec)):
            summary.left = len(tasks) - i
            ui.say(f"time budget: {summary.left} samples left for the next run ({budget.left():.0f} s left, the "
                   f"next sample needs about {budget.estimate(run.nominal(spec)):.1f} s)")
            return "budget"
        if pair != current:
            guard.apply(pair)
            current = pair
        ui.current(f"{bench.name}[{index}] {setting_name(pair)}")
        sample = _sample(run, pair, bench, index, spec, ui)
        ui.advance()
        summary.written += 1
        if sample.status == "failed":
            summary.failed += 1
            summary.failures.append(f"{bench.name}[{index}] {setting_name(pair)}: {sample.error}")
            ui.say(f"failed: {bench.name}[{index}] {setting_name(pair)}: {sample.error}")
        if run.opts.budget_s is not None and len(budget.overheads) == OUTLOOK_AFTER and sample.status == "ok":
            ui.say(budget.outlook([run.nominal(t[3]) for t in tasks[i + 1:]]))
    return "finished"


def _sample(run: _Run, pair: Pair | None, bench: BenchSpec, index: int, spec: LaunchSpec, ui: Ui) -> Sample:
    """Measure one sample and write it (or its failure) in one transaction."""
    started, aside = time.monotonic(), run.aside_s
    sample = Sample(run.opts.gpu, bench.name, spec.key, setting_name(pair), "failed", utc_now(), "",
                    benchmark_id=run.samples.kernel_benchmark(bench.name, spec.key), run_id=run.run_id)
    record: KernelRecord | None = None
    timing: Timing | None = None
    try:
        waiting = time.monotonic()
        work = run.prep.get(bench.source)
        run.aside_s += time.monotonic() - waiting
        for note in work.notes:
            if note not in run.said:
                run.said.add(note)
                ui.say(note)
        source = work.compiled
        if bench.kernel not in source.kernel_names():
            raise PtxstaticError(f"{bench.source.name}: no kernel named {bench.kernel!r} (kernels: "
                                 f"{', '.join(source.kernel_names()) or 'none'})")
        if sample.benchmark_id is None:
            record = _record(run, work, bench, spec)
        timing = _timed(run, sample, source, bench, spec, ui)
    except DeviceFault as exc:
        sample.error = str(exc)
        if exc.sticky:
            run.reset()
    except PtxstaticError as exc:
        sample.error = str(exc)
    except Exception as exc:  # a defect met by one kernel must not end a long run: recorded, reported, skipped
        sample.error = f"internal error: {type(exc).__name__}: {exc}"
    config = measurement = None
    if timing is not None:
        config, measurement = _fill(run, sample, pair, timing)
    def spent() -> float:
        return time.monotonic() - started - (run.aside_s - aside)

    sample.finished_at, sample.wall_s = utc_now(), spent()
    if timing is not None:
        sample.overhead_s = sample.wall_s - timing.loop_wall_s
    run.samples.write(sample, run.manifest.suite, index, record, config, measurement)
    if timing is not None:  # the transaction is the sample's cost too
        run.budget.record(spent(), timing.loop_wall_s, timing.measured_s, run.nominal(spec))
    return sample


def _record(run: _Run, work: SourceWork, bench: BenchSpec, spec: LaunchSpec) -> KernelRecord:
    """Block counts from the instrumented kernel (its module loaded once per run) and the features they give."""
    assert work.instrumented is not None, "a source with launches to count is instrumented"
    path = bench.source
    module = run.module(path, work.instrumented.text, True)
    try:
        counts, run.counters[path] = count_blocks(run.device.gpu, module, work.instrumented, bench.kernel,
                                                  spec.launch, run.counters.get(path))
    except BaseException:  # its counters may have moved unread: the next count starts from a fresh module
        run.forget(path)
        raise
    return kernel_record(work.compiled, bench.kernel, counts, run.target, work.ptxas, run.label(bench))


def _timed(run: _Run, sample: Sample, source: CompiledSource, bench: BenchSpec, spec: LaunchSpec, ui: Ui) -> Timing:
    """The kernel's attributes into ``sample``, and its measurement (the board probed first, once per run)."""
    gpu, board = run.device.gpu, run.device.board
    prepared = gpu.prepare(run.module(bench.source, source.ptx, False), bench.kernel, spec.launch)
    try:
        _attributes(sample, gpu.attributes(prepared))
        seconds = run.opts.repeat_seconds or spec.min_seconds
        if run.timing is None:
            t = time.monotonic()
            run.timing = probe(gpu, board, prepared, spec.repeats, seconds)
            run.aside_s += time.monotonic() - t
            ui.say(f"board: {board_words(run.timing.to_dict())}; samples of {REPEATS} or more repeats of "
                   f"{run.timing.repeat_seconds(seconds, run.opts.power_precision):.3f} s")
        deadline = run.budget.deadline - BUDGET_RESERVE_S
        return measure(gpu, board, prepared, spec.repeats, seconds, run.timing, run.opts.power_precision,
                       deadline if math.isfinite(deadline) else None)
    finally:
        with quietly():
            gpu.release(prepared)


def _attributes(sample: Sample, attributes: KernelAttributes) -> None:
    sample.registers = attributes.registers
    sample.static_shared_bytes = attributes.static_shared_bytes
    sample.local_bytes = attributes.local_bytes


def _fill(run: _Run, sample: Sample, pair: Pair | None, timing: Timing) -> tuple[ClockConfig, Measurement]:
    """Copy the measured values into the sample; the clock configuration is the one the GPU actually ran at."""
    cond = conditions(timing.telemetry)
    warnings = list(timing.warnings)
    mems = sorted({m for m, _ in run.supported})
    f_mem = snap(cond.mem_clock_mhz, mems)
    f_core = snap(cond.sm_clock_mhz, sorted({c for m, c in run.supported if m == f_mem}))
    if f_mem is None or f_core is None:
        state = run.device.board.clock_state()
        f_mem = f_mem if f_mem is not None else state.mem_mhz or 0
        f_core = f_core if f_core is not None else state.core_mhz or 0
        warnings.append("the board reported no clocks during the loop: the dataset records the applications "
                        "clocks (0 when unknown)")
    sample.status, sample.error = "ok", None
    sample.f_mem, sample.f_core = f_mem, f_core
    sample.time_ms, sample.time_median_ms, sample.time_mad_ms = timing.time_ms, timing.median_ms, timing.mad_ms
    sample.launches, sample.chunks, sample.chunks_kept = timing.launches, timing.chunks, timing.kept
    sample.loop_s, sample.energy_mj, sample.power_w = timing.loop_s, timing.energy_mj, timing.power_w
    sample.power_source, sample.sampled_power_w = timing.power_source, timing.sampled_power_w
    sample.power_samples = timing.power_samples
    sample.power_repeats, sample.power_repeat_spread = timing.repeats, timing.repeat_spread
    sample.power_steady, sample.power_warmup_s = int(timing.steady), timing.warmup_s
    sample.power_resolution, sample.counter_updates = timing.resolution, timing.counter_updates
    sample.power_trust, sample.measured_s = timing.trust, timing.measured_s
    assert run.timing is not None, "the board is probed before the first measurement"
    sample.counter_period_s, sample.power_window_s = run.timing.period_s, run.timing.window_s
    sample.sm_clock_mhz, sample.sm_clock_min_mhz = cond.sm_clock_mhz, cond.sm_clock_min_mhz
    sample.sm_clock_max_mhz, sample.mem_clock_mhz = cond.sm_clock_max_mhz, cond.mem_clock_mhz
    sample.temperature_c, sample.temperature_max_c = cond.temperature_c, cond.temperature_max_c
    sample.throttle_reasons, sample.throttle_names = cond.throttle, ",".join(throttle_names(cond.throttle))
    sample.warnings = json.dumps(warnings)
    measurement = Measurement(f_mem, f_core, timing.time_ms, timing.power_w, timing.energy_per_launch_mj,
                              timing.launches, timing.mad_ms / timing.median_ms if timing.median_ms else None,
                              timing.power_spread)
    return ClockConfig(f_mem, f_core, is_default=pair is None), measurement

