"""Decision-tree ensembles as flat arrays, evaluated in numpy (vectorised over samples and trees).

``export_trees`` takes a fitted scikit-learn forest (regressor or classifier) without importing
scikit-learn; ``TreeEnsemble`` needs only the arrays.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.errors import PtxstaticError


def export_trees(forest: object, prefix: str) -> dict[str, np.ndarray]:
    """Flatten a fitted forest: children, split feature and threshold per node, leaf values, tree roots.

    Leaf values are the tree's prediction: the mean target for a regressor, class probabilities for a
    classifier (rows normalised). Arrays are named ``{prefix}.left`` etc.
    """
    lefts, rights, feats, thrs, vals, roots = [], [], [], [], [], []
    offset, depth = 0, 0
    for est in forest.estimators_:  # type: ignore[attr-defined]
        t = est.tree_
        n = t.node_count
        leaf = t.children_left < 0
        lefts.append(np.where(leaf, -1, t.children_left + offset))
        rights.append(np.where(leaf, -1, t.children_right + offset))
        feats.append(np.where(leaf, 0, t.feature))
        thrs.append(np.where(leaf, 0.0, t.threshold))
        v = t.value.reshape(n, -1)
        if hasattr(forest, "classes_"):
            v = v / np.maximum(v.sum(axis=1, keepdims=True), 1e-300)
        vals.append(v)
        roots.append(offset)
        offset += n
        depth = max(depth, int(t.max_depth))
    return {
        f"{prefix}.left": np.concatenate(lefts).astype(np.int32),
        f"{prefix}.right": np.concatenate(rights).astype(np.int32),
        f"{prefix}.feature": np.concatenate(feats).astype(np.int32),
        f"{prefix}.threshold": np.concatenate(thrs).astype(np.float64),
        f"{prefix}.value": np.concatenate(vals).astype(np.float64),
        f"{prefix}.roots": np.asarray(roots, dtype=np.int32),
        f"{prefix}.depth": np.asarray([depth], dtype=np.int32),
    }


class TreeEnsemble:
    """Mean prediction of a forest over its trees, from ``export_trees`` arrays."""

    def __init__(self, arrays: dict[str, np.ndarray], prefix: str, n_features: int) -> None:
        try:
            left = np.asarray(arrays[f"{prefix}.left"], dtype=np.int64)
            right = np.asarray(arrays[f"{prefix}.right"], dtype=np.int64)
            feature = np.asarray(arrays[f"{prefix}.feature"], dtype=np.int64)
            threshold = np.asarray(arrays[f"{prefix}.threshold"], dtype=np.float64)
            self.value = np.asarray(arrays[f"{prefix}.value"], dtype=np.float64)
            self.roots = np.asarray(arrays[f"{prefix}.roots"], dtype=np.int64)
            self.depth = int(np.asarray(arrays[f"{prefix}.depth"]).reshape(-1)[0])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"tree ensemble {prefix!r} is incomplete: {exc}") from None
        n = len(left)
        internal = left >= 0
        if not (
            len(right) == len(feature) == len(threshold) == len(self.value) == n and n > 0
            and self.value.ndim == 2 and len(self.roots) > 0
            and np.all((self.roots >= 0) & (self.roots < n))
            and np.all(left[internal] < n) and np.all((right[internal] >= 0) & (right[internal] < n))
            and np.all((feature >= 0) & (feature < n_features))
            and 0 <= self.depth <= 4096
        ):
            raise PtxstaticError(f"tree ensemble {prefix!r} has inconsistent arrays")
        self.n_features = n_features
        # the walk's tables: children[2 * node + go_right]; a leaf is its own child and never goes right
        leaf, index = ~internal, np.arange(n)
        self._children = np.stack([np.where(leaf, index, left), np.where(leaf, index, right)], 1).ravel()
        self._feature = np.where(leaf, 0, feature)
        self._threshold = np.where(leaf, np.inf, threshold)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(samples, outputs) mean leaf value over the trees."""
        X = np.asarray(X, dtype=np.float32).astype(np.float64)  # scikit-learn compares float32 features
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise PtxstaticError(f"expected {self.n_features} features, got an array of shape {X.shape}")
        n, k = X.shape[0], len(self.roots)
        nodes = np.tile(self.roots, n)  # (sample, tree) flattened
        offset = np.repeat(np.arange(n) * self.n_features, k)
        flat = X.ravel()
        for _ in range(self.depth):  # leaves loop onto themselves, so every walk takes ``depth`` steps
            nodes = self._children[2 * nodes + (flat[offset + self._feature[nodes]] > self._threshold[nodes])]
        return self.value[nodes].reshape(n, k, -1).mean(axis=1)
