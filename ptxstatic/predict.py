"""The prediction pipeline, callable without the command line: how a kernel's time, power and energy scale
with the GPU's memory and core clocks, with intervals, an out-of-distribution report and the shrinkage
toward the training mean surface it caused; its minimum-energy configuration with the expected saving and
its range, and its Pareto set; and, given a launch, its memory traffic and an estimate of its absolute time
(the bottleneck model, whose memory-bound share the DVFS model then follows). Inference
runs on numpy arrays (no torch, scikit-learn or scipy).

Models are loaded once (:func:`load_models`); each kernel is then predicted from its executed sequence
(from static block counts when a launch is given, else its program order with loop bodies weighted by
their nesting depth)::

    models = load_models("gtxtitanx")
    result = predict_kernel(module, "saxpy", models, Launch((64, 1, 1), (256, 1, 1), args={"n": 1 << 20}))
    result["min_energy"]  # {"f_mem_mhz": ..., "energy_scaling": ..., "saving": ..., "saving_low": ...}

Every result is a plain, JSON-ready dict (see :func:`prediction`), the same the ``predict`` command prints.
Every number in it comes from the one table of surfaces of the named model (or, for absolute time, from
the bottleneck estimate, which says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ptxstatic.block_counts import BlockCounts
from ptxstatic.decisions.clock_choice import ScalingTable, min_energy, pareto_set
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.intensity import DEFAULT_TRIPS, loop_weighted_runs
from ptxstatic.features.work import LaunchWork, launch_work
from ptxstatic.hardware.figures import GPU_FIGURES, GpuFigures, known_figures
from ptxstatic.launch import Launch
from ptxstatic.limits import STATIC_MAX_SECONDS
from ptxstatic.models.inference.board_power import PowerEstimate, PowerParameters, launch_power
from ptxstatic.models.inference.bottleneck import BottleneckParameters, TimeEstimate, launch_time
from ptxstatic.models.inference.calibration import DvfsPrediction
from ptxstatic.models.inference.loading import (
    DEFAULT_DVFS,
    LoadedModel,
    bottleneck_parameters,
    not_shipped,
    power_parameters,
    prediction_model,
)
from ptxstatic.models.inference.physical_surfaces import QUANTITIES
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.kernels import find_kernel, find_kernels
from ptxstatic.ptx.launch_binding import BoundLaunch, bind
from ptxstatic.traffic.model import LaunchTraffic, launch_traffic, traffic_summary

if TYPE_CHECKING:
    from ptxstatic.counts.static.estimate import StaticEstimate

#: the GPU whose shipped models are used when none is named
DEFAULT_GPU = "gtxtitanx"
HEADS = ("time", "power", "energy")


@dataclass(frozen=True)
class Models:
    """What a prediction uses: the DVFS model (None for a GPU with published figures only) and the GPU's
    published figures (None for a GPU without them: no absolute estimate)."""

    dvfs: LoadedModel | None
    gpu: str
    figures: GpuFigures | None
    bottleneck: BottleneckParameters  # the absolute time model's parameters for the GPU
    power: PowerParameters | None = None  # the board power model fitted on the GPU, where one is shipped


def load_models(gpu: str | None = None, model_path: str | None = None) -> Models:
    """The default DVFS model shipped for ``gpu`` (default :data:`DEFAULT_GPU`, or the one ``model_path`` is
    for), or the model at ``model_path``; with the GPU's published figures where known."""
    dvfs = prediction_model(gpu, model_path, DEFAULT_GPU)
    name = str(dvfs.card.get("gpu")) if dvfs is not None else (gpu or DEFAULT_GPU)
    figures = known_figures(name)
    if dvfs is None and (figures is None or not figures.has_rates):
        estimable = ", ".join(g.name for g in GPU_FIGURES.values() if g.has_rates)
        raise PtxstaticError(f"{not_shipped(name, 'models')}; GPUs with published figures for an absolute "
                             f"estimate: {estimable}")
    if dvfs is not None:
        dvfs.require_calibration()  # predict reports intervals, which an uncalibrated model cannot give
    return Models(dvfs, name, figures, bottleneck_parameters(name), power_parameters(name))


def executed_estimate(kernel: Function, bound: BoundLaunch | None, max_seconds: float = STATIC_MAX_SECONDS,
                      profile: BlockCounts | None = None) -> tuple[list, list[str], StaticEstimate | None]:
    """The kernel's executed sequence (with a bound launch: loops repeated by static block counts), or its
    program order with each instruction weighted by the assumed trip count to the power of its loop depth
    (without); notes on how it was obtained; and the static estimate (its counts, whether they are exact,
    and why not). ``profile``: measured block counts of the kernel whose branch shares split its
    data-dependent branches."""
    if bound is None:
        note = (f"no --launch: program order, each instruction weighted by {DEFAULT_TRIPS:g}^(loop depth) since the "
                "trip counts are unknown")
        return loop_weighted_runs(kernel), [note], None
    from ptxstatic.analysis.executed import executed_sequence
    from ptxstatic.counts.static.estimate import estimate_counts

    est = estimate_counts(bound, max_seconds=max_seconds, profile=profile)
    seq = executed_sequence(bound.module, kernel.name, est.counts.counts)
    notes = [f"executed sequence from static block counts ({est.method})"]
    summary = est.summary()
    if not summary["exact"]:
        why = summary["reasons"]
        more = f"; and {len(why) - 3} more" if len(why) > 3 else ""
        notes.append(f"block counts are not exact (exact: false): {summary['estimated']} of {summary['blocks']} "
                     "blocks estimated: " + "; ".join(why[:3]) + more)
    return seq.compact, notes, est


def predict_kernel(module: Module, kernel: str | Function, models: Models,
                   launch: Launch | BoundLaunch | None = None, *,
                   max_slowdown: float | None = None, max_seconds: float = STATIC_MAX_SECONDS,
                   estimate: tuple[list, list[str], StaticEstimate | None] | None = None,
                   profile: BlockCounts | None = None) -> dict:
    """The prediction for one kernel of ``module`` (a dict, see :func:`prediction`). ``max_slowdown``: only
    configurations at most this fraction slower than F_max are candidates for the minimum-energy choice and
    the Pareto set. ``launch``: bound here once, unless the caller bound it. ``estimate``: what
    :func:`executed_estimate` gave for this kernel and launch, where the caller has it. ``profile``: as for
    :func:`executed_estimate`."""
    bound = launch if isinstance(launch, BoundLaunch) or launch is None else bind(module, kernel, launch)
    fn = bound.kernel if bound is not None else kernel if isinstance(kernel, Function) else find_kernel(module, kernel)
    seq, notes, est = (estimate if estimate is not None else executed_estimate(fn, bound, max_seconds, profile))
    notes = list(notes)
    counts = est.counts if est is not None else None
    dvfs = models.dvfs
    timing = launch_timing(models, bound, counts, notes)
    table, detail = None, None
    if dvfs is not None:
        share = None
        if timing is not None and dvfs.takes_memory_share:
            share = timing.at_reference.memory_share
            notes.append(f"memory-bound share {share:.2f} from the launch's traffic (DRAM against the core, L2 and "
                         "L1 at the highest clocks), in place of the model's own")
        detail = dvfs.details([seq], [share] if share is not None else None)[0]
        table = ScalingTable.from_prediction(dvfs.predictor.clocks, detail.surfaces,
                                             dvfs.require_calibration().energy_from, detail.lower, detail.upper)
        rising = table.rising_time()
        if rising:
            notes.append(f"the {dvfs.name} model is not physically constrained: time rises with a clock between "
                         f"{rising} pairs of configurations")
    absolute = timing.to_dict() if timing is not None else None
    out = prediction(fn.name, module.filename, models.gpu, _describe(dvfs), table, max_slowdown, detail, absolute,
                     notes)
    out["block_counts"] = est.summary() if est is not None else None
    return out


def predict_module(module: Module, models: Models, launch: Launch | None = None, *, kernel: str | None = None,
                   max_slowdown: float | None = None, max_seconds: float = STATIC_MAX_SECONDS,
                   profile: BlockCounts | None = None) -> list[dict]:
    """:func:`predict_kernel` for every kernel of ``module`` (or only ``kernel``); ``profile``: measured block
    counts of one of them (see :func:`executed_estimate`)."""
    kernels = find_kernels(module, kernel) if kernel is not None else module.kernels
    if not kernels:
        raise PtxstaticError(f"{module.filename}: no kernels")
    if profile is not None and launch is None:
        raise PtxstaticError("--profile needs a launch: the measured branch shares split static block counts")
    if profile is not None and all(fn.name != profile.kernel for fn in kernels):
        raise PtxstaticError(f"the measured counts are of kernel {profile.kernel}, which is not among the kernels "
                             "predicted")
    return [predict_kernel(module, fn, models, launch, max_slowdown=max_slowdown, max_seconds=max_seconds,
                           profile=profile if profile is not None and profile.kernel == fn.name else None)
            for fn in kernels]


def _describe(dvfs: LoadedModel | None) -> dict | None:
    if dvfs is None:
        return None
    return {"name": dvfs.name, "kind": dvfs.kind, "path": str(dvfs.directory), "default": dvfs.name == DEFAULT_DVFS,
            "interval_level": dvfs.calibration.intervals.level if dvfs.calibration else None}


@dataclass(frozen=True)
class Timing:
    """A launch's absolute time at its reference clocks, with its work and traffic."""

    at_reference: TimeEstimate
    work: LaunchWork
    traffic: LaunchTraffic
    figures: GpuFigures
    power: PowerEstimate | None = None  # the board power at the same clocks, where the GPU has a power model

    def to_dict(self) -> dict:
        out = {**self.at_reference.to_dict(), "work": self.work.to_dict(), "traffic": traffic_summary(self.traffic),
               "gpu": self.figures.to_dict()}
        if self.power is not None:
            t = self.at_reference
            out.update(self.power.to_dict())
            out.update({"energy_mj": round(t.time_ms * self.power.power_w, 6),
                        "energy_mj_low": round(t.low_ms * self.power.low_w, 6),
                        "energy_mj_high": round(t.high_ms * self.power.high_w, 6)})
        return out


def reference_clocks(models: Models) -> tuple[float, float]:
    """(memory, core) MHz that absolute time is given at: the DVFS model's F_max, else the board's default
    clocks, else its highest."""
    dvfs, figures = models.dvfs, models.figures
    if dvfs is not None:
        clocks = dvfs.predictor.clocks
        return clocks.f_mem[clocks.reference], clocks.f_core[clocks.reference]
    assert figures is not None
    return figures.default_clocks or (figures.memory_mhz, figures.max_core_mhz)


def launch_timing(models: Models, bound: BoundLaunch | None, counts: BlockCounts | None, notes: list[str]
                  ) -> Timing | None:
    """The launch's memory traffic, work and bottleneck estimate of its time, where it can be had (what it
    assumed and why it could not, appended to ``notes``)."""
    if counts is None or bound is None:
        notes.append("absolute time needs --launch: the work, and so the time, grows with the grid and the arguments")
        return None
    figures = models.figures
    if figures is None:
        notes.append(f"no published figures for GPU {models.gpu!r}: no absolute time estimate")
        return None
    if not figures.has_rates:
        notes.append(f"no published issue rates for {figures.arch} (GPU {models.gpu!r}): no absolute time estimate")
        return None
    traffic = launch_traffic(bound, counts.counts, figures)
    work = launch_work(bound.module, counts, figures, traffic)
    if work.unknown_copies:
        notes.append(f"{work.unknown_copies:g} executed copies of a size not known statically: their bytes are "
                     "not in the absolute estimate")
    notes += [f"traffic: {a}" for a in traffic.assumptions]
    if traffic.sampled.get("stopped"):
        notes.append(f"traffic: the sample of the launch ended early ({traffic.sampled['stopped']}): what it ran "
                     "is scaled by the block counts")
    f_mem, f_core = reference_clocks(models)
    return Timing(launch_time(work, figures, f_mem, f_core, models.bottleneck), work, traffic, figures,
                  launch_power_at(models, work, f_mem, f_core, notes))


def launch_power_at(models: Models, work: LaunchWork, f_mem: float, f_core: float, notes: list[str]
                    ) -> PowerEstimate | None:
    """The board power while the launch runs at the given clocks, where the GPU's power model covers them
    (it is fitted at the board's default clocks); else None, saying why in ``notes``."""
    figures = models.figures
    assert figures is not None
    if models.power is None:
        notes.append(f"no board power model for GPU {models.gpu!r}: no absolute power (the power scaling over "
                     "clocks, where printed, is relative)")
        return None
    if figures.default_clocks is not None and (f_mem, f_core) != tuple(figures.default_clocks):
        notes.append(f"the board power model of {models.gpu} is fitted at its default clocks "
                     f"{figures.default_clocks[0]:g}/{figures.default_clocks[1]:g} MHz, not at {f_mem:g}/{f_core:g} "
                     "MHz: no absolute power")
        return None
    return launch_power(work, figures, f_mem, f_core, models.bottleneck, models.power)


def _rounded(x: float) -> float:
    return round(float(x), 5)


def _config(table: ScalingTable, i: int) -> dict:
    """One configuration: its clocks and, per head, the scaling factor with its interval bounds."""
    clocks = table.clocks
    row: dict = {"f_mem_mhz": clocks.f_mem[i], "f_core_mhz": clocks.f_core[i]}
    for h, (name, values) in enumerate(zip(HEADS, (table.time, table.power, table.energy))):
        row[f"{name}_scaling"] = _rounded(values[i])
        if table.lower is not None and table.upper is not None:
            row[f"{name}_low"], row[f"{name}_high"] = _rounded(table.lower[h, i]), _rounded(table.upper[h, i])
    return row


def _choice(table: ScalingTable, i: int) -> dict:
    """The minimum-energy configuration with the energy it is expected to save against F_max, and the range
    of that saving (from the energy interval)."""
    row = _config(table, i)
    row["saving"] = _rounded(1.0 - table.energy[i])
    if "energy_low" in row:
        row["saving_low"], row["saving_high"] = _rounded(1.0 - row["energy_high"]), _rounded(1.0 - row["energy_low"])
    return row


def _per_config_time(absolute: dict | None, table: ScalingTable, i: int) -> dict:
    """Absolute time at configuration ``i``: the bottleneck estimate at F_max times the table's time scaling."""
    if absolute is None:
        return {}
    out = {"time_ms": round(absolute["time_ms"] * float(table.time[i]), 6)}
    if table.lower is not None and table.upper is not None:
        out["time_ms_low"] = round(absolute["time_ms_low"] * float(table.lower[0, i]), 6)
        out["time_ms_high"] = round(absolute["time_ms_high"] * float(table.upper[0, i]), 6)
    return out


def prediction(
    kernel: str, file: str, gpu: str, model: dict | None, table: ScalingTable | None, max_slowdown: float | None,
    detail: DvfsPrediction | None = None, absolute: dict | None = None, notes: list[str] | None = None,
) -> dict:
    """Everything reported for one kernel, as a JSON-ready dict (what ``ptxstatic predict`` prints).

    ``model``: which DVFS model produced the scaling, the intervals and the decisions; ``absolute``: the
    bottleneck estimate (its ``model`` field says so), whose time at F_max, times each configuration's time
    scaling, is every configuration's ``time_ms``. Without a scaling ``table`` (a GPU with published figures
    only) there are no configurations.
    """
    out: dict = {"kernel": kernel, "file": file, "gpu": gpu, "model": model, "absolute": absolute,
                 "max_slowdown": max_slowdown, "notes": notes or []}
    if table is None:
        return {**out, "reference": None, "energy_source": None, "ood": None, "quantities": None,
                "min_energy": None, "pareto": [], "configs": []}
    clocks, ref = table.clocks, table.clocks.reference
    best, front = min_energy(table, max_slowdown), pareto_set(table, max_slowdown)
    rows = [{**_config(table, i), "speedup": _rounded(table.speedup[i]), "min_energy": i == best,
             "pareto": i in front, **_per_config_time(absolute, table, i)} for i in range(len(clocks))]
    ood = None
    if detail is not None:
        ood = {**detail.ood.to_dict(), "shrinkage": round(detail.mean_weight, 4)}
    quantities = None
    if detail is not None and detail.quantities is not None:
        quantities = {q: round(float(v), 4) for q, v in zip(QUANTITIES, detail.quantities)}
    return {**out, "reference": {"f_mem_mhz": clocks.f_mem[ref], "f_core_mhz": clocks.f_core[ref]},
            "energy_source": table.energy_source, "ood": ood, "quantities": quantities,
            "min_energy": _choice(table, best), "pareto": [_config(table, i) for i in front], "configs": rows}

