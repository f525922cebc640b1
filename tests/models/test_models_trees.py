"""Tree ensembles exported to arrays agree with scikit-learn; the tree-based baselines and absolute forests."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

from ptxstatic.analysis.sequence import SeqItem
from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.sequence_features import PORTABLE, features_from_sequence
from ptxstatic.models.inference.tree_arrays import TreeEnsemble, export_trees
from ptxstatic.models.training.baselines import GroupForest, MeanSurface, WuClusters
from ptxstatic.models.training.forest import AbsoluteForest

RNG = np.random.default_rng(0)


def test_regressor_arrays_predict_like_scikit_learn() -> None:
    X = RNG.normal(size=(200, 5)).astype(np.float32).astype(np.float64) * 3
    y = np.column_stack([X[:, 0] * 2 + X[:, 1], np.sin(X[:, 2])])
    forest = ExtraTreesRegressor(n_estimators=20, random_state=0).fit(X, y)
    trees = TreeEnsemble(export_trees(forest, "t"), "t", 5)
    Xt = RNG.normal(size=(50, 5)) * 3
    np.testing.assert_allclose(trees.predict(Xt), forest.predict(Xt), rtol=0, atol=1e-12)


def test_classifier_arrays_give_class_probabilities() -> None:
    X = RNG.normal(size=(150, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1).astype(int)
    forest = ExtraTreesClassifier(n_estimators=15, random_state=1).fit(X, y)
    trees = TreeEnsemble(export_trees(forest, "c"), "c", 4)
    Xt = RNG.normal(size=(40, 4))
    np.testing.assert_allclose(trees.predict(Xt), forest.predict_proba(Xt), atol=1e-12)


def test_inconsistent_arrays_are_refused() -> None:
    forest = ExtraTreesRegressor(n_estimators=3, random_state=0).fit(RNG.normal(size=(30, 2)), RNG.normal(size=30))
    arrays = export_trees(forest, "t")
    arrays["t.left"] = arrays["t.left"].copy()
    arrays["t.left"][0] = 10**6  # a child beyond the node table
    with pytest.raises(PtxstaticError, match="inconsistent"):
        TreeEnsemble(arrays, "t", 2)
    with pytest.raises(PtxstaticError, match="features"):
        TreeEnsemble(export_trees(forest, "t"), "t", 2).predict(np.zeros((1, 3)))


def _toy_dvfs(n: int = 40) -> tuple[list, np.ndarray, ClockTable]:
    """Kernels mixing fp32 and global loads: the more loads, the more time grows at the low memory clock."""
    clocks = ClockTable((1000, 1000, 2000, 2000), (500, 1000, 500, 1000))
    fma = SeqItem("fma", "fp32", "", "f32", 1, 3, 1, False, 1, "arith")
    ld = SeqItem("ld", "mem.global", "global", "f32", 1, 1, 1, False, 0, "none")
    seqs, ys = [], []
    for i in range(n):
        share = i / (n - 1)
        seqs.append([(ld, 1 + int(100 * share)), (fma, 1 + int(100 * (1 - share)))])
        time = np.array([1 + share + (1 - share), 1 + share, 1 + (1 - share), 1.0])
        ys.append(np.stack([time, 1 / time ** 0.5, time ** 0.5]))
    return seqs, np.array(ys), clocks


@pytest.mark.parametrize(
    "model", [MeanSurface(), GroupForest(n_estimators=20, min_samples_leaf=2), WuClusters(n_clusters=4)]
)
def test_dvfs_baselines(model) -> None:
    seqs, y, clocks = _toy_dvfs()
    model.fit(seqs[::2], y[::2], clocks)
    pred = model.predict(seqs[1::2])
    assert pred.shape == y[1::2].shape and np.all(pred > 0)
    np.testing.assert_allclose(pred[:, :, clocks.reference], 1.0)
    if not isinstance(model, MeanSurface):  # the instruction mix tells the surfaces apart
        err = np.abs(pred - y[1::2]).mean()
        assert err < 0.5 * np.abs(y[::2].mean(axis=0) - y[1::2]).mean()


def test_absolute_forest_grid_search_and_numpy_inference() -> None:
    seqs, _, _ = _toy_dvfs(30)
    X = np.array([[features_from_sequence(s)[f] for f in PORTABLE] for s in seqs])
    y = 0.01 * X[:, PORTABLE.index("bytes_global")] + 0.002 * X[:, PORTABLE.index("arith")] + 1.0
    grid = {"max_features": [1.0, "sqrt"], "n_estimators": [16]}
    model = AbsoluteForest(target="time", grid=grid).fit(X, y, [f"g{i // 2}" for i in range(len(y))])
    assert model.best_params_["n_estimators"] == 16
    np.testing.assert_allclose(model.predict(X), np.exp(model.forest_.predict(X)), rtol=1e-12)
    assert np.mean(np.abs(model.predict(X) - y) / y) < 0.05
    imp = model.export()[1]["feature_importances"]
    assert set(imp) == set(PORTABLE) and abs(sum(imp.values()) - 1) < 1e-9
