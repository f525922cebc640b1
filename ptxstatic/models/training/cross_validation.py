"""DVFS models side by side in cross-validation on the training set: folds that hold out whole benchmark
families or single benchmarks, every model retrained per fold (with its calibration, on inner folds of
the fold's training part), scored with :func:`ptxstatic.models.evaluation.metrics.dvfs_report` and, where the model
has intervals, their coverage. Saved results of models too expensive to retrain (the LSTM) are added as
such. Training happens here (scikit-learn, scipy; torch for the LSTM), so only ``evaluate --cv`` and
evaluation scripts import this module; scoring trained models on a dataset is
:mod:`ptxstatic.models.evaluation.scoring` (numpy only).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.evaluation.metrics import dvfs_entry, scaling_metrics
from ptxstatic.models.training.baselines import MeanSurface
from ptxstatic.models.training.calibration import Calibrated
from ptxstatic.models.training.folds import out_of_fold
from ptxstatic.models.training.physical import PhysicalDvfs
from ptxstatic.models.training.surface_fit import fit_quantities, fit_shape
from ptxstatic.models.training.train import DVFS_MODELS, PRODUCT_ENERGY, cv_folds, make_dvfs, nested_cv_absolute

GROUPINGS = ("family", "benchmark")
PRODUCT = "time*power"


@dataclass(frozen=True)
class Candidate:
    """A model to compare: ``make(seed)`` gives an unfitted :class:`Calibrated` estimator."""

    name: str
    make: Callable[[int], Calibrated]
    energy_source: str | None = None  # the energy its predictions use, where fixed (else the better is chosen)


def _physical(learner: str, shrink: bool = True, **params: object) -> Callable[[int], Calibrated]:
    return lambda s: Calibrated(PhysicalDvfs(learner, seed=s, **params), shrink=shrink)  # type: ignore[arg-type]


def physical_candidates() -> list[Candidate]:
    """The physical learners compared in docs/models.md, and the mean surface."""
    return [
        Candidate("physical_trees", _physical("trees"), PRODUCT),
        Candidate("physical_trees_noshrink", _physical("trees", shrink=False), PRODUCT),
        Candidate("physical_gbm", _physical("gbm", n_estimators=150, min_samples_leaf=3), PRODUCT),
        Candidate("physical_neighbors", _physical("neighbors"), PRODUCT),
        Candidate("physical_ridge", _physical("ridge"), PRODUCT),
        Candidate("physical_roofline", _physical("roofline"), PRODUCT),
        Candidate("physical_constant", _physical("constant"), PRODUCT),
        Candidate("mean_surface", lambda s: Calibrated(MeanSurface()), PRODUCT),
    ]


def named_candidates(names: Sequence[str]) -> list[Candidate]:
    """The models ``train`` builds, by name (``DVFS_MODELS``)."""
    unknown = [n for n in names if n not in DVFS_MODELS]
    if unknown:
        raise PtxstaticError(f"unknown models {', '.join(unknown)} (known: {', '.join([*DVFS_MODELS, 'forest'])})")
    return [Candidate(n, partial(make_dvfs, n), PRODUCT if n in PRODUCT_ENERGY else None) for n in names]


def lstm_candidate(epochs: int = 60, members: int = 1) -> Candidate:
    """The tuned LSTM as a quantity learner (torch). Training is the expensive part (seconds per epoch on
    one core), so it is compared with fewer epochs and one member than the shipped LSTM."""
    from ptxstatic.models.training.physical_lstm import PhysicalLstm

    return Candidate("physical_lstm", lambda s: Calibrated(PhysicalLstm(epochs=epochs, members=members, seed=s)),
                     PRODUCT)


def cross_validate(data: DvfsDataset, candidate: Candidate, grouping: str, k: int = 10, seed: int = 0,
                   n_jobs: int = 1, on_fold: Callable[[int], None] | None = None) -> dict:
    """A candidate's cross-validation entry (``metrics.dvfs_entry``: metrics and interval coverage)."""
    folds = cv_folds(data, k, grouping, seed)
    pred, lo, hi = out_of_fold(data, partial(candidate.make, seed), folds, on_fold, n_jobs)
    return _fixed(dvfs_entry(data.scaling_surfaces(), pred, data.clocks.reference, (lo, hi)), candidate)


def _fixed(entry: dict, candidate: Candidate) -> dict:
    if candidate.energy_source:
        entry["energy_source"] = candidate.energy_source
    return entry


def evaluation_results(doc: object) -> dict:
    """The results in an ``evaluate --format json`` document (its ``evaluation``), or in the bare results
    object that ``evaluate`` wrote before its output took the shape of every command's (saved files)."""
    if not isinstance(doc, dict):
        raise PtxstaticError("not the JSON output of ptxstatic evaluate")
    if doc.get("command") == "evaluate" and isinstance(doc.get("evaluation"), dict):
        return doc["evaluation"]
    if "dvfs" in doc and "command" not in doc:
        return doc
    raise PtxstaticError("not the JSON output of ptxstatic evaluate")


def saved_rows(path: str | Path, data: DvfsDataset, grouping: str, k: int, seed: int) -> dict[str, dict]:
    """Rows of an earlier ``evaluate --cv --format json`` of the same data, folds and seed, each marked
    ``saved`` (empty if the file does not exist)."""
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        saved = evaluation_results(json.loads(p.read_text()))
    except (OSError, json.JSONDecodeError, PtxstaticError) as exc:
        raise PtxstaticError(f"{p}: cannot read saved cross-validation results ({exc})") from None
    same = (saved.get("gpu"), saved.get("samples"), saved.get("grouping"), saved.get("folds"), saved.get("seed"))
    if same != (data.gpu, len(data), grouping, k, seed):
        raise PtxstaticError(f"{p}: saved results are of other data or folds ({same})")
    return {n: {**r, "saved": r.get("saved") or f"{p.name}, {saved.get('date', 'undated')}"}
            for n, r in saved.get("dvfs", {}).items()}


def cross_validation_results(
    data: DvfsDataset, names: list[str], k: int, grouping: str, seed: int = 0, n_jobs: int = 1,
    progress: Callable[[str, int, int], None] | None = None, saved: str | Path | None = None,
) -> dict:
    """Every named model cross-validated in the same grouped folds (``forest``: the nested CV of the
    absolute time and power forests), as the dict the evaluation reports render; ``saved``: a results file
    of the same folds whose rows are added for the models not retrained here."""
    import datetime

    out: dict = {
        "title": f"{k}-fold cross-validation on {data.gpu}, grouped by {grouping}", "samples": len(data),
        "gpu": data.gpu, "folds": k, "grouping": grouping, "seed": seed, "date": datetime.date.today().isoformat(),
        "dvfs": {}, "absolute": {},
        "notes": [f"folds grouped by {grouping}, stratified by short/medium/long time at F_max, seed {seed}; "
                  "scaling metrics over every configuration except F_max itself; every model retrained per fold "
                  "and calibrated on inner folds of that fold's training part, grouped by benchmark family"],
    }
    for cand in named_candidates([n for n in names if n != "forest"]):
        out["dvfs"][cand.name] = cross_validate(
            data, cand, grouping, k, seed, n_jobs, lambda i, n=cand.name: progress and progress(f"{n}: CV", i + 1, k))
    if "forest" in names:
        for target in ("time", "power"):
            out["absolute"][f"forest_{target}"] = nested_cv_absolute(
                data, target, k, grouping, seed,
                on_fold=lambda i, t=target: progress and progress(f"forest_{t}: nested CV", i + 1, k))
    rows = {n: r for n, r in (saved_rows(saved, data, grouping, k, seed) if saved else {}).items()
            if n not in out["dvfs"]}
    out["dvfs"].update(rows)
    if rows:
        out["notes"].append(f"{', '.join(rows)}: saved results of the same folds (marked saved), not retrained "
                            "here; they were not calibrated, so they have no interval coverage")
    return out


def compare(train: DvfsDataset, apps: DvfsDataset | None, candidates: Sequence[Candidate], k: int = 10,
            seed: int = 0, groupings: Sequence[str] = GROUPINGS,
            progress: Callable[[str], None] | None = None) -> dict:
    """``{"validation": {model: entry}, "family": {...}, "benchmark": {...}}`` of candidates (evaluation
    scripts: ``benchmarks/dvfs_accuracy.py``). Validation entries carry per-application errors."""
    ref = train.clocks.reference
    out: dict = {"samples": len(train), "folds": k, "seed": seed, "validation": {}, **{g: {} for g in groupings}}
    for cand in candidates:
        for grouping in groupings:
            if progress:
                progress(f"{cand.name}: {grouping} cross-validation")
            out[grouping][cand.name] = cross_validate(train, cand, grouping, k, seed)
        if apps is not None:
            if progress:
                progress(f"{cand.name}: validation")
            model = cand.make(seed).fit(train.runs, train.scaling_surfaces(), train.clocks, groups=train.families())
            lo, hi = model.bounds(apps.runs)
            out["validation"][cand.name] = _fixed(dvfs_entry(apps.scaling_surfaces(), model.predict(apps.runs), ref,
                                                             (lo, hi), apps.names), cand)
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

