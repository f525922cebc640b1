"""Fitting the board power model (:mod:`ptxstatic.models.inference.board_power`) to a GPU's measured power at
its default clocks (scipy).

An observation is a measured launch with the board power ``collect`` measured while it ran, and its weight
(:mod:`ptxstatic.models.evaluation.measured_launches`: which samples are used, and how much). The weights
are a non-negative least-squares fit (residuals in watts, weighted as the samples are); the interval's
factors are the 5th and 95th percentiles of measured / predicted on families (manifest source files) left
out of the fit. The card scores the model and a constant (the weighted mean power of the training
families) by leave-one-family-out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.models.evaluation.measured_launches import (
    MAX_POWER_RESOLUTION,
    MIN_POWER_LOOP_S,
    UNRELIABLE_WEIGHT,
    PowerObservation,
)
from ptxstatic.models.evaluation.metrics import percentage_errors
from ptxstatic.models.inference.board_power import PowerParameters, activities
from ptxstatic.models.inference.bottleneck import BottleneckParameters


def design(pobs: list[PowerObservation], figures: GpuFigures, time_params: BottleneckParameters
           ) -> tuple[np.ndarray, list[str]]:
    """The activity matrix (one row per observation) and the activities' names."""
    f_mem, f_core = figures.default_clocks or (figures.memory_mhz, figures.max_core_mhz)
    rows = [activities(p.observation.work, figures, f_mem, f_core, time_params) for p in pobs]
    names = sorted({k for r in rows for k in r})
    return np.array([[r.get(k, 0.0) for k in names] for r in rows]).reshape(len(rows), len(names)), names


def fit_weights(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Idle power and non-negative activity weights minimising the weighted squared residuals in watts (relative
    residuals were tried: they let the near-idle launches, whose time the model misses most, decide the fit,
    and score worse held out)."""
    from scipy.optimize import nnls

    scale = np.sqrt(w)
    A = np.hstack([np.ones((len(y), 1)), X]) * scale[:, None]
    coef, _ = nnls(A, y * scale)
    return float(coef[0]), coef[1:]


def held_out(X: np.ndarray, y: np.ndarray, w: np.ndarray, families: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Predictions of the model and of the constant for each observation, by fits without its family."""
    fam = np.array(families)
    model, constant = np.zeros(len(y)), np.zeros(len(y))
    for family in sorted(set(families)):
        train, test = fam != family, fam == family
        idle, coef = fit_weights(X[train], y[train], w[train])
        model[test] = idle + X[test] @ coef
        constant[test] = np.average(y[train], weights=w[train])
    return model, constant


def error_factors(predicted: np.ndarray, measured: np.ndarray) -> tuple[float, float]:
    """Interval factors from the 5th and 95th percentiles of measured / predicted."""
    r = measured / predicted
    return float(np.percentile(r, 5)), float(np.percentile(r, 95))


def metrics(predicted: np.ndarray, measured: np.ndarray, low: float | None = None, high: float | None = None
            ) -> dict:
    """Relative errors of ``predicted`` against ``measured``; with interval factors, the share held."""
    if not len(measured):
        return {"launches": 0}
    e = percentage_errors(measured, predicted) / 100.0
    out = {"launches": len(measured), "median_error": round(float(np.median(e)), 4),
           "mean_error": round(float(np.mean(e)), 4), "within_10_percent": round(float(np.mean(e <= 0.1)), 4)}
    if low is not None and high is not None:
        held = (measured >= predicted * low) & (measured <= predicted * high)
        out["interval_holds"] = round(float(np.mean(held)), 4)
    return out


def train_power(pobs: list[PowerObservation], figures: GpuFigures, time_params: BottleneckParameters, out: Path,
                sources: dict, progress: Callable[[str], None] = lambda s: None) -> Path:
    """Score by leave-one-family-out, fit on every observation, set the interval from the held-out errors,
    and write the model with its card."""
    from ptxstatic.models.inference.artifacts import save_model
    from ptxstatic.models.inference.loading import POWER
    from ptxstatic.models.training.train import library_versions

    if len(pobs) < 10 or len({p.observation.family for p in pobs}) < 3:
        raise PtxstaticError(f"{len(pobs)} launches with usable power measurements of {figures.name} in "
                             f"{len({p.observation.family for p in pobs})} families: too few to fit and score a "
                             "power model (at least 10 launches of 3 families)")
    X, names = design(pobs, figures, time_params)
    y = np.array([p.power_w for p in pobs])
    w = np.array([p.weight for p in pobs])
    families = [p.observation.family for p in pobs]
    progress(f"leave-one-family-out over {len(set(families))} families")
    model, constant = held_out(X, y, w, families)
    low, high = error_factors(model, y)
    reliable = w == 1.0
    idle, coef = fit_weights(X, y, w)
    progress(f"fitted on {len(pobs)} launches: idle {idle:.0f} W")
    fitted_on = f"fitted on {len(pobs)} launches of {figures.name} ({', '.join(sorted(sources))})"
    params = PowerParameters(idle, {n: float(c) for n, c in zip(names, coef, strict=True)}, low, high, fitted_on,
                             tuple(names))
    fam = np.array(families)
    by_family = {f: metrics(model[fam == f], y[fam == f]) for f in sorted(set(families))}
    card = {
        "name": POWER, "gpu": figures.name, "training_data": sources,
        "time_model": time_params.fitted_on or "default parameters",
        "samples": {"used": len(pobs), "flagged_down_weighted": int((~reliable).sum()),
                    "how": f"power the dataset flags as unreliable (not steady, or its two readings differ) counts "
                           f"{UNRELIABLE_WEIGHT:g}; samples measured for less than {MIN_POWER_LOOP_S:g} s (or "
                           f"whose stated resolution is worse than {MAX_POWER_RESOLUTION:.0%}) are left out"},
        "split": "fitted on every launch with usable power; scored leave-one-family-out (a family: a manifest "
                 "source file)",
        "evaluation": {
            "leave_one_family_out": {"model": metrics(model, y, low, high), "constant": metrics(constant, y),
                                     "model_unflagged": metrics(model[reliable], y[reliable]),
                                     "constant_unflagged": metrics(constant[reliable], y[reliable])},
            "in_sample": metrics(idle + X @ coef, y),
            "by_family_held_out": by_family,
        },
        "interval": {"error_low": low, "error_high": high,
                     "how": "5th and 95th percentiles of measured / predicted on held-out families (so it holds "
                            "about 90 % of those by construction)"},
        "library_versions": library_versions(),
    }
    return save_model(out, "power", {}, params.to_dict(), card)
