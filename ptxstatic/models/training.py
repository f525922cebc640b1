"""Training named models on a dataset and writing them with their model cards (torch and scikit-learn
are imported here, so only commands that train import this module)."""

from __future__ import annotations

import datetime
import platform
from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path

import numpy as np

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.artifacts import save_model
from ptxstatic.models.baselines import GroupForest, MeanSurface, WuClusters
from ptxstatic.models.cv import Folds, duration_classes, grouped_folds, out_of_fold
from ptxstatic.models.forest import AbsoluteForest
from ptxstatic.models.lstm_train import LstmDvfs
from ptxstatic.models.metrics import absolute_metrics, dvfs_report

#: the tuned LSTM (chosen by grouped cross-validation on the GTX Titan X set; see docs/models.md)
TUNED_LSTM: dict = {
    "target": "log_residual", "pooling": "last+mean", "epochs": 100, "encoder_lr": 0.003,
    "lr_schedule": "cosine", "members": 3, "unknown_prob": 0.02,
    "heads": {h: {"hidden": [100, 70], "optimizer": "adam", "lr": 0.003} for h in ("time", "power", "energy")},
}

#: DVFS models by name: what ``train`` and ``evaluate --cv`` build
DVFS_MODELS: dict[str, Callable[[int], object]] = {
    "lstm": lambda seed: LstmDvfs(seed=seed, **TUNED_LSTM),
    "lstm_paper": lambda seed: LstmDvfs(seed=seed),
    "mean_surface": lambda seed: MeanSurface(),
    "group_forest": lambda seed: GroupForest(seed=seed),
    "wu_clusters": lambda seed: WuClusters(seed=seed),
}
#: the kind of predictor each DVFS model is exported as
DVFS_KIND = {"lstm": "lstm", "lstm_paper": "lstm", "mean_surface": "mean_surface",
             "group_forest": "group_forest", "wu_clusters": "wu_clusters"}
GROUPINGS = ("benchmark", "family")


def make_dvfs(name: str, seed: int) -> object:
    """A fresh, unfitted DVFS model by name (a module-level function, so worker processes can receive it)."""
    return DVFS_MODELS[name](seed)


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("ptxstatic", "numpy", "scikit-learn", "torch"):
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
        "split": split, "hyper_parameters": params, "cv_metrics": metrics,
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
    return {"folds": results["folds"], "grouping": results["grouping"], "seed": results["seed"], **entry}


def train_dvfs(
    name: str, data: DvfsDataset, out: str | Path, *, cv_metrics: dict | None = None, seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Train DVFS model ``name`` on all of ``data``; ``cv_metrics`` (see ``cv_metrics_from``) go in the card
    and choose the energy estimate used for decisions."""
    y = data.scaling_surfaces()
    model = make_dvfs(name, seed)
    _fit_with_progress(model, data, y, progress)
    arrays, config = model.export()  # type: ignore[attr-defined]
    split = f"trained on all {len(data)} samples" + (
        f"; metrics from {cv_metrics['folds']}-fold cross-validation grouped by {cv_metrics['grouping']}, "
        "stratified by duration" if cv_metrics else ""
    )
    card = model_card(data, name, jsonable(model.get_params()), split, cv_metrics)  # type: ignore[attr-defined]
    choice = cv_metrics["energy_choice"] if cv_metrics else None
    card["energy_source"] = min(choice, key=lambda k: choice[k]["excess_over_oracle"]) if choice else "head"
    return save_model(out, DVFS_KIND[name], arrays, config, card)


def _fit_with_progress(
    model: object, data: DvfsDataset, y: np.ndarray, progress: Callable[[str, int, int], None] | None,
) -> None:
    """Fit on every sample; an LSTM reports each batch, other models the whole fit."""
    if progress is None:
        model.fit(data.runs, y, data.clocks)  # type: ignore[attr-defined]
        return
    if isinstance(model, LstmDvfs):
        total, done = model.n_batches_total(len(data)), [0]

        def batch(n: int) -> None:
            done[0] += n
            progress("training on all samples", done[0], total)

        model.fit(data.runs, y, data.clocks, progress=batch)
        return
    progress("training on all samples", 0, 1)
    model.fit(data.runs, y, data.clocks)  # type: ignore[attr-defined]
    progress("training on all samples", 1, 1)


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
    card = model_card(data, f"forest_{target}", params, split, cv_metrics)
    card["target_at"] = {"f_mem_mhz": data.clocks.f_mem[data.clocks.reference],
                         "f_core_mhz": data.clocks.f_core[data.clocks.reference]}
    card["features_per_thread"] = "threads_per_cta" not in names
    return save_model(out, "forest", arrays, config, card)


def cross_validation_results(
    data: DvfsDataset, names: list[str], k: int, grouping: str, seed: int = 0, n_jobs: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Every named model cross-validated in the same grouped folds (``forest``: the nested CV of the
    absolute time and power forests), as the dict the evaluation reports render."""
    unknown = [n for n in names if n not in DVFS_MODELS and n != "forest"]
    if unknown:
        raise PtxstaticError(f"unknown models {', '.join(unknown)} (known: {', '.join([*DVFS_MODELS, 'forest'])})")
    y = data.scaling_surfaces()
    folds = cv_folds(data, k, grouping, seed)
    out: dict = {
        "title": f"{k}-fold cross-validation on {data.gpu}, grouped by {grouping}", "samples": len(data),
        "gpu": data.gpu, "folds": k, "grouping": grouping, "seed": seed, "dvfs": {}, "absolute": {},
        "notes": [f"folds grouped by {grouping}, stratified by short/medium/long time at F_max, seed {seed}; "
                  "scaling metrics over every configuration except F_max itself"],
    }
    for name in names:
        if name == "forest":
            for target in ("time", "power"):
                out["absolute"][f"forest_{target}"] = nested_cv_absolute(
                    data, target, k, grouping, seed,
                    on_fold=lambda i, t=target: progress and progress(f"forest_{t}: nested CV", i + 1, k),
                )
            continue
        pred = out_of_fold(data, partial(make_dvfs, name, seed), folds,
                           lambda i, name=name: progress and progress(f"{name}: cross-validation", i + 1, k), n_jobs)
        out["dvfs"][name] = dvfs_report(y, pred, data.clocks.reference)
    return out
