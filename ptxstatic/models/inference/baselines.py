"""Numpy inference of the three DVFS baselines the LSTM is judged against.

- ``mean_surface``: the training set's mean scaling surface, for every kernel;
- ``group_forest``: extra-trees on instruction-group histograms + normalised clocks -> log scaling;
- ``wu_clusters``: k-means clusters of training scaling surfaces; a classifier from group histograms picks
  the cluster whose mean surface is the prediction (Wu et al. 2015).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.analysis.sequence import Run, SeqItem
from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.sequence_features import GROUP_FEATURES, group_matrix
from ptxstatic.models.inference.tree_arrays import TreeEnsemble

Seq = Sequence[SeqItem] | Sequence[Run]


def _surfaces(arrays: dict[str, np.ndarray], name: str, n_configs: int) -> np.ndarray:
    s = np.asarray(arrays.get(name), dtype=np.float64)
    if s.ndim < 2 or s.shape[-2:] != (3, n_configs) or not np.all(s > 0):
        raise PtxstaticError(f"model array {name!r} is missing or is not positive (…, 3, {n_configs}) surfaces")
    return s


class MeanSurfacePredictor:
    kind = "mean_surface"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        self.clocks = ClockTable.from_dict(config["clocks"])
        self.surface = _surfaces(arrays, "surface", len(self.clocks))

    def predict(self, seq: Seq) -> np.ndarray:
        return self.surface.copy()


class GroupForestPredictor:
    kind = "group_forest"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        self.clocks = ClockTable.from_dict(config["clocks"])
        self.trees = TreeEnsemble(arrays, "trees", len(GROUP_FEATURES) + 2)
        if self.trees.value.shape[1] != 3:
            raise PtxstaticError("group_forest model: trees must have 3 outputs (time, power, energy)")

    def predict_many(self, seqs: Sequence[Seq]) -> np.ndarray:
        """(sequences, 3, configs) scaling factors, exactly 1 at the reference configuration."""
        feats = group_matrix(seqs)
        clk = self.clocks.normalised()
        n, c = len(feats), len(clk)
        rows = np.concatenate([np.repeat(feats, c, axis=0), np.tile(clk, (n, 1))], axis=1)
        logs = self.trees.predict(rows).reshape(n, c, 3).transpose(0, 2, 1)
        return np.exp(logs - logs[..., [self.clocks.reference]])

    def predict(self, seq: Seq) -> np.ndarray:
        return self.predict_many([seq])[0]


class WuPredictor:
    kind = "wu_clusters"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        self.clocks = ClockTable.from_dict(config["clocks"])
        self.centroids = _surfaces(arrays, "centroids", len(self.clocks))
        self.classifier = TreeEnsemble(arrays, "classifier", len(GROUP_FEATURES))
        if self.classifier.value.shape[1] != len(self.centroids):
            raise PtxstaticError("wu_clusters model: classifier classes do not match the clusters")

    def predict_many(self, seqs: Sequence[Seq]) -> np.ndarray:
        cluster = self.classifier.predict(group_matrix(seqs)).argmax(axis=1)
        return self.centroids[cluster]

    def predict(self, seq: Seq) -> np.ndarray:
        return self.predict_many([seq])[0]
