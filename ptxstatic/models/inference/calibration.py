"""What a DVFS model knows about its own reliability, applied at inference (numpy only).

A calibrated model's artefact holds, next to its own arrays, the training set's mean surface, what the
training data held (:class:`~ptxstatic.models.inference.ood.OodReference`: instruction vocabulary and feature
ranges), the shrinkage rule toward the mean surface and the interval widths, all fitted on out-of-fold
predictions of the training set (:mod:`ptxstatic.models.training.calibration`). :meth:`Calibration.apply`
turns the model's raw surfaces into what ``predict`` reports: the surfaces shrunk toward the mean as far
as the kernel lies outside the training data, their intervals, and the out-of-distribution report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptxstatic.dvfs import ENERGY_SOURCES
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.intensity import NAMES, intensity_columns
from ptxstatic.models.inference.ood import OodReference, OodReport
from ptxstatic.models.inference.uncertainty import Intervals, Shrinkage, blend

#: the array names a calibration adds to a model's arrays
ARRAYS = ("calibration.mean_surface", "calibration.h_model", "calibration.h_mean")


@dataclass
class DvfsPrediction:
    """One kernel's prediction: (3, configs) time, power and energy surfaces with their interval bounds, the
    weight given to the training mean surface, the out-of-distribution report and, for a physical model,
    the quantities behind its own surfaces."""

    surfaces: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mean_weight: float
    ood: OodReport
    quantities: np.ndarray | None = None


@dataclass(frozen=True)
class Calibration:
    mean_surface: np.ndarray  # (3, configs) training mean
    ood: OodReference
    shrinkage: Shrinkage
    intervals: Intervals
    gpu: str  # whose published figures the features use
    energy_from: str  # "time*power" or "head"

    def __post_init__(self) -> None:
        if self.energy_from not in ENERGY_SOURCES or not np.all(self.mean_surface > 0):
            raise PtxstaticError("calibration: bad energy source or mean surface")
        if not set(self.ood.names) <= set(NAMES):
            raise PtxstaticError(f"calibration: unknown features {sorted(set(self.ood.names) - set(NAMES))}")

    def feature_matrix(self, seqs: Sequence[Sequence]) -> np.ndarray:
        return intensity_columns(seqs, self.ood.names, self.gpu)

    def apply(self, raw: np.ndarray, seqs: Sequence[Sequence]) -> list[DvfsPrediction]:
        """Calibrated predictions from the model's (n, 3, configs) surfaces of ``seqs``."""
        features = self.feature_matrix(seqs)
        reports = [self.ood.report(s, f) for s, f in zip(seqs, features)]
        w = self.shrinkage.weight(np.array([r.score for r in reports]), np.array([r.unknown_share for r in reports]))
        mean = np.repeat(self.mean_surface[None], len(seqs), axis=0)
        final = blend(raw, mean, w, self.energy_from)
        lo, hi = self.intervals.bounds(final, w)
        return [DvfsPrediction(final[i], lo[i], hi[i], float(w[i]), reports[i]) for i in range(len(seqs))]

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        arrays = dict(zip(ARRAYS, (self.mean_surface, self.intervals.h_model, self.intervals.h_mean)))
        shrinkage = {"alpha": self.shrinkage.alpha, "beta": self.shrinkage.beta}
        config = {"ood": self.ood.to_config(), "shrinkage": shrinkage, "level": self.intervals.level, "gpu": self.gpu,
                  "energy_from": self.energy_from}
        return arrays, config

    @classmethod
    def from_artifact(cls, arrays: dict[str, np.ndarray], config: dict) -> Calibration | None:
        """The calibration stored with a model (``config["calibration"]``), or None if it has none."""
        c = config.get("calibration")
        if c is None:
            return None
        try:
            mean, h_model, h_mean = (np.asarray(arrays[k], dtype=np.float64) for k in ARRAYS)
            shape = mean.shape
            return cls(mean, OodReference.from_config(c["ood"]),
                       Shrinkage(float(c["shrinkage"]["alpha"]), float(c["shrinkage"]["beta"])),
                       Intervals(float(c["level"]), h_model.reshape(shape), h_mean.reshape(shape)),
                       str(c["gpu"]), str(c["energy_from"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"model calibration is incomplete or malformed: {exc!r}") from None
