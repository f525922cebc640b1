"""Numpy inference of the physical DVFS model: intensity features -> four quantities -> surfaces, shrunk
toward the training mean surface out of distribution, each with its interval.

``config``: clocks, shape (``PhysicalShape.to_config``), gpu (published figures for the features),
features (names), regressor (``QuantityRegressor`` config), ood (``OodReference.to_config``), shrinkage
(alpha, beta), level. ``arrays``: the regressor's ``quantities.*``, ``mean_surface`` (3, configs),
``intervals.h_model`` and ``intervals.h_mean`` (3, configs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.intensity import intensity_features
from ptxstatic.models.ood import OodReference, OodReport
from ptxstatic.models.physical import PhysicalShape, clip_quantities
from ptxstatic.models.quantity_regressors import QuantityRegressor
from ptxstatic.models.uncertainty import Intervals, Shrinkage, blend


@dataclass
class PhysicalPrediction:
    """One kernel's prediction: (3, configs) surfaces with their bounds, the quantities behind the model's
    own surfaces, the weight given to the training mean surface, and the out-of-distribution report."""

    surfaces: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    quantities: np.ndarray
    mean_weight: float
    ood: OodReport


class PhysicalPredictor:
    kind = "physical"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        try:
            self.clocks = ClockTable.from_dict(config["clocks"])
            self.shape = PhysicalShape.from_config(config["shape"])
            self.gpu = str(config["gpu"])
            self.features = tuple(config["features"])
            self.regressor = QuantityRegressor(arrays, config["regressor"], self.features)
            self.ood = OodReference.from_config(config["ood"])
            self.shrinkage = Shrinkage(float(config["shrinkage"]["alpha"]), float(config["shrinkage"]["beta"]))
            n = len(self.clocks)
            self.mean_surface = np.asarray(arrays["mean_surface"], dtype=np.float64).reshape(3, n)
            self.intervals = Intervals(float(config["level"]),
                                       np.asarray(arrays["intervals.h_model"], dtype=np.float64).reshape(3, n),
                                       np.asarray(arrays["intervals.h_mean"], dtype=np.float64).reshape(3, n))
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"physical model is incomplete or malformed: {exc}") from None
        if self.shape.clocks != self.clocks or not np.all(self.mean_surface > 0):
            raise PtxstaticError("physical model: inconsistent clock table or mean surface")

    def feature_matrix(self, seqs: Sequence[Sequence]) -> np.ndarray:
        rows = [intensity_features(s, self.gpu) for s in seqs]
        return np.array([[r[k] for k in self.features] for r in rows], dtype=np.float64).reshape(
            len(rows), len(self.features))

    def details(self, seqs: Sequence[Sequence]) -> list[PhysicalPrediction]:
        F = self.feature_matrix(seqs)
        q = clip_quantities(self.regressor.predict(F))
        reports = [self.ood.report(s, f) for s, f in zip(seqs, F)]
        w = self.shrinkage.weight(np.array([r.score for r in reports]), np.array([r.unknown_share for r in reports]))
        mean = np.repeat(self.mean_surface[None], len(seqs), axis=0)
        final = blend(self.shape.surfaces(q), mean, w)
        lo, hi = self.intervals.bounds(final, w)
        return [PhysicalPrediction(final[i], lo[i], hi[i], q[i], float(w[i]), reports[i]) for i in range(len(seqs))]

    def predict_many(self, seqs: Sequence[Sequence]) -> np.ndarray:
        """(sequences, 3, configs) time, power and energy scaling factors (energy = time × power)."""
        return np.stack([d.surfaces for d in self.details(seqs)]) if seqs else np.empty((0, 3, len(self.clocks)))

    def predict(self, seq: Sequence) -> np.ndarray:
        return self.details([seq])[0].surfaces
