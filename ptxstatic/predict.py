"""The prediction pipeline, callable without the command line: how a kernel's time, power and energy scale
with the GPU's memory and core clocks, its minimum-energy configuration and Pareto set, and its absolute
time and power where the GPU has models for them. Inference runs on numpy arrays (no torch).

Models are loaded once (:func:`load_models`); each kernel is then predicted from its executed sequence
(from static block counts when a launch is given, else its instructions once in program order)::

    models = load_models("gtxtitanx")
    result = predict_kernel(module, "saxpy", models, Launch((64, 1, 1), (256, 1, 1), args={"n": 1 << 20}))
    result["min_energy"]  # {"f_mem_mhz": ..., "f_core_mhz": ..., "time_scaling": ..., "energy_scaling": ...}

Every result is a plain, JSON-ready dict (see :func:`prediction`), the same the ``predict`` command prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.analysis.sequence import SeqItem, kernel_sequence
from ptxstatic.decisions.clocks import ScalingTable, min_energy, pareto_set
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch
from ptxstatic.models.registry import LoadedModel, prediction_models
from ptxstatic.ptx.ast import Function, Module

#: the GPU whose shipped models are used when none is named
DEFAULT_GPU = "gtxtitanx"
#: absolute quantities at the reference configuration, in the order they are reported
ABSOLUTE = ("time_ms", "power_w", "energy_mj")
#: where the energy used for decisions comes from
ENERGY_FROM = ("model", "head", "time*power")


@dataclass(frozen=True)
class Models:
    """The models a prediction uses: a DVFS (scaling) model and/or absolute time and power forests."""

    dvfs: LoadedModel | None
    absolute: tuple[LoadedModel, ...]

    @property
    def first(self) -> LoadedModel:
        return self.dvfs or self.absolute[0]

    @property
    def gpu(self) -> str:
        return str(self.first.card.get("gpu"))


def load_models(gpu: str | None = None, model_path: str | None = None) -> Models:
    """The shipped models of ``gpu`` (default :data:`DEFAULT_GPU`, or the one ``model_path`` is for), or the
    models in ``model_path`` (one model directory, or a GPU's directory of them)."""
    dvfs, absolute = prediction_models(gpu, model_path, DEFAULT_GPU)
    return Models(dvfs, tuple(absolute))


def executed(module: Module, kernel: Function, launch: Launch | None) -> tuple[list, list[str]]:
    """The kernel's executed sequence (with a launch: loops repeated by static block counts) or its
    instructions in program order (without), and notes on how it was obtained."""
    if launch is None:
        return kernel_sequence(kernel), ["no --launch: every instruction counted once, in program order"]
    from ptxstatic.analysis.executed import executed_sequence
    from ptxstatic.counts.static.estimate import estimate_counts

    est = estimate_counts(module, kernel.name, launch)
    seq = executed_sequence(module, kernel.name, est.counts.counts)
    notes = [f"executed sequence from static block counts ({est.method})"]
    if not est.exact:
        notes.append("some block counts are estimates")
    return seq.compact, notes


def predict_kernel(module: Module, kernel: str | Function, models: Models, launch: Launch | None = None, *,
                   max_slowdown: float | None = None, energy_from: str = "model") -> dict:
    """The prediction for one kernel of ``module`` (a dict, see :func:`prediction`).

    ``max_slowdown``: only configurations at most this fraction slower than F_max are candidates for the
    minimum-energy choice and the Pareto set. ``energy_from``: the energy decisions use, one of
    :data:`ENERGY_FROM` (``model``: what the model card chose).
    """
    if energy_from not in ENERGY_FROM:
        raise PtxstaticError(f"unknown energy source {energy_from!r}: one of {', '.join(ENERGY_FROM)}")
    fn = kernel if isinstance(kernel, Function) else _kernel(module, kernel)
    seq, notes = executed(module, fn, launch)
    table = None
    dvfs = models.dvfs
    if dvfs is not None:
        unknown = dvfs.predictor.unknown(seq) if dvfs.kind == "lstm" else {}
        notes += [f"not seen in training, encoded as unknown: {f} {', '.join(v)}" for f, v in unknown.items()]
        source = dvfs.card.get("energy_source", "head") if energy_from == "model" else energy_from
        table = ScalingTable.from_prediction(dvfs.predictor.clocks, dvfs.predictor.predict(seq), source)
    absolute = _absolute(models, seq, launch, notes)
    first = models.first
    desc = {"kind": first.kind, "path": str(first.directory), "name": first.card.get("name", first.kind)}
    return prediction(fn.name, module.filename, models.gpu, desc, table, max_slowdown, absolute, notes,
                      first.card.get("target_at"))


def predict_module(module: Module, models: Models, launch: Launch | None = None, *, kernel: str | None = None,
                   max_slowdown: float | None = None, energy_from: str = "model") -> list[dict]:
    """:func:`predict_kernel` for every kernel of ``module`` (or only ``kernel``)."""
    kernels = [k for k in module.kernels if kernel is None or k.name == kernel]
    if not kernels:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise PtxstaticError(f"{module.filename}: no kernel {kernel!r} (kernels: {names})" if kernel
                             else f"{module.filename}: no kernels")
    return [predict_kernel(module, fn, models, launch, max_slowdown=max_slowdown, energy_from=energy_from)
            for fn in kernels]


def _kernel(module: Module, name: str) -> Function:
    fn = next((k for k in module.kernels if k.name == name), None)
    if fn is None:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise PtxstaticError(f"{module.filename}: no kernel {name!r} (kernels: {names})")
    return fn


def _absolute(models: Models, seq: list[SeqItem], launch: Launch | None, notes: list[str]) -> dict[str, float]:
    """Absolute time (ms) and power (W) at the reference configuration from the GPU's forests."""
    values = {}
    for m in models.absolute:
        p = m.predictor
        if p.needs_launch and launch is None:
            notes.append(f"absolute {p.target} needs --launch: not predicted")
            continue
        value = p.predict_sequence(seq, (launch.threads_per_block, launch.blocks) if launch else None)
        values["time_ms" if p.target == "time" else "power_w"] = round(value, 6)
    if values and not all(m.predictor.needs_launch for m in models.absolute):
        notes.append("absolute values assume the training data's launches (the model has no launch features)")
    return values


def prediction(
    kernel: str, file: str, gpu: str, model: dict, table: ScalingTable | None, max_slowdown: float | None,
    absolute: dict[str, float] | None = None, notes: list[str] | None = None, reference: dict | None = None,
) -> dict:
    """Everything reported for one kernel, as a JSON-ready dict (what ``ptxstatic predict`` prints).

    ``absolute``: predicted time (ms) and/or power (W) at the reference configuration, if known; every
    configuration then also gets absolute values (energy in mJ when both are known). Without a scaling
    ``table`` (a GPU with absolute models only) there are no configurations, and ``reference`` gives the
    clocks the absolute values are for.
    """
    absolute = dict(absolute or {})
    if "time_ms" in absolute and "power_w" in absolute:
        absolute["energy_mj"] = round(absolute["time_ms"] * absolute["power_w"], 6)
    if table is None:
        return {
            "kernel": kernel, "file": file, "gpu": gpu, "model": model, "reference": {**(reference or {}), **absolute},
            "energy_source": None, "max_slowdown": max_slowdown, "min_energy": None, "pareto": [], "configs": [],
            "notes": notes or [],
        }
    clocks = table.clocks
    ref = clocks.reference
    best = min_energy(table, max_slowdown)
    front = pareto_set(table, max_slowdown)
    rows = []
    for i in range(len(clocks)):
        row = {
            "f_mem_mhz": clocks.f_mem[i], "f_core_mhz": clocks.f_core[i],
            "time_scaling": round(float(table.time[i]), 5), "power_scaling": round(float(table.power[i]), 5),
            "energy_scaling": round(float(table.energy[i]), 5),
            "speedup": round(float(table.speedup[i]), 5), "min_energy": i == best, "pareto": i in front,
        }
        if "time_ms" in absolute:
            row["time_ms"] = round(absolute["time_ms"] * float(table.time[i]), 6)
        if "power_w" in absolute:
            row["power_w"] = round(absolute["power_w"] * float(table.power[i]), 4)
        if "time_ms" in absolute and "power_w" in absolute:
            row["energy_mj"] = round(row["time_ms"] * row["power_w"], 6)
        rows.append(row)

    def brief(i: int) -> dict:
        return {
            "f_mem_mhz": clocks.f_mem[i], "f_core_mhz": clocks.f_core[i],
            "time_scaling": round(float(table.time[i]), 5),
            "energy_scaling": round(float(table.decision_energy[i]), 5),
        }

    return {
        "kernel": kernel, "file": file, "gpu": gpu, "model": model,
        "reference": {"f_mem_mhz": clocks.f_mem[ref], "f_core_mhz": clocks.f_core[ref], **absolute},
        "energy_source": table.energy_source,
        "max_slowdown": max_slowdown,
        "min_energy": brief(best),
        "pareto": [brief(i) for i in front],
        "configs": rows,
        "notes": notes or [],
    }
