"""Calibrating any DVFS model on out-of-fold predictions of its training set (scikit-learn).

:class:`Calibrated` wraps a DVFS estimator (``fit(X, y, clocks)``, ``predict(X)``, ``export()``): it fits
the estimator on every sample, and fits it again in inner folds that hold out whole groups (benchmark
families), so that every training sample gets a prediction from a model that never saw its family. On
those out-of-fold predictions it fits, as :mod:`ptxstatic.models.inference.uncertainty` describes, the shrinkage
toward the training mean surface as a function of the out-of-distribution score (each fold's score taken
against that fold's own training data), and the conformal interval widths. Nothing else is fitted on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GroupKFold

from ptxstatic.dvfs import ClockTable
from ptxstatic.features.intensity import MODEL_FEATURES, intensity_columns
from ptxstatic.models.inference.calibration import Calibration, DvfsPrediction
from ptxstatic.models.inference.ood import OodReference, profile
from ptxstatic.models.inference.uncertainty import Intervals, Shrinkage, blend


class Calibrated(BaseEstimator):
    """A DVFS estimator with calibrated intervals, out-of-distribution report and shrinkage."""

    def __init__(self, estimator: object, inner_folds: int = 5, level: float = 0.9, shrink: bool = True,
                 energy_from: str = "time*power", features: tuple[str, ...] = MODEL_FEATURES,
                 gpu: str = "gtxtitanx") -> None:
        self.estimator = estimator
        self.inner_folds = inner_folds
        self.level = level
        self.shrink = shrink
        self.energy_from = energy_from
        self.features = features
        self.gpu = gpu

    def _out_of_fold(self, X: Sequence, y: np.ndarray, clocks: ClockTable, groups: Sequence[str],
                     F: np.ndarray, profiles: list, step: Callable[[], None]) -> tuple[np.ndarray, ...]:
        """Inner out-of-fold surfaces, fold mean surfaces, out-of-distribution scores and unknown shares."""
        n = len(y)
        pred, mean, scores, unknown = np.empty_like(y), np.empty_like(y), np.zeros(n), np.zeros(n)
        k = min(self.inner_folds, len(set(groups)))
        for train, test in GroupKFold(n_splits=k).split(F, groups=groups):
            model = clone(self.estimator).fit([X[i] for i in train], y[train], clocks)  # type: ignore[attr-defined]
            pred[test] = model.predict([X[i] for i in test])
            mean[test] = y[train].mean(axis=0)
            ref = OodReference.fit([profiles[i] for i in train], F[train], self.features)
            reports = [ref.report(profiles[i], F[i]) for i in test]
            scores[test] = [r.score for r in reports]
            unknown[test] = [r.unknown_share for r in reports]
            step()
        return pred, mean, scores, unknown

    def fit(self, X: Sequence, y: np.ndarray, clocks: ClockTable, groups: Sequence[str] | None = None,
            progress: Callable[[int, int], None] | None = None) -> Calibrated:
        """``groups``: what the inner folds keep together (benchmark families; each sample alone if not
        given). ``progress(done, total)`` after each of the fits."""
        groups = list(groups) if groups is not None else [str(i) for i in range(len(y))]
        total, done = min(self.inner_folds, len(set(groups))) + 1, [0]

        def step() -> None:
            done[0] += 1
            if progress:
                progress(done[0], total)

        X = list(X)
        F = intensity_columns(X, self.features, self.gpu)
        profiles = [profile(s) for s in X]
        self.estimator_ = clone(self.estimator).fit(X, y, clocks)  # type: ignore[attr-defined]
        step()
        pred, mean, scores, unknown = self._out_of_fold(X, y, clocks, groups, F, profiles, step)
        ref = clocks.reference
        shrinkage = Shrinkage.fit(pred, mean, y, scores, unknown, ref, self.energy_from) if self.shrink else Shrinkage()
        w = shrinkage.weight(scores, unknown)
        intervals = Intervals.fit(blend(pred, mean, w, self.energy_from), y, w, y, self.level)
        self.calibration_ = Calibration(y.mean(axis=0), OodReference.fit(profiles, F, self.features), shrinkage,
                                        intervals, self.gpu, self.energy_from)
        return self

    def details(self, X: Sequence) -> list[DvfsPrediction]:
        X = list(X)
        return self.calibration_.apply(self.estimator_.predict(X), X)  # type: ignore[attr-defined]

    def predict(self, X: Sequence) -> np.ndarray:
        """(samples, 3, configs) calibrated surfaces."""
        return np.stack([d.surfaces for d in self.details(X)])

    def bounds(self, X: Sequence) -> tuple[np.ndarray, np.ndarray]:
        """(samples, 3, configs) lower and upper interval bounds."""
        details = self.details(X)
        return np.stack([d.lower for d in details]), np.stack([d.upper for d in details])

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        arrays, config = self.estimator_.export()  # type: ignore[attr-defined]
        extra, calibration = self.calibration_.export()
        return {**arrays, **extra}, {**config, "calibration": calibration}

    def card_fields(self, y: np.ndarray) -> dict:
        """What the model card records of the calibration (and of the estimator, if it says)."""
        own = getattr(self.estimator_, "card_fields", None)
        c = self.calibration_
        return {
            **(own(y) if own else {}),
            "calibration": {
                "inner_folds": self.inner_folds, "grouping": "benchmark family", "interval_level": c.intervals.level,
                "shrinkage": {"alpha": c.shrinkage.alpha, "beta": c.shrinkage.beta},
                "rule": "weight toward the training mean surface = max(unknown share, clip(alpha + beta * "
                        "out-of-distribution score, 0, 1))",
            },
            "energy_source": self.energy_from,
        }
