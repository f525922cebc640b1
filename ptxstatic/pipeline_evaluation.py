"""Every DVFS model through the whole pipeline on real applications: each application's own PTX, ``predict``
per kernel at the application's own launch (static block counts, the launch's traffic feeding the physical
model's memory-bound share), its kernels combined, against the application's measured surfaces.

A full-pipeline folder (``fullpipe/`` beside a gpuPTXModel validation set, its README says the layout) has
``manifest.json``: per application its kernels, each with its PTX file, launch, scalar arguments and how
often the application launches it; and ``../realbenchmarks/aggregated_dataset_<gpu>.csv``: per application
its summed time, power and energy at every clock configuration. An application's predicted time at a
configuration is the sum over its kernels of launches x the kernel's absolute time at F_max (the bottleneck
estimate, its weight) x its time scaling there; its energy the same sum with each kernel's time x power
scaling (each kernel taken to draw the same power at F_max); its power, energy over time. Scored with the
same figures as ``evaluate`` (:mod:`ptxstatic.models.evaluation.metrics`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch, launch_from_spec, parse_arg
from ptxstatic.loader import load_module
from ptxstatic.models.evaluation.metrics import dvfs_entry
from ptxstatic.models.inference.loading import LoadedModel, bottleneck_parameters
from ptxstatic.predict import Models, executed_estimate, predict_kernel
from ptxstatic.ptx.launch_binding import bind

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class AppKernel:
    ptx: Path
    kernel: str
    launch: str  # the manifest's launch spec (GRID/BLOCK or a launch object as JSON)
    params: dict[str, object]
    count: int


def read_manifest(folder: Path) -> dict[str, list[AppKernel]]:
    """The applications of a full-pipeline folder and their kernels' launches."""
    try:
        raw = json.loads((folder / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PtxstaticError(f"{folder}: no readable full-pipeline manifest.json ({exc})") from None
    out: dict[str, list[AppKernel]] = {}
    for app, entries in raw.items():
        out[app] = [AppKernel(folder / e["ptx"], e["kernel"],
                              e["launch"] if isinstance(e["launch"], str) else json.dumps(e["launch"]),
                              dict(e.get("params", {})), int(e.get("count", 1))) for e in entries]
    return out


def measured_surfaces(csv_path: Path, clocks: ClockTable) -> dict[str, np.ndarray]:
    """Per application its (3, configs) time, power and energy scaling against the reference configuration,
    in the order of ``clocks``."""
    out: dict[str, np.ndarray] = {}
    app, values = None, np.full((3, len(clocks)), np.nan)
    with csv_path.open() as f:
        for row in csv.reader(f):
            if len(row) == 1 and row[0].strip():
                if app is not None:
                    out[app] = values
                app, values = row[0].strip(), np.full((3, len(clocks)), np.nan)
            elif len(row) == 5 and app is not None:
                i = clocks.index(int(row[0]), int(row[1]))
                values[:, i] = [float(row[2]), float(row[3]), float(row[4])]
    if app is not None:
        out[app] = values
    ref = clocks.reference
    return {a: v / v[:, ref:ref + 1] for a, v in out.items() if not np.isnan(v).any()}


def _launch(k: AppKernel) -> Launch:
    """The kernel's launch with its scalar arguments, as the manifest writes them for the command line."""
    launch = launch_from_spec(k.launch)
    args = dict(launch.args)
    for name, value in k.params.items():
        args.update([parse_arg(f"{name}={value}")])
    return Launch(launch.grid, launch.block, launch.shared_bytes, args)


def fullpipe_results(folder: Path, models: list[LoadedModel], progress: Progress | None = None) -> dict:
    """Each model's scores on the applications of ``folder`` (module docstring), in ``evaluate``'s shape."""
    skipped = [m.name for m in models if m.calibration is None]
    models = [m for m in models if m.calibration is not None]
    if not models:
        raise PtxstaticError("no calibrated models to evaluate (predict needs a model's calibration)")
    clocks = models[0].predictor.clocks
    gpu = str(models[0].card.get("gpu"))
    manifest = read_manifest(folder)
    csv_path = folder.parent / "realbenchmarks" / f"aggregated_dataset_{gpu}.csv"
    if not csv_path.is_file():
        raise PtxstaticError(f"{csv_path}: no measurements of {gpu} beside the full-pipeline folder")
    truth = measured_surfaces(csv_path, clocks)
    apps = {a: ks for a, ks in manifest.items() if a in truth}
    if not apps:
        raise PtxstaticError(f"{folder}: none of the manifest's applications is measured in {csv_path}")
    from ptxstatic.hardware.figures import known_figures

    figures = known_figures(gpu)
    params = bottleneck_parameters(gpu)
    modules: dict[Path, object] = {}
    estimates: dict[tuple, tuple] = {}
    preds: dict[str, list[np.ndarray]] = {m.name: [] for m in models}
    bounds: dict[str, list[tuple[np.ndarray, np.ndarray] | None]] = {m.name: [] for m in models}
    for n, kernels in enumerate(apps[a] for a in sorted(apps)):
        per_model: dict[str, list[tuple[float, np.ndarray]]] = {m.name: [] for m in models}
        per_bounds: dict[str, list[tuple[float, np.ndarray, np.ndarray] | None]] = {m.name: [] for m in models}
        for k in kernels:
            module = modules.get(k.ptx) or modules.setdefault(k.ptx, load_module(str(k.ptx), validate=False).module)
            bound = bind(module, k.kernel, _launch(k))  # type: ignore[arg-type]
            key = (k.ptx, k.kernel, k.launch, json.dumps(k.params, sort_keys=True))
            if key not in estimates:
                estimates[key] = executed_estimate(bound.kernel, bound)
            for m in models:
                d = predict_kernel(bound.module, bound.kernel, Models(m, gpu, figures, params), bound,
                                   estimate=estimates[key])
                weight = k.count * (d["absolute"]["time_ms"] if d.get("absolute") else 1.0)
                surfaces = np.array([[c[f"{h}_scaling"] for c in d["configs"]] for h in ("time", "power")])
                per_model[m.name].append((weight, surfaces))
                ends = [np.array([[c.get(f"{h}_{end}", np.nan) for c in d["configs"]] for h in ("time", "power")])
                        for end in ("low", "high")]
                per_bounds[m.name].append(None if np.isnan(ends[0]).any() else (weight, *ends))
        for m in models:
            preds[m.name].append(_combine(per_model[m.name]))
            ends = per_bounds[m.name]
            bounds[m.name].append(None if None in ends else _combine_bounds(ends))  # type: ignore[arg-type]
        if progress:
            progress("full pipeline", n + 1, len(apps))
    names = sorted(apps)
    y = np.stack([truth[a] for a in names])
    out: dict = {"title": f"full pipeline on {gpu}'s {len(names)} validation applications (their PTX and launches)",
                 "samples": len(names), "dvfs": {}, "absolute": {},
                 "notes": [f"{n}: not calibrated, so predict cannot use it: left out" for n in skipped]}
    for m in models:
        b = bounds[m.name]
        stacked = None if None in b else tuple(np.stack([x[i] for x in b]) for i in (0, 1))  # type: ignore[index]
        out["dvfs"][m.name] = dvfs_entry(y, np.stack(preds[m.name]), clocks.reference, stacked, names)
    return out


def _combine_bounds(kernels: list[tuple[float, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """An application's (3, configs) interval bounds from its kernels' (weight, low, high) (time, power)
    bounds: the kernels' time bounds weighted alike, energy from time and power at the same end, power that
    energy over that time (the kernels' power bounds weighted by their time)."""
    weights = np.array([w for w, _, _ in kernels])[:, None]
    out = []
    for end in (1, 2):
        t = (weights * np.array([k[end][0] for k in kernels])).sum(axis=0) / weights.sum()
        e = (weights * np.array([k[end][0] * k[end][1] for k in kernels])).sum(axis=0) / weights.sum()
        out.append((t, e))
    return tuple(np.stack([t, e / t, e]) for t, e in out)  # type: ignore[return-value]


def _combine(kernels: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """An application's (3, configs) scaling from its kernels' (weight, (time, power) scaling)."""
    weights = np.array([w for w, _ in kernels])[:, None]
    time = np.array([s[0] for _, s in kernels])
    energy = np.array([s[0] * s[1] for _, s in kernels])
    t = (weights * time).sum(axis=0) / weights.sum()
    e = (weights * energy).sum(axis=0) / weights.sum()
    return np.stack([t, e / t, e])
