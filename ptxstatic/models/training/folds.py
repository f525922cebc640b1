"""Grouped, stratified cross-validation folds and out-of-fold predictions of DVFS models."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold

from ptxstatic.dataset.dataset import DvfsDataset

Folds = list[tuple[np.ndarray, np.ndarray]]


def duration_classes(durations: np.ndarray, n_classes: int = 3) -> np.ndarray:
    """Short / medium / long label per sample, from quantiles of the duration."""
    edges = np.quantile(durations, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.searchsorted(edges, durations, side="right")


def grouped_folds(
    groups: Sequence[str], strata: np.ndarray, n_splits: int, seed: int = 0, always_train: Sequence[int] = (),
) -> Folds:
    """Folds where no group is on both sides, stratified by ``strata``; the groups of the ``always_train``
    samples are never tested (GPU Mangrove keeps the longest kernels in training)."""
    fixed_groups = {groups[int(i)] for i in always_train}
    fixed = [i for i in range(len(groups)) if groups[i] in fixed_groups]
    pool = np.array([i for i in range(len(groups)) if groups[i] not in fixed_groups])
    splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    folds = []
    for train, test in splitter.split(np.zeros(len(pool)), strata[pool], [groups[i] for i in pool]):
        folds.append((np.sort(np.concatenate([pool[train], fixed]).astype(int)), np.sort(pool[test])))
    return folds


def _fit_predict(data: DvfsDataset, make: Callable[[], object], train: np.ndarray, test: np.ndarray
                 ) -> np.ndarray:
    """(3, tested, 3, configs): surfaces, lower and upper bounds of a calibrated model (``Calibrated``) fitted
    on ``train``, its inner folds grouped by benchmark family."""
    model = make()
    y, families = data.scaling_surfaces(), data.families()
    model.fit([data.runs[i] for i in train], y[train], data.clocks,  # type: ignore[attr-defined]
              groups=[families[i] for i in train])
    details = model.details([data.runs[i] for i in test])  # type: ignore[attr-defined]
    return np.stack([np.stack([getattr(d, k) for d in details]) for k in ("surfaces", "lower", "upper")])


def out_of_fold(
    data: DvfsDataset, make: Callable[[], object], folds: Folds,
    on_fold: Callable[[int], None] | None = None, n_jobs: int = 1,
) -> np.ndarray:
    """(3, samples, 3, configs): predictions and their interval bounds for every tested sample by a model
    trained on the other folds (NaN where untested); ``n_jobs`` > 1 trains that many folds at once in worker
    processes."""
    out = np.full((3, len(data), 3, len(data.clocks)), np.nan)
    if n_jobs > 1:
        from joblib import Parallel, delayed

        jobs = (delayed(_fit_predict)(data, make, train, test) for train, test in folds)
        for k, ((_, test), p) in enumerate(zip(folds, Parallel(n_jobs=n_jobs, return_as="generator")(jobs))):
            out[:, test] = p
            if on_fold:
                on_fold(k)
        return out
    for k, (train, test) in enumerate(folds):
        out[:, test] = _fit_predict(data, make, train, test)
        if on_fold:
            on_fold(k)
    return out
