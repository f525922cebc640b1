"""Numpy inference of the physical DVFS model: intensity features -> four quantities -> surfaces.

``config``: clocks, shape (``PhysicalShape.to_config``), gpu (whose published figures the features use),
features (names), regressor (``QuantityRegressor`` config). ``arrays``: the regressor's ``quantities.*``.
Intervals, the out-of-distribution report and shrinkage toward the mean surface are the model's
calibration (:mod:`ptxstatic.models.inference.calibration`), stored beside these arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.intensity import intensity_columns
from ptxstatic.models.inference.physical_surfaces import QUANTITIES, PhysicalShape, clip_quantities
from ptxstatic.models.inference.quantity_regressors import QuantityRegressor

TIME_MEMORY = QUANTITIES.index("time_memory")


class PhysicalPredictor:
    kind = "physical"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        try:
            self.clocks = ClockTable.from_dict(config["clocks"])
            self.shape = PhysicalShape.from_config(config["shape"])
            self.gpu = str(config["gpu"])
            self.features = tuple(config["features"])
            self.regressor = QuantityRegressor(arrays, config["regressor"], self.features)
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"physical model is incomplete or malformed: {exc}") from None
        if self.shape.clocks != self.clocks:
            raise PtxstaticError("physical model: the shape's clock table differs from the model's")

    def feature_matrix(self, seqs: Sequence[Sequence]) -> np.ndarray:
        return intensity_columns(seqs, self.features, self.gpu)

    def quantities(self, seqs: Sequence[Sequence], memory_share: Sequence[float | None] | None = None
                   ) -> np.ndarray:
        """(sequences, 4) quantities (``physical.QUANTITIES``), in their valid region. ``memory_share``: per
        sequence, the memory-bound share of the clock-dependent time where a launch's traffic gives it (the
        regressor's ``time_memory`` otherwise)."""
        q = clip_quantities(self.regressor.predict(self.feature_matrix(seqs)))
        for i, share in enumerate(memory_share or ()):
            if share is not None:
                q[i, TIME_MEMORY] = min(1.0, max(0.0, float(share)))
        return q

    def predict_many(self, seqs: Sequence[Sequence], memory_share: Sequence[float | None] | None = None
                     ) -> np.ndarray:
        """(sequences, 3, configs) time, power and energy scaling factors (energy = time × power)."""
        if not seqs:
            return np.empty((0, 3, len(self.clocks)))
        return self.shape.surfaces(self.quantities(seqs, memory_share))

    def predict(self, seq: Sequence) -> np.ndarray:
        return self.predict_many([seq])[0]
