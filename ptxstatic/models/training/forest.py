"""Extra-trees models of absolute time and power on one GPU (GPU Mangrove style), trained with
scikit-learn; inference is :class:`ptxstatic.models.inference.forest.ForestPredictor` (numpy).

Features are the portable features of the kernel's executed sequence (per thread, plus the launch when the
data records one); the target is the value at the GPU's reference configuration (time with a log target).
Hyper-parameters come from a grid search scored by MAPE in an inner cross-validation grouped by benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import ExtraTreesRegressor
from sklearn.model_selection import GridSearchCV, GroupKFold

from ptxstatic.features.sequence_features import PORTABLE
from ptxstatic.models.inference.forest import ForestPredictor
from ptxstatic.models.inference.tree_arrays import export_trees

#: GPU Mangrove's grid
PAPER_GRID: dict[str, list] = {
    "max_features": [1.0, "log2", "sqrt"],
    "criterion": ["squared_error", "absolute_error"],
    "n_estimators": [128, 256, 512, 1024],
}


class AbsoluteForest(BaseEstimator, RegressorMixin):
    """Extra-trees regressor of ``target`` ("time": fitted on log time; "power") from a feature matrix.

    ``fit(X, y, groups)``: with ``groups`` and a grid of more than one point, the hyper-parameters are chosen
    by a grouped ``inner_folds``-fold search minimising MAPE on the original scale.
    """

    def __init__(self, target: str = "time", grid: dict[str, list] | None = None, inner_folds: int = 3,
                 feature_names: Sequence[str] = PORTABLE, seed: int = 0) -> None:
        self.target = target
        self.grid = grid
        self.inner_folds = inner_folds
        self.feature_names = feature_names
        self.seed = seed

    def _log(self) -> bool:
        return self.target == "time"

    def fit(self, X: np.ndarray, y: np.ndarray, groups: Sequence[str] | None = None) -> AbsoluteForest:
        grid = self.grid if self.grid is not None else PAPER_GRID
        z = np.log(y) if self._log() else np.asarray(y, float)
        base = ExtraTreesRegressor(random_state=self.seed, n_jobs=1)
        points = int(np.prod([len(v) for v in grid.values()]))
        if points > 1 and groups is not None and len(set(groups)) >= self.inner_folds:
            search = GridSearchCV(
                base, grid, cv=GroupKFold(n_splits=self.inner_folds), n_jobs=-1,
                scoring=self._scorer(), refit=True,
            ).fit(X, z, groups=list(groups))
            self.best_params_ = search.best_params_
            self.forest_ = search.best_estimator_
        else:
            self.best_params_ = {k: v[0] for k, v in grid.items()}
            self.forest_ = base.set_params(**self.best_params_).fit(X, z)
        self.predictor_ = ForestPredictor(*self.export())
        return self

    def _scorer(self):
        log = self._log()

        def neg_mape(est: ExtraTreesRegressor, X: np.ndarray, z: np.ndarray) -> float:
            pred, true = est.predict(X), z
            if log:
                pred, true = np.exp(pred), np.exp(true)
            return -float(np.mean(np.abs(pred - true) / np.abs(true)))

        return neg_mape

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.predictor_.predict(X)

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        importances = self.forest_.feature_importances_
        return export_trees(self.forest_, "trees"), {
            "target": self.target, "log_target": self._log(), "features": list(self.feature_names),
            "best_params": {k: v for k, v in self.best_params_.items()},
            "feature_importances": {n: float(v) for n, v in zip(self.feature_names, importances)},
        }
