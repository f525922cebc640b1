"""Training named models on a dataset and writing them with their model cards (torch and scikit-learn
are imported here, so only commands that train import this module)."""

from __future__ import annotations

import datetime
import platform
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.evaluation.metrics import absolute_metrics
from ptxstatic.models.inference.artifacts import save_model
from ptxstatic.models.inference.loading import DEFAULT_DVFS, DEFAULT_WHY
from ptxstatic.models.training.baselines import GroupForest, MeanSurface, WuClusters
from ptxstatic.models.training.calibration import Calibrated
from ptxstatic.models.training.folds import Folds, duration_classes, grouped_folds
from ptxstatic.models.training.forest import AbsoluteForest
from ptxstatic.models.training.lstm import LstmDvfs
from ptxstatic.models.training.physical import PhysicalDvfs

#: the tuned LSTM (chosen by grouped cross-validation on the GTX Titan X set; see docs/models.md)
TUNED_LSTM: dict = {
    "target": "log_residual", "pooling": "last+mean", "epochs": 100, "encoder_lr": 0.003,
    "lr_schedule": "cosine", "members": 3, "unknown_prob": 0.02,
    "heads": {h: {"hidden": [100, 70], "optimizer": "adam", "lr": 0.003} for h in ("time", "power", "energy")},
}

#: DVFS models by name: what ``train`` and ``evaluate --cv`` build (each is calibrated, see ``make_dvfs``)
DVFS_MODELS: dict[str, Callable[[int], object]] = {
    "physical": lambda seed: PhysicalDvfs(seed=seed),
    "lstm": lambda seed: LstmDvfs(seed=seed, **TUNED_LSTM),
    "lstm_paper": lambda seed: LstmDvfs(seed=seed),
    "mean_surface": lambda seed: MeanSurface(),
    "group_forest": lambda seed: GroupForest(seed=seed),
    "wu_clusters": lambda seed: WuClusters(seed=seed),
}
#: the kind of predictor each DVFS model is exported as
DVFS_KIND = {"physical": "physical", "lstm": "lstm", "lstm_paper": "lstm", "mean_surface": "mean_surface",
             "group_forest": "group_forest", "wu_clusters": "wu_clusters"}
#: models whose energy surface is time × power by construction (the others have an energy head)
PRODUCT_ENERGY = ("physical",)
GROUPINGS = ("benchmark", "family")


def make_dvfs(name: str, seed: int, energy_from: str | None = None) -> Calibrated:
    """A fresh, unfitted, calibrated DVFS model by name (a module-level function, so worker processes can
    receive it). ``energy_from``: the energy its calibrated surfaces carry; by default time × power for
    models built that way and the energy head for the others, so that cross-validation scores both."""
    if energy_from is None:
        energy_from = "time*power" if name in PRODUCT_ENERGY else "head"
    return Calibrated(DVFS_MODELS[name](seed), energy_from=energy_from)


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("ptxstatic", "numpy", "scipy", "scikit-learn", "torch"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def cv_folds(data: DvfsDataset, k: int, grouping: str, seed: int = 0, always_train: int = 0) -> Folds:
    """Grouped (by benchmark or family) k folds, stratified by short/medium/long time at the reference."""
    groups = data.grouping(grouping)
    durations = np.log(data.time[:, data.clocks.reference])
    longest = list(np.argsort(-durations)[:always_train])
    return grouped_folds(groups, duration_classes(durations), k, seed, longest)


def model_card(data: DvfsDataset, name: str, params: dict, split: str, metrics: dict | None) -> dict:
    return {
        "name": name, "gpu": data.gpu, "date": datetime.date.today().isoformat(),
        "training_data": {
            "source": data.source, "license": data.license, "samples": len(data),
            "benchmarks": data.names,
            "notes": "sequences of every kernel of a benchmark, concatenated in launch order",
        },
        "split": split, "hyper_parameters": params, "evaluation": metrics,
        "library_versions": library_versions(),
    }


def jsonable(params: dict) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}


def cv_metrics_from(results: dict, name: str, data: DvfsDataset) -> dict:
    """One model's metrics from a ``cross_validation_results`` dict (e.g. ``evaluate --cv --format json``),
    checked to come from the same GPU and samples."""
    if results.get("gpu") != data.gpu or results.get("samples") != len(data):
        raise PtxstaticError(
            f"cross-validation results are for {results.get('gpu')!r} with {results.get('samples')} samples, "
            f"not {data.gpu!r} with {len(data)}"
        )
    entry = results.get("dvfs", {}).get(name) or results.get("absolute", {}).get(name)
    if entry is None:
        raise PtxstaticError(f"the cross-validation results have no model {name!r}")
    out = {"folds": results["folds"], "grouping": results["grouping"], "seed": results["seed"],
           **{k: v for k, v in entry.items() if k != "per_sample"}}
    mean = results.get("dvfs", {}).get("mean_surface")
    if mean is not None and name != "mean_surface":
        out["mean_surface"] = {k: mean[k] for k in ("scaling", "energy_choice")}
    return out


def energy_source(name: str, cv_metrics: dict | None) -> str:
    """The energy a model's predictions use: time × power where the model builds it so; otherwise the one
    whose minimum-energy choice was closer to the oracle in cross-validation (time × power without it)."""
    if name in PRODUCT_ENERGY or not cv_metrics:
        return "time*power"
    choice = cv_metrics["energy_choice"]
    return min(choice, key=lambda k: choice[k]["excess_over_oracle"])


def train_dvfs(
    name: str, data: DvfsDataset, out: str | Path, *, evaluation: dict | None = None, seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Train DVFS model ``name`` on all of ``data`` and calibrate it (inner folds grouped by benchmark family);
    ``evaluation`` (``{"family_cv": ..., "benchmark_cv": ...}``, see ``cv_metrics_from``) goes in the card,
    and family-grouped cross-validation chooses the energy estimate of models with an energy head."""
    evaluation = evaluation or {}
    y = data.scaling_surfaces()
    source = energy_source(name, evaluation.get("family_cv") or evaluation.get("benchmark_cv"))
    model = make_dvfs(name, seed, source)
    model.fit(data.runs, y, data.clocks, groups=data.families(),
              progress=(lambda i, n: progress("training and calibrating", i, n)) if progress else None)
    arrays, config = model.export()
    folds = ", ".join(f"{v['folds']}-fold cross-validation grouped by {v['grouping']}" for v in evaluation.values())
    split = f"trained on all {len(data)} samples; calibrated in {model.inner_folds} inner folds grouped by " \
            f"benchmark family" + (f"; metrics from {folds}, stratified by duration" if folds else "")
    params = {"model": jsonable(model.estimator_.get_params()), "calibration": jsonable(
        {k: v for k, v in model.get_params(deep=False).items() if k != "estimator"})}
    card = model_card(data, name, params, split, evaluation or None)
    card.update(model.card_fields(y))
    card["predict"] = {"default": name == DEFAULT_DVFS, "default_model": DEFAULT_DVFS, "why": DEFAULT_WHY}
    return save_model(out, DVFS_KIND[name], arrays, config, card)


def nested_cv_absolute(
    data: DvfsDataset, target: str, k: int, grouping: str, seed: int = 0, grid: dict | None = None,
    on_fold: Callable[[int], None] | None = None,
) -> dict:
    """Outer grouped k-fold (stratified by duration, the five longest always training) around the grid
    search; returns absolute metrics of the out-of-fold predictions at the reference configuration."""
    names = data.absolute_feature_names()
    X, y = data.feature_matrix(names), data.values(target)[:, data.clocks.reference]
    groups = data.grouping(grouping)
    pred = np.full(len(y), np.nan)
    folds = cv_folds(data, k, grouping, seed, always_train=5)
    for i, (train, test) in enumerate(folds):
        model = AbsoluteForest(target=target, grid=grid, feature_names=names, seed=seed)
        model.fit(X[train], y[train], [groups[j] for j in train])
        pred[test] = model.predict(X[test])
        if on_fold:
            on_fold(i)
    tested = ~np.isnan(pred)
    return {"folds": k, "grouping": grouping, "tested": int(tested.sum()),
            **absolute_metrics(y[tested], pred[tested])}


def train_forest(
    target: str, data: DvfsDataset, out: str | Path, *, cv_metrics: dict | None = None, grouping: str = "benchmark",
    seed: int = 0, grid: dict | None = None, progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Train the absolute ``target`` forest on all of ``data`` (grid search grouped by ``grouping``)."""
    if progress:
        progress("grid search on all samples", 0, 1)
    names = data.absolute_feature_names()
    model = AbsoluteForest(target=target, grid=grid, feature_names=names, seed=seed).fit(
        data.feature_matrix(names), data.values(target)[:, data.clocks.reference], data.grouping(grouping),
    )
    arrays, config = model.export()
    split = f"grid search grouped by {grouping} on all {len(data)} samples" + (
        f"; metrics from nested {cv_metrics['folds']}-fold cross-validation grouped by {cv_metrics['grouping']} "
        "(five longest always in training)" if cv_metrics else ""
    )
    params = {**jsonable(model.get_params()), "best_params": config["best_params"]}
    card = model_card(data, f"forest_{target}", params, split, {"nested_cv": cv_metrics} if cv_metrics else None)
    card["target_at"] = {"f_mem_mhz": data.clocks.f_mem[data.clocks.reference],
                         "f_core_mhz": data.clocks.f_core[data.clocks.reference]}
    card["features_per_thread"] = "threads_per_cta" not in names
    return save_model(out, "forest", arrays, config, card)
