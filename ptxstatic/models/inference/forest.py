"""Numpy inference of the absolute time / power extra-trees models."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.analysis.sequence import Run, SeqItem, as_runs
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.sequence_features import features_from_sequence
from ptxstatic.models.inference.tree_arrays import TreeEnsemble


class ForestPredictor:
    """Absolute time (ms) or power (W) at the GPU's reference configuration."""

    kind = "forest"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        try:
            self.target = str(config["target"])
            self.log_target = bool(config["log_target"])
            self.features = [str(f) for f in config["features"]]
        except (KeyError, TypeError) as exc:
            raise PtxstaticError(f"forest model configuration is incomplete: {exc}") from None
        self.trees = TreeEnsemble(arrays, "trees", len(self.features))

    @property
    def needs_launch(self) -> bool:
        return "threads_per_cta" in self.features

    def feature_vector(self, seq: Sequence[SeqItem] | Sequence[Run], launch: tuple[int, int] | None) -> np.ndarray:
        if self.needs_launch and launch is None:
            raise PtxstaticError(f"the {self.target} model needs the launch configuration (--launch)")
        feats = features_from_sequence(as_runs(seq), launch if self.needs_launch else None)
        return np.array([[feats[f] for f in self.features]])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(samples,) predictions from a feature matrix in ``self.features`` order."""
        z = self.trees.predict(X)[:, 0]
        return np.exp(z) if self.log_target else z

    def predict_sequence(self, seq: Sequence[SeqItem] | Sequence[Run], launch: tuple[int, int] | None = None) -> float:
        return float(self.predict(self.feature_vector(seq, launch))[0])
