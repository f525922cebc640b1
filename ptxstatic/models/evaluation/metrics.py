"""Error metrics: the paper's DVFS-scaling metrics, interval coverage, per-sample errors, and the
absolute-prediction metrics of the tree models. Every evaluation (``ptxstatic evaluate``, cross-validation,
the comparison scripts) computes its figures here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.models.inference.targets import HEADS


def percentage_errors(true: np.ndarray, pred: np.ndarray) -> np.ndarray:
    return 100.0 * np.abs(pred - true) / np.abs(true)


def absolute_metrics(true: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """MAPE (mean and median, %) and inlier ratios (share of predictions within 10 % and 20 %)."""
    ape = percentage_errors(np.asarray(true, float), np.asarray(pred, float))
    return {
        "mape_mean": float(ape.mean()), "mape_median": float(np.median(ape)),
        "within_10": float(100.0 * (ape <= 10).mean()), "within_20": float(100.0 * (ape <= 20).mean()),
    }


def scaling_metrics(true: np.ndarray, pred: np.ndarray, reference: int) -> dict[str, dict[str, float]]:
    """Per head, over every configuration but the reference (where every model is exact by definition):
    mean absolute percentage error, mean absolute error in scaling-factor points (×100), share within 10 %.

    ``true``, ``pred``: (samples, 3, configs) scaling factors in ``HEADS`` order.
    """
    keep = [c for c in range(true.shape[2]) if c != reference]
    out = {}
    for h, name in enumerate(HEADS):
        t, p = true[:, h, keep], pred[:, h, keep]
        ape = percentage_errors(t, p)
        out[name] = {
            "mape": float(ape.mean()), "abs_points": float(100.0 * np.abs(p - t).mean()),
            "within_10": float(100.0 * (ape <= 10).mean()),
        }
    return out


def energy_choice_metrics(true_energy: np.ndarray, predicted_energy: np.ndarray, reference: int) -> dict[str, float]:
    """For each sample, pick the configuration of least predicted energy and score it on the true energy.

    Returns the mean energy saved against the reference configuration (F_max), the same for the oracle
    (true minimum), and the mean and worst excess of the choice over the oracle, all in %.
    """
    n = np.arange(true_energy.shape[0])
    choice = predicted_energy.argmin(axis=1)
    chosen = true_energy[n, choice]
    best = true_energy.min(axis=1)
    ref = true_energy[:, reference]
    excess = 100.0 * (chosen / best - 1.0)
    return {
        "saved_vs_fmax": float(100.0 * (1.0 - chosen / ref).mean()),
        "oracle_saved_vs_fmax": float(100.0 * (1.0 - best / ref).mean()),
        "excess_over_oracle": float(excess.mean()),
        "worst_excess_over_oracle": float(excess.max()),
    }


def dvfs_report(true: np.ndarray, pred: np.ndarray, reference: int) -> dict:
    """Scaling metrics per head (and of the energy as predicted time × power), and the minimum-energy choice
    scored with each energy estimate."""
    product = np.stack([pred[:, 0], pred[:, 1], pred[:, 0] * pred[:, 1]], axis=1)
    return {
        "scaling": scaling_metrics(true, pred, reference),
        "energy_time_power": scaling_metrics(true, product, reference)["energy"],
        "energy_choice": {
            "head": energy_choice_metrics(true[:, 2], pred[:, 2], reference),
            "time*power": energy_choice_metrics(true[:, 2], pred[:, 0] * pred[:, 1], reference),
        },
    }


def coverage(true: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], reference: int) -> dict[str, float]:
    """Share (%) of true scaling factors inside the interval bounds, per head, over every configuration but
    the reference."""
    lo, hi = bounds
    keep = np.arange(true.shape[-1]) != reference
    inside = (true >= lo * (1 - 1e-9)) & (true <= hi * (1 + 1e-9))
    return {name: float(100.0 * inside[:, h][:, keep].mean()) for h, name in enumerate(HEADS)}


def per_sample_errors(true: np.ndarray, pred: np.ndarray, names: Sequence[str], reference: int) -> dict[str, dict]:
    """Time, power and energy MAPE (%) of each sample over every configuration but the reference."""
    keep = np.arange(true.shape[-1]) != reference
    ape = percentage_errors(true[..., keep], pred[..., keep]).mean(axis=2)
    return {n: {h: round(float(ape[i, j]), 2) for j, h in enumerate(HEADS)} for i, n in enumerate(names)}


def dvfs_entry(true: np.ndarray, pred: np.ndarray, reference: int,
               bounds: tuple[np.ndarray, np.ndarray] | None = None, names: Sequence[str] | None = None) -> dict:
    """:func:`dvfs_report`, with the intervals' coverage where ``bounds`` are given and per-sample errors
    where ``names`` are."""
    out = dvfs_report(true, pred, reference)
    if bounds is not None:
        out["coverage"] = coverage(true, bounds, reference)
    if names is not None:
        out["per_sample"] = per_sample_errors(true, pred, names, reference)
    return out
