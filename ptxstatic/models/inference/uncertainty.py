"""Shrinkage toward the training mean surface and prediction intervals (numpy only).

Both are fitted on out-of-fold predictions of the training set (cross-validation folds that hold out whole
benchmark families), never on the data they are judged on:

* the blend weight toward the mean surface is ``w = max(unknown, clip(alpha + beta · ood_score, 0, 1))``:
  at least the executed share of instructions whose group, state space or width the model never saw (it
  knows nothing about that part, so a kernel made only of such instructions gets the mean surface), and
  more as the out-of-distribution score grows, with alpha and beta minimising the mean absolute log error
  of the blended out-of-fold surfaces. The blend is taken in log space for time and power separately and
  energy is their product, so every blended surface stays monotone where both parts are, is exactly 1 at
  F_max, and keeps energy = time × power;
* intervals are symmetric in log space, ``[ŷ·e^−h, ŷ·e^h]`` with ``h = (1 − w)·h_model + w·h_mean`` per
  head and configuration: ``h_mean`` is the spread of the training surfaces around their mean (what is
  known with no model), ``h_model`` the smallest width that covers ``level`` of the out-of-fold samples
  (split-conformal, with the finite-sample correction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHAS = np.round(np.arange(0.0, 1.0001, 0.05), 2)
BETAS = np.round(np.concatenate([np.arange(0.0, 4.0, 0.25), np.arange(4.0, 20.0001, 1.0)]), 2)


def blend(pred: np.ndarray, mean: np.ndarray, w: np.ndarray, energy_from: str = "time*power") -> np.ndarray:
    """(n, 3, configs) surfaces: time and power blended in log space with weights ``w`` (n,) toward
    ``mean``; energy = time × power, or (``energy_from="head"``, for models with an energy head) the heads'
    log blend."""
    w = np.asarray(w, dtype=np.float64).reshape(-1, 1)

    def mix(h: int) -> np.ndarray:
        return np.exp((1.0 - w) * np.log(pred[:, h]) + w * np.log(mean[:, h]))

    t, p = mix(0), mix(1)
    return np.stack([t, p, t * p if energy_from == "time*power" else mix(2)], axis=1)


def _log_error(pred: np.ndarray, y: np.ndarray, keep: np.ndarray) -> float:
    return float(np.abs(np.log(pred[..., keep]) - np.log(y[..., keep])).mean())


@dataclass(frozen=True)
class Shrinkage:
    alpha: float = 0.0
    beta: float = 0.0

    def weight(self, score: np.ndarray | float, unseen: np.ndarray | float) -> np.ndarray:
        """Blend weights for out-of-distribution scores and unseen-instruction shares."""
        fitted = np.clip(self.alpha + self.beta * np.asarray(score, dtype=np.float64), 0.0, 1.0)
        return np.maximum(np.asarray(unseen, dtype=np.float64), fitted)

    @classmethod
    def fit(cls, pred: np.ndarray, mean: np.ndarray, y: np.ndarray, scores: np.ndarray, unseen: np.ndarray,
            reference: int, energy_from: str = "time*power") -> Shrinkage:
        """The (alpha, beta) on the grid with the least mean absolute log error of the blended surfaces."""
        keep = np.arange(y.shape[-1]) != reference
        best = min(((_log_error(blend(pred, mean, cls(a, b).weight(scores, unseen), energy_from), y, keep), a, b)
                    for a in ALPHAS for b in BETAS), key=lambda t: (t[0], t[1], t[2]))
        return cls(float(best[1]), float(best[2]))


def _conformal_width(resid: np.ndarray, w: np.ndarray, h_mean: float, level: float) -> float:
    """Smallest h0 with a share ≥ level (finite-sample corrected) of ``resid_i ≤ (1 − w_i)·h0 + w_i·h_mean``."""
    n = len(resid)
    need = min(n, math.ceil((n + 1) * level))
    free = w < 1.0
    covered_anyway = int(np.sum(~free & (resid <= h_mean)))
    thresholds = np.sort(np.maximum((resid[free] - w[free] * h_mean) / (1.0 - w[free]), 0.0))
    k = need - covered_anyway
    if k <= 0:
        return 0.0
    return float(thresholds[min(k, len(thresholds)) - 1]) if len(thresholds) else 0.0


@dataclass(frozen=True)
class Intervals:
    level: float
    h_model: np.ndarray  # (3, configs) log half-widths of the model's own prediction
    h_mean: np.ndarray  # (3, configs) log half-widths of the mean surface

    def half_widths(self, w: np.ndarray) -> np.ndarray:
        """(n, 3, configs) log half-widths for blend weights ``w``."""
        w = np.asarray(w, dtype=np.float64).reshape(-1, 1, 1)
        return (1.0 - w) * self.h_model + w * self.h_mean

    def bounds(self, surfaces: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = self.half_widths(w)
        return surfaces * np.exp(-h), surfaces * np.exp(h)

    @classmethod
    def fit(cls, final: np.ndarray, y: np.ndarray, w: np.ndarray, train_y: np.ndarray, level: float = 0.9
            ) -> Intervals:
        """``final``: out-of-fold blended predictions; ``train_y``: the training surfaces (their spread
        around their mean gives ``h_mean``)."""
        spread = np.abs(np.log(train_y) - np.log(train_y).mean(axis=0))
        n = len(train_y)
        h_mean = np.sort(spread, axis=0)[min(n, math.ceil((n + 1) * level)) - 1]
        resid = np.abs(np.log(final) - np.log(y))
        h_model = np.empty(y.shape[1:])
        for h in range(y.shape[1]):
            for c in range(y.shape[2]):
                h_model[h, c] = _conformal_width(resid[:, h, c], np.asarray(w), h_mean[h, c], level)
        return cls(level, h_model, h_mean)
