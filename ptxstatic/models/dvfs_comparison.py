"""Every candidate DVFS model side by side: on real applications (validation only, never fitted on),
in cross-validation that holds out whole benchmark families, and in cross-validation by benchmark; with
per-application errors and, for models with intervals, their coverage. Metrics are those of
:func:`ptxstatic.models.metrics.dvfs_report`, so the figures match ``ptxstatic evaluate``.

Training happens here (scikit-learn, scipy), so only evaluation scripts import this module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.models.baselines import MeanSurface
from ptxstatic.models.cv import duration_classes, grouped_folds, out_of_fold
from ptxstatic.models.metrics import dvfs_report, percentage_errors, scaling_metrics
from ptxstatic.models.physical_fit import fit_quantities, fit_shape
from ptxstatic.models.physical_train import PhysicalDvfs
from ptxstatic.models.registry import load_model

GROUPINGS = ("family", "benchmark")


@dataclass(frozen=True)
class Candidate:
    """A model to compare: ``make(seed)`` gives an unfitted estimator with the DVFS model interface."""

    name: str
    make: Callable[[int], object]


def physical_candidates() -> list[Candidate]:
    """The physical models compared by default: each learner, the tree learner without shrinkage."""
    return [
        Candidate("physical_trees", lambda s: PhysicalDvfs("trees", seed=s)),
        Candidate("physical_trees_noshrink", lambda s: PhysicalDvfs("trees", shrink=False, seed=s)),
        Candidate("physical_gbm", lambda s: PhysicalDvfs("gbm", n_estimators=150, min_samples_leaf=3, seed=s)),
        Candidate("physical_neighbors", lambda s: PhysicalDvfs("neighbors", seed=s)),
        Candidate("physical_ridge", lambda s: PhysicalDvfs("ridge", seed=s)),
        Candidate("physical_roofline", lambda s: PhysicalDvfs("roofline", seed=s)),
        Candidate("physical_constant", lambda s: PhysicalDvfs("constant", seed=s)),
        Candidate("mean_surface", lambda s: MeanSurface()),
    ]


def lstm_candidate(epochs: int = 60, members: int = 1) -> Candidate:
    """The tuned LSTM as a quantity learner (torch). Training is the expensive part (seconds per epoch on
    one core), so it is compared with fewer epochs and one member than the shipped LSTM."""
    from ptxstatic.models.physical_lstm import PhysicalLstm

    return Candidate("physical_lstm", lambda s: PhysicalLstm(epochs=epochs, members=members, seed=s))


def folds_for(data: DvfsDataset, grouping: str, k: int = 10, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """The folds of ``ptxstatic evaluate --cv``: grouped, stratified by short/medium/long time at F_max."""
    durations = np.log(data.time[:, data.clocks.reference])
    return grouped_folds(data.grouping(grouping), duration_classes(durations), k, seed)


def _fit(model: object, data: DvfsDataset, index: np.ndarray) -> object:
    runs, y = [data.runs[i] for i in index], data.scaling_surfaces()[index]
    if isinstance(model, PhysicalDvfs):
        families = data.families()
        return model.fit(runs, y, data.clocks, groups=[families[i] for i in index])
    return model.fit(runs, y, data.clocks)  # type: ignore[attr-defined]


def _bounds(model: object, runs: Sequence) -> tuple[np.ndarray, np.ndarray] | None:
    if not isinstance(model, PhysicalDvfs):
        return None
    details = model.predictor_.details(runs)
    return np.stack([d.lower for d in details]), np.stack([d.upper for d in details])


def cross_validate(data: DvfsDataset, candidate: Candidate, grouping: str, k: int = 10, seed: int = 0
                   ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Out-of-fold surfaces (and interval bounds, for physical models) of a candidate."""
    folds = folds_for(data, grouping, k, seed)
    if not isinstance(candidate.make(seed), PhysicalDvfs):
        return out_of_fold(data, lambda: candidate.make(seed), folds), None
    y = data.scaling_surfaces()
    pred, lo, hi = (np.full_like(y, np.nan) for _ in range(3))
    for train, test in folds:
        model = _fit(candidate.make(seed), data, train)
        runs = [data.runs[i] for i in test]
        pred[test] = model.predict(runs)  # type: ignore[attr-defined]
        lo[test], hi[test] = _bounds(model, runs)  # type: ignore[misc]
    return pred, (lo, hi)


def coverage(y: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], reference: int) -> dict[str, float]:
    """Share (%) of true scaling factors inside the intervals, per head, configurations other than F_max."""
    lo, hi = bounds
    keep = np.arange(y.shape[-1]) != reference
    inside = (y >= lo * (1 - 1e-9)) & (y <= hi * (1 + 1e-9))
    return {h: float(100 * inside[:, i][:, keep].mean()) for i, h in enumerate(("time", "power", "energy"))}


def per_sample_errors(y: np.ndarray, pred: np.ndarray, names: Sequence[str], reference: int) -> dict[str, dict]:
    """Time, power and energy MAPE (%) of each sample over the configurations other than F_max."""
    keep = np.arange(y.shape[-1]) != reference
    ape = percentage_errors(y[..., keep], pred[..., keep]).mean(axis=2)
    return {n: {h: round(float(ape[i, j]), 2) for j, h in enumerate(("time", "power", "energy"))}
            for i, n in enumerate(names)}


def _entry(y: np.ndarray, pred: np.ndarray, ref: int, bounds: tuple | None, names: Sequence[str] | None) -> dict:
    out = dvfs_report(y, pred, ref)
    if bounds is not None:
        out["coverage"] = coverage(y, bounds, ref)
    if names is not None:
        out["per_sample"] = per_sample_errors(y, pred, names, ref)
    return out


def quantity_fit(train: DvfsDataset, others: dict[str, DvfsDataset]) -> dict:
    """How well four quantities per kernel reproduce measured surfaces: the GPU's shape learned on
    ``train``, each kernel's quantities fitted to its own surfaces (for ``others`` this is a diagnosis of the
    surface family only, never a model input). MAPE % per head, configurations other than F_max."""
    shape = fit_shape(train.scaling_surfaces(), train.clocks)
    out = {"overlap": shape.overlap, "core_exponent": shape.core_exponent, "fit": {}}
    for name, data in {"training": train, **others}.items():
        y = data.scaling_surfaces()
        fitted = shape.surfaces(fit_quantities(y, shape))
        out["fit"][name] = {h: v["mape"] for h, v in scaling_metrics(y, fitted, data.clocks.reference).items()}
    return out


def compare(train: DvfsDataset, apps: DvfsDataset | None, candidates: Sequence[Candidate], k: int = 10,
            seed: int = 0, groupings: Sequence[str] = GROUPINGS, shipped: Sequence[str | Path] = (),
            shipped_cv: str | Path | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """``{"validation": {model: report}, "family": {...}, "benchmark": {...}, "notes": [...]}``.

    Validation reports carry per-application errors. ``shipped``: model directories scored on the
    validation data; ``shipped_cv``: a directory of ``evaluate --cv --format json`` results
    (``family.json``, ``benchmark.json``) whose rows for those models are added to the CV tables.
    """
    ref = train.clocks.reference
    out: dict = {"samples": len(train), "folds": k, "seed": seed, "validation": {},
                 **{g: {} for g in groupings}, "notes": []}
    for cand in candidates:
        for grouping in groupings:
            if progress:
                progress(f"{cand.name}: {grouping} cross-validation")
            pred, bounds = cross_validate(train, cand, grouping, k, seed)
            out[grouping][cand.name] = _entry(train.scaling_surfaces(), pred, ref, bounds, None)
        if apps is not None:
            if progress:
                progress(f"{cand.name}: validation")
            model = _fit(cand.make(seed), train, np.arange(len(train)))
            pred = model.predict(apps.runs)  # type: ignore[attr-defined]
            out["validation"][cand.name] = _entry(apps.scaling_surfaces(), pred, ref, _bounds(model, apps.runs),
                                                  apps.names)
    for path in shipped:
        loaded = load_model(path)
        name = f"shipped {loaded.card.get('name', loaded.kind)}"
        if apps is not None:
            pred = np.stack([loaded.predictor.predict(r) for r in apps.runs])
            out["validation"][name] = _entry(apps.scaling_surfaces(), pred, ref, None, apps.names)
        for grouping in groupings:
            saved = Path(shipped_cv) / f"{grouping}.json" if shipped_cv else None
            if saved is not None and saved.is_file():
                rows = json.loads(saved.read_text()).get("dvfs", {})
                if loaded.card.get("name") in rows:
                    out[grouping][name] = rows[loaded.card["name"]]
    if shipped_cv:
        out["notes"].append("shipped models' cross-validation rows: the saved results of the same folds "
                            "(evaluate --cv, seed 0), retrained per fold with their shipped settings")
    return out
