"""Numpy inference of the regressors that map intensity features to the physical quantities.

Each regressor is stored as plain arrays (``quantities.*``) plus a small config, and returns (n, 4)
quantities in ``physical.QUANTITIES`` order, unclipped (the surfaces clip them into their valid region).

* ``constant``: the same quantities for every kernel;
* ``linear``: standardised features times coefficients (ridge regression);
* ``trees``: forests exported by :func:`ptxstatic.models.inference.tree_arrays.export_trees`, one ensemble per
  group of outputs, each with an additive offset (extra-trees: one ensemble, 4 outputs, offset 0;
  gradient boosting: one ensemble per quantity whose leaves carry learning rate × trees);
* ``neighbors``: the distance-weighted mean quantities of the k nearest training kernels in standardised
  feature space (features constant over the training set are left out);
* ``roofline``: the first-principles estimate. ``dram_to_issue`` is log(1 + R), R the ratio of DRAM time
  (bytes over peak bandwidth) to issue time (published issue rates); the memory share of demand is
  ``κR^γ / (1 + κR^γ)``, with κ (what share of the bytes reaches DRAM, and how far below peak bandwidth it
  runs) and γ calibration constants fitted on the training set, and the fixed time share and the power
  shares are training-set constants.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.models.inference.tree_arrays import TreeEnsemble

KINDS = ("constant", "linear", "trees", "neighbors", "roofline")
ROOFLINE_FEATURE = "dram_to_issue"


class QuantityRegressor:
    def __init__(self, arrays: dict[str, np.ndarray], config: dict, features: tuple[str, ...]) -> None:
        self.kind = str(config.get("kind"))
        self.n_features = len(features)
        try:
            if self.kind == "constant":
                self.value = np.asarray(arrays["quantities.value"], dtype=np.float64).reshape(4)
            elif self.kind == "linear":
                self.mean = np.asarray(arrays["quantities.mean"], dtype=np.float64)
                self.scale = np.asarray(arrays["quantities.scale"], dtype=np.float64)
                self.coef = np.asarray(arrays["quantities.coef"], dtype=np.float64).reshape(4, self.n_features)
                self.intercept = np.asarray(arrays["quantities.intercept"], dtype=np.float64).reshape(4)
            elif self.kind == "trees":
                self.parts = [
                    (TreeEnsemble(arrays, f"quantities.{k}", self.n_features), list(cols),
                     np.asarray(arrays[f"quantities.{k}.offset"], dtype=np.float64))
                    for k, cols in enumerate(config["outputs"])
                ]
            elif self.kind == "neighbors":
                self.mean = np.asarray(arrays["quantities.mean"], dtype=np.float64)
                self.scale = np.asarray(arrays["quantities.scale"], dtype=np.float64)
                self.points = np.asarray(arrays["quantities.points"], dtype=np.float64)
                self.values = np.asarray(arrays["quantities.values"], dtype=np.float64).reshape(len(self.points), 4)
                self.k = min(int(config["k"]), len(self.points))
            elif self.kind == "roofline":
                self.theta = np.asarray(arrays["quantities.theta"], dtype=np.float64).reshape(2)
                self.rest = np.asarray(arrays["quantities.rest"], dtype=np.float64).reshape(3)
                self.column = features.index(ROOFLINE_FEATURE)
            else:
                raise PtxstaticError(f"unknown quantity regressor {self.kind!r}")
        except (KeyError, ValueError) as exc:
            raise PtxstaticError(f"quantity regressor {self.kind!r} is incomplete: {exc}") from None

    def predict(self, F: np.ndarray) -> np.ndarray:
        F = np.atleast_2d(np.asarray(F, dtype=np.float64))
        if F.shape[1] != self.n_features:
            raise PtxstaticError(f"expected {self.n_features} features, got {F.shape[1]}")
        n = len(F)
        if self.kind == "constant":
            return np.repeat(self.value[None], n, axis=0)
        if self.kind == "linear":
            return ((F - self.mean) / self.scale) @ self.coef.T + self.intercept
        if self.kind == "neighbors":
            return self._neighbors(F)
        if self.kind == "trees":
            out = np.zeros((n, 4))
            for trees, cols, offset in self.parts:
                out[:, cols] = trees.predict(F) + offset
            return out
        return roofline_quantities(F[:, self.column], self.theta, self.rest)

    def _neighbors(self, F: np.ndarray) -> np.ndarray:
        used = self.scale > 0
        z = (F - self.mean) / np.where(used, self.scale, 1.0) * used
        d = np.sqrt(((z[:, None, :] - self.points[None]) ** 2).sum(axis=2))  # (n, train)
        idx = np.argsort(d, axis=1, kind="stable")[:, :self.k]
        dist = np.take_along_axis(d, idx, axis=1)
        exact = dist <= 1e-12
        w = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), 1.0 / np.maximum(dist, 1e-12))
        return (w[..., None] * self.values[idx]).sum(axis=1) / w.sum(axis=1, keepdims=True)


def roofline_quantities(dram_to_issue: np.ndarray, theta: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """(n, 4) quantities of the first-principles estimate: theta = (log κ, γ); rest = (time_fixed,
    power_static, power_work)."""
    r = np.maximum(np.expm1(np.asarray(dram_to_issue, dtype=np.float64)), 1e-12)
    rho = np.exp(-np.logaddexp(0.0, -(theta[0] + theta[1] * np.log(r))))  # κR^γ / (1 + κR^γ), no overflow
    n = len(r)
    return np.column_stack([np.full(n, rest[0]), rho, np.full(n, rest[1]), np.full(n, rest[2])])
