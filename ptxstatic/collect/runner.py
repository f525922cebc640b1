"""``ptxstatic collect``: measure every (benchmark, launch, clock setting) of a manifest into a dataset.

For each sample not yet in the dataset: count blocks with one instrumented run (first time per launch),
time the uninstrumented kernel and measure its energy (:mod:`ptxstatic.collect.measure`), and write
everything in one transaction (:mod:`ptxstatic.dataset.samples`). A kernel that faults or is rejected is
recorded as failed and the run goes on (after restarting the device's worker when the fault is sticky).
Clocks change only under ``--clocks`` (:mod:`ptxstatic.collect.clock_settings`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ptxstatic.collect.clock_settings import ClockGuard, Pair, parse_clocks, repair, setting_name, snap
from ptxstatic.collect.compile import CompiledSource, compile_all
from ptxstatic.collect.features import count_blocks, kernel_record, loaded
from ptxstatic.collect.manifest import BenchSpec, LaunchSpec, Manifest, load_manifest
from ptxstatic.collect.measure import Timing, conditions, measure
from ptxstatic.counts.instrumentation.ptx_pass import Instrumented, instrument
from ptxstatic.dataset.samples import KernelRecord, Sample, SampleStore, utc_now
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import Device, DeviceFault, KernelAttributes, throttle_names
from ptxstatic.gpu.open import open_device
from ptxstatic.hardware.occupancy import ARCHS, GpuSpec
from ptxstatic.limits import DEVICE_CALL_TIMEOUT_S
from ptxstatic.toolchain.nvcc import nvcc_version
from ptxstatic.toolchain.ptxas import PtxasFunction, ptxas_stats


class Ui(Protocol):
    """Where collect reports: messages, and progress of a phase (compiling, measuring)."""

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


@dataclass
class Summary:
    db: str
    total: int  # samples the selection asks for
    already: int  # of those, already in the dataset
    written: int = 0
    failed: int = 0
    settings_changed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


Task = tuple[Pair | None, BenchSpec, int, LaunchSpec]


@dataclass
class _Run:
    """Everything one collect invocation shares between samples."""

    opts: CollectOptions
    manifest: Manifest
    device: Device
    samples: SampleStore
    run_id: int
    arch: str
    sources: dict[Path, CompiledSource | PtxstaticError]
    supported: list[Pair]
    summary: Summary
    target: GpuSpec | None = None
    _instrumented: dict[Path, Instrumented] = field(default_factory=dict)
    _ptxas: dict[Path, dict[str, PtxasFunction] | None] = field(default_factory=dict)

    def ptxas(self, source: CompiledSource, say: Callable[[str], None]) -> dict[str, PtxasFunction] | None:
        """``ptxas -v`` statistics of the source, once per run; None without ptxas or when it fails (said)."""
        if source.path not in self._ptxas:
            try:
                self._ptxas[source.path] = ptxas_stats(source.ptx, self.arch)
            except PtxstaticError as exc:
                say(f"{source.path.name}: no register or occupancy features: {exc}")
                self._ptxas[source.path] = None
        return self._ptxas[source.path]

    def instrumented(self, source: CompiledSource) -> Instrumented:
        """The source's module with block counters, instrumented once per run."""
        if source.path not in self._instrumented:
            self._instrumented[source.path] = instrument(source.module, source_text=source.ptx)
        return self._instrumented[source.path]

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
    done = samples.done(opts.gpu, opts.retry_failed)
    tasks: list[Task] = [(pair, b, i, spec) for pair in pairs for b in benches for i, spec in enumerate(b.launches)
                         if (b.name, spec.key, setting_name(pair)) not in done]
    summary = Summary(str(opts.db), len(pairs) * sum(len(b.launches) for b in benches), 0)
    summary.already = summary.total - len(tasks)
    if not tasks:
        return summary
    arch = opts.arch or info.arch
    described = {"gpu": info.__dict__, "board": board.describe(), "arch": arch, "nvcc": nvcc_version(),
                 "nvcc_flags": manifest.nvcc_flags, "repeat_seconds": opts.repeat_seconds,
                 "clocks": opts.clocks, "notes": device.notes}
    run_id = samples.begin_run(opts.gpu, device.kind, described, str(opts.manifest), manifest.sha256)
    status = "interrupted"
    with ClockGuard(board, store, info.pci_bus_id, ui.say) as guard:
        try:
            needed = sorted({t[1].source for t in tasks})
            ui.phase("compiling", len(needed))
            ui.current(f"{len(needed)} source files for {arch}")
            sources = compile_all(needed, arch, manifest.nvcc_flags, opts.jobs, done=lambda s: ui.advance())
            target = GpuSpec(info.name, arch, info.sms) if arch in ARCHS and info.sms else None
            run = _Run(opts, manifest, device, samples, run_id, arch, sources, supported, summary, target)
            ui.phase("measuring", len(tasks))
            current: object = ()
            for pair, bench, index, spec in tasks:
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
            status = "finished"
        finally:
            summary.settings_changed = list(guard.changes)
            samples.end_run(run_id, status, guard.changes)
    return summary


def _sample(run: _Run, pair: Pair | None, bench: BenchSpec, index: int, spec: LaunchSpec, ui: Ui) -> Sample:
    """Measure one sample and write it (or its failure) in one transaction."""
    gpu, board = run.device.gpu, run.device.board
    sample = Sample(run.opts.gpu, bench.name, spec.key, setting_name(pair), "failed", utc_now(), "",
                    benchmark_id=run.samples.kernel_benchmark(bench.name, spec.key), run_id=run.run_id)
    record: KernelRecord | None = None
    timing: Timing | None = None
    try:
        source = run.sources[bench.source]
        if isinstance(source, PtxstaticError):
            raise source
        if bench.kernel not in source.kernel_names():
            raise PtxstaticError(f"{bench.source.name}: no kernel named {bench.kernel!r} (kernels: "
                                 f"{', '.join(source.kernel_names()) or 'none'})")
        counts = None
        if sample.benchmark_id is None:
            counts = count_blocks(gpu, run.instrumented(source), bench.kernel, spec.launch)
        with loaded(gpu, source.ptx, bench.kernel, spec.launch) as (_, prepared):
            attributes = gpu.attributes(prepared)
            _attributes(sample, attributes)
            if counts is not None:
                record = kernel_record(source, bench.kernel, counts, run.target, run.ptxas(source, ui.say),
                                       run.label(bench))
            seconds = run.opts.repeat_seconds or spec.min_seconds
            timing = measure(gpu, board, prepared, spec.repeats, seconds)
    except DeviceFault as exc:
        sample.error = str(exc)
        if exc.sticky:
            gpu.reset()
    except PtxstaticError as exc:
        sample.error = str(exc)
    except Exception as exc:  # a defect met by one kernel must not end a long run: recorded, reported, skipped
        sample.error = f"internal error: {type(exc).__name__}: {exc}"
    config = measurement = None
    if timing is not None:
        config, measurement = _fill(run, sample, pair, timing)
    sample.finished_at = utc_now()
    run.samples.write(sample, run.manifest.suite, index, record, config, measurement)
    return sample


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
    sample.sm_clock_mhz, sample.sm_clock_min_mhz = cond.sm_clock_mhz, cond.sm_clock_min_mhz
    sample.sm_clock_max_mhz, sample.mem_clock_mhz = cond.sm_clock_max_mhz, cond.mem_clock_mhz
    sample.temperature_c, sample.temperature_max_c = cond.temperature_c, cond.temperature_max_c
    sample.throttle_reasons, sample.throttle_names = cond.throttle, ",".join(throttle_names(cond.throttle))
    sample.warnings = json.dumps(warnings)
    measurement = Measurement(f_mem, f_core, timing.time_ms, timing.power_w, timing.energy_per_launch_mj,
                              timing.launches, timing.mad_ms / timing.median_ms if timing.median_ms else None,
                              timing.power_spread)
    return ClockConfig(f_mem, f_core, is_default=pair is None), measurement

