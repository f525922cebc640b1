"""Grouped, stratified cross-validation folds and out-of-fold predictions of DVFS models."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold

from ptxstatic.data.dataset import DvfsDataset

Folds = list[tuple[np.ndarray, np.ndarray]]


def duration_classes(durations: np.ndarray, n_classes: int = 3) -> np.ndarray:
    """Short / medium / long label per sample, from quantiles of the duration."""
    edges = np.quantile(durations, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.searchsorted(edges, durations, side="right")


def grouped_folds(
    groups: Sequence[str], strata: np.ndarray, n_splits: int, seed: int = 0, always_train: Sequence[int] = (),
) -> Folds:
    """Folds where no group is on both sides, stratified by ``strata``; ``always_train`` samples are never
    tested (GPU Mangrove keeps the longest kernels in training)."""
    fixed = set(int(i) for i in always_train)
    pool = np.array([i for i in range(len(groups)) if i not in fixed])
    splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    folds = []
    for train, test in splitter.split(np.zeros(len(pool)), strata[pool], [groups[i] for i in pool]):
        folds.append((np.sort(np.concatenate([pool[train], sorted(fixed)]).astype(int)), np.sort(pool[test])))
    return folds


def out_of_fold(
    data: DvfsDataset, make: Callable[[], object], folds: Folds,
    on_fold: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Predictions for every tested sample by a model trained on the other folds (NaN where untested)."""
    y = data.scaling_surfaces()
    pred = np.full_like(y, np.nan)
    for k, (train, test) in enumerate(folds):
        model = make()
        model.fit([data.runs[i] for i in train], y[train], data.clocks)  # type: ignore[attr-defined]
        pred[test] = model.predict([data.runs[i] for i in test])  # type: ignore[attr-defined]
        if on_fold:
            on_fold(k)
    return pred
