"""Training the DVFS baselines (scikit-learn); inference is in :mod:`ptxstatic.models.inference.baselines` (numpy).

Every DVFS model follows one interface: ``fit(X, y, clocks)`` with X a list of sequences and y the
(samples, 3, configs) time/power/energy scaling factors; ``predict(X)`` -> the same shape; ``export()``
-> (arrays, config) for :mod:`ptxstatic.models.inference.artifacts`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

from ptxstatic.dvfs import ClockTable
from ptxstatic.features.sequence_features import group_matrix
from ptxstatic.models.inference.baselines import GroupForestPredictor, Seq, WuPredictor
from ptxstatic.models.inference.tree_arrays import export_trees


class MeanSurface(BaseEstimator):
    """Predicts the training set's mean scaling surface for every kernel."""

    def fit(self, X: Sequence[Seq], y: np.ndarray, clocks: ClockTable) -> MeanSurface:
        self.clocks_ = clocks
        self.surface_ = y.mean(axis=0)
        return self

    def predict(self, X: Sequence[Seq]) -> np.ndarray:
        return np.repeat(self.surface_[None], len(X), axis=0)

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        return {"surface": self.surface_}, {"clocks": self.clocks_.to_dict()}


class GroupForest(BaseEstimator):
    """Extra-trees from (instruction-group histogram, normalised f_mem, f_core) to the three log scaling
    factors (one multi-output forest over every (kernel, configuration) row)."""

    def __init__(self, n_estimators: int = 50, min_samples_leaf: int = 8, max_features: float = 1.0,
                 seed: int = 0) -> None:
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.seed = seed

    def fit(self, X: Sequence[Seq], y: np.ndarray, clocks: ClockTable) -> GroupForest:
        feats, clk = group_matrix(X), clocks.normalised()
        n, c = len(feats), len(clk)
        rows = np.concatenate([np.repeat(feats, c, axis=0), np.tile(clk, (n, 1))], axis=1)
        targets = np.log(y).transpose(0, 2, 1).reshape(n * c, 3)
        self.forest_ = ExtraTreesRegressor(
            n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
            max_features=self.max_features, random_state=self.seed, n_jobs=1,
        ).fit(rows, targets)
        self.clocks_ = clocks
        self.predictor_ = GroupForestPredictor(*self.export())
        return self

    def predict(self, X: Sequence[Seq]) -> np.ndarray:
        return self.predictor_.predict_many(X)

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        return export_trees(self.forest_, "trees"), {"clocks": self.clocks_.to_dict()}


class WuClusters(BaseEstimator):
    """k-means over the training kernels' log time and power scaling surfaces; an extra-trees classifier
    from group histograms picks a cluster, whose mean surfaces (time, power, energy) are the prediction."""

    def __init__(self, n_clusters: int = 12, n_estimators: int = 200, seed: int = 0) -> None:
        self.n_clusters = n_clusters
        self.n_estimators = n_estimators
        self.seed = seed

    def fit(self, X: Sequence[Seq], y: np.ndarray, clocks: ClockTable) -> WuClusters:
        k = min(self.n_clusters, len(X))
        surfaces = np.log(y[:, :2]).reshape(len(X), -1)
        labels = KMeans(n_clusters=k, n_init=10, random_state=self.seed).fit_predict(surfaces)
        self.classifier_ = ExtraTreesClassifier(
            n_estimators=self.n_estimators, random_state=self.seed, n_jobs=1,
        ).fit(group_matrix(X), labels)
        self.centroids_ = np.stack([y[labels == c].mean(axis=0) for c in self.classifier_.classes_])
        self.clocks_ = clocks
        self.predictor_ = WuPredictor(*self.export())
        return self

    def predict(self, X: Sequence[Seq]) -> np.ndarray:
        return self.predictor_.predict_many(X)

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        return (
            {"centroids": self.centroids_, **export_trees(self.classifier_, "classifier")},
            {"clocks": self.clocks_.to_dict()},
        )
