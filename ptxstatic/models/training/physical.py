"""Training the physical DVFS model (scikit-learn and scipy; inference is :mod:`ptxstatic.models.inference.physical`).

``PhysicalDvfs`` follows the DVFS model interface (``fit(X, y, clocks)``, ``predict(X)``, ``export()``):

1. the GPU's shape (overlap and core-power exponents) is learned from the training surfaces, and each
   training kernel's four quantities are fitted to its measured surfaces (``physical_fit``);
2. a learner maps the kernel's intensity features to those quantities: ``neighbors`` (k nearest training
   kernels, the shipped choice), ``trees`` (extra-trees), ``gbm`` (gradient boosting, one model per
   quantity), ``ridge``, ``roofline`` (first principles with two calibration constants) or ``constant``
   (the quantities of the training set's geometric-mean surface).

Its intervals, out-of-distribution report and shrinkage toward the mean surface come from wrapping it in
:class:`ptxstatic.models.training.calibration.Calibrated`, as every shipped DVFS model is.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor
from sklearn.linear_model import Ridge

from ptxstatic.dvfs import ClockTable
from ptxstatic.features.intensity import MODEL_FEATURES, intensity_columns
from ptxstatic.models.evaluation.metrics import scaling_metrics
from ptxstatic.models.inference.physical import PhysicalPredictor
from ptxstatic.models.inference.physical_surfaces import MEANINGS, PhysicalShape
from ptxstatic.models.inference.quantity_regressors import ROOFLINE_FEATURE, roofline_quantities
from ptxstatic.models.inference.tree_arrays import export_trees
from ptxstatic.models.training.surface_fit import fit_quantities, fit_shape

LEARNERS = ("trees", "gbm", "neighbors", "ridge", "roofline", "constant")


def _fit_trees(F: np.ndarray, Q: np.ndarray, est: PhysicalDvfs) -> tuple[dict, dict]:
    forest = ExtraTreesRegressor(n_estimators=est.n_estimators, min_samples_leaf=est.min_samples_leaf,
                                 max_features=est.max_features, random_state=est.seed, n_jobs=1).fit(F, Q)
    return ({**export_trees(forest, "quantities.0"), "quantities.0.offset": np.zeros(4)},
            {"kind": "trees", "outputs": [[0, 1, 2, 3]]})


def _fit_gbm(F: np.ndarray, Q: np.ndarray, est: PhysicalDvfs) -> tuple[dict, dict]:
    arrays: dict[str, np.ndarray] = {}
    for k in range(4):
        gbm = GradientBoostingRegressor(n_estimators=est.n_estimators, max_depth=est.max_depth,
                                        learning_rate=est.learning_rate, subsample=0.8,
                                        min_samples_leaf=est.min_samples_leaf, random_state=est.seed).fit(F, Q[:, k])
        trees = list(gbm.estimators_[:, 0])
        exported = export_trees(SimpleNamespace(estimators_=trees), f"quantities.{k}")
        exported[f"quantities.{k}.value"] = exported[f"quantities.{k}.value"] * gbm.learning_rate * len(trees)
        staged = gbm.learning_rate * sum(t.predict(F[:1])[0] for t in trees)
        arrays.update(exported)
        arrays[f"quantities.{k}.offset"] = np.array([gbm.predict(F[:1])[0] - staged])
    return arrays, {"kind": "trees", "outputs": [[k] for k in range(4)]}


def _fit_ridge(F: np.ndarray, Q: np.ndarray, est: PhysicalDvfs) -> tuple[dict, dict]:
    mean, scale = F.mean(axis=0), F.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    ridge = Ridge(alpha=est.alpha).fit((F - mean) / scale, Q)
    return ({"quantities.mean": mean, "quantities.scale": scale, "quantities.coef": ridge.coef_,
             "quantities.intercept": ridge.intercept_}, {"kind": "linear"})


def _fit_neighbors(F: np.ndarray, Q: np.ndarray, est: PhysicalDvfs) -> tuple[dict, dict]:
    mean, scale = F.mean(axis=0), F.std(axis=0)
    used = scale > 0
    points = (F - mean) / np.where(used, scale, 1.0) * used
    return ({"quantities.mean": mean, "quantities.scale": scale, "quantities.points": points, "quantities.values": Q},
            {"kind": "neighbors", "k": est.n_neighbors})


def _fit_roofline(F: np.ndarray, Q: np.ndarray, y: np.ndarray, shape: PhysicalShape, column: int
                  ) -> tuple[dict, dict]:
    rest = np.median(Q[:, [0, 2, 3]], axis=0)
    log_t = np.log(y[:, 0])

    def loss(theta: np.ndarray) -> float:
        return float(np.abs(np.log(shape.time(roofline_quantities(F[:, column], theta, rest))) - log_t).mean())

    starts = [(k, g) for k in (-4.0, -2.0, 0.0, 2.0) for g in (0.5, 1.0, 2.0)]
    best = min((minimize(loss, np.array(s), method="Nelder-Mead") for s in starts), key=lambda r: r.fun)
    return {"quantities.theta": best.x, "quantities.rest": rest}, {"kind": "roofline"}


class PhysicalDvfs(BaseEstimator):
    """Physically constrained DVFS surfaces from intensity features (see the module docstring)."""

    def __init__(self, learner: str = "neighbors", n_estimators: int = 200, min_samples_leaf: int = 3,
                 max_features: float = 1.0, max_depth: int = 2, learning_rate: float = 0.05, alpha: float = 10.0,
                 n_neighbors: int = 5, features: tuple[str, ...] = MODEL_FEATURES, gpu: str = "gtxtitanx",
                 seed: int = 0) -> None:
        self.learner = learner
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.features = features
        self.gpu = gpu
        self.seed = seed

    def _features(self, X: Sequence[Sequence]) -> np.ndarray:
        return intensity_columns(X, self.features, self.gpu)

    def _regressor(self, F: np.ndarray, Q: np.ndarray, y: np.ndarray, shape: PhysicalShape) -> tuple[dict, dict]:
        if self.learner == "trees":
            return _fit_trees(F, Q, self)
        if self.learner == "gbm":
            return _fit_gbm(F, Q, self)
        if self.learner == "ridge":
            return _fit_ridge(F, Q, self)
        if self.learner == "neighbors":
            return _fit_neighbors(F, Q, self)
        if self.learner == "roofline":
            return _fit_roofline(F, Q, y, shape, list(self.features).index(ROOFLINE_FEATURE))
        if self.learner == "constant":
            geo = np.exp(np.log(y).mean(axis=0, keepdims=True))
            return {"quantities.value": fit_quantities(geo, shape)[0]}, {"kind": "constant"}
        raise ValueError(f"unknown learner {self.learner!r} (one of {', '.join(LEARNERS)})")

    def fit(self, X: Sequence[Sequence], y: np.ndarray, clocks: ClockTable) -> PhysicalDvfs:
        self.clocks_ = clocks
        self.shape_ = fit_shape(y, clocks)
        self.regressor_ = self._regressor(self._features(X), fit_quantities(y, self.shape_), y, self.shape_)
        self.predictor_ = PhysicalPredictor(*self.export())
        return self

    def predict(self, X: Sequence[Sequence]) -> np.ndarray:
        return self.predictor_.predict_many(X)

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        arrays, reg_config = self.regressor_
        return dict(arrays), {"clocks": self.clocks_.to_dict(), "shape": self.shape_.to_config(), "gpu": self.gpu,
                              "features": list(self.features), "regressor": reg_config}

    def card_fields(self, y: np.ndarray) -> dict:
        """The GPU constants, what each quantity means and how well the quantities reproduce ``y``."""
        fitted = self.shape_.surfaces(fit_quantities(y, self.shape_))
        return {
            "quantities": MEANINGS,
            "gpu_constants": {"overlap": self.shape_.overlap, "core_exponent": self.shape_.core_exponent},
            "quantity_fit_mape": {h: round(v["mape"], 3)
                                  for h, v in scaling_metrics(y, fitted, self.clocks_.reference).items()},
        }
