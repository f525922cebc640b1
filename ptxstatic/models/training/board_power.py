"""Fitting the board power model (:mod:`ptxstatic.models.inference.board_power`) to a GPU's measured power at
its default clocks (scipy).

An observation is a measured launch with the board power ``collect`` measured while it ran, and its weight
(:mod:`ptxstatic.models.evaluation.measured_launches`: which samples are used, and how much). The weights
are a bounded least-squares fit (residuals in watts, weighted as the samples are): no weight below 0 nor,
where the GPU publishes its power limit, above it (a unit at full use cannot draw more than the whole board
may; an activity the training launches barely exercise would otherwise take any weight that fits a residual,
up to hundreds of kilowatts, and the family left out that does exercise it would be predicted at that). The
interval's factors are the 5th and 95th percentiles of measured / predicted on families (manifest source
files) left out of the fit. The card scores the model and a constant (the weighted mean power of the training
families) by leave-one-family-out.

One published figure joins the measurements: the tensor cores are what takes a board to its power limit
(dense matrix products on them are what its TDP is rated on), so where the GPU has a published limit the fit
sees one more launch, of weight 1, that keeps the tensor pipe busy and nothing else and draws the limit. Only
one benchmark family keeps the tensor cores busy: without that launch, the family left out would be
predicted at little above idle. The card also states how far apart launches whose activities agree draw
(:func:`activity_twins`): what the activities cannot tell apart (the operands' switching, which the
instructions do not show), a floor for any model of them.
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


#: the activity a board's published power limit is taken to be reached by at full use
LIMIT_ACTIVITY = "tensor"
#: how close (in every activity) two launches' activities are for :func:`activity_twins`
TWIN_TOLERANCE = 0.05

Prior = tuple[np.ndarray, float]  # one launch's activities and its power


def power_limit_launch(names: list[str], figures: GpuFigures) -> Prior | None:
    """The launch of the published figure (module docstring); None where the GPU publishes no limit or the
    activities have no tensor pipe."""
    if figures.power_limit_w is None or LIMIT_ACTIVITY not in names:
        return None
    return np.array([1.0 if n == LIMIT_ACTIVITY else 0.0 for n in names]), float(figures.power_limit_w)


def fit_weights(X: np.ndarray, y: np.ndarray, w: np.ndarray, prior: Prior | None = None,
                upper: float = np.inf) -> tuple[float, np.ndarray]:
    """Idle power and activity weights, each in [0, ``upper``], minimising the weighted squared residuals in
    watts (relative residuals were tried: they let the near-idle launches, whose time the model misses most,
    decide the fit, and score worse held out)."""
    from scipy.optimize import lsq_linear

    if prior is not None:
        X, y, w = np.vstack([X, prior[0]]), np.append(y, prior[1]), np.append(w, 1.0)
    scale = np.sqrt(w)
    A = np.hstack([np.ones((len(y), 1)), X]) * scale[:, None]
    coef = lsq_linear(A, y * scale, bounds=(0.0, upper)).x.round(6)  # the solver's 1e-30 W are 0
    return float(coef[0]), coef[1:]


def held_out(X: np.ndarray, y: np.ndarray, w: np.ndarray, families: list[str], prior: Prior | None = None,
             upper: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Predictions of the model and of the constant for each observation, by fits without its family."""
    fam = np.array(families)
    model, constant = np.zeros(len(y)), np.zeros(len(y))
    for family in sorted(set(families)):
        train, test = fam != family, fam == family
        idle, coef = fit_weights(X[train], y[train], w[train], prior, upper)
        model[test] = idle + X[test] @ coef
        constant[test] = np.average(y[train], weights=w[train])
    return model, constant


def activity_twins(X: np.ndarray, y: np.ndarray, benchmarks: list[str], reliable: np.ndarray) -> dict:
    """Pairs of launches of different benchmarks whose activities all agree within :data:`TWIN_TOLERANCE`,
    both with power the dataset trusts, and the median of their powers' difference over the smaller."""
    diffs = [abs(y[i] - y[j]) / min(y[i], y[j])
             for i in range(len(y)) for j in range(i + 1, len(y))
             if reliable[i] and reliable[j] and benchmarks[i] != benchmarks[j]
             and np.max(np.abs(X[i] - X[j])) <= TWIN_TOLERANCE]
    return {"pairs": len(diffs), "median_difference": round(float(np.median(diffs)), 4) if diffs else None,
            "how": f"launches of different benchmarks whose activities all agree within {TWIN_TOLERANCE:g}, both "
                   "with power the dataset trusts: how far apart their measured powers are (over the smaller), "
                   "which no model of these activities can tell apart"}


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
    prior = power_limit_launch(names, figures)
    upper = figures.power_limit_w or np.inf
    progress(f"leave-one-family-out over {len(set(families))} families")
    model, constant = held_out(X, y, w, families, prior, upper)
    low, high = error_factors(model, y)
    reliable = w == 1.0
    idle, coef = fit_weights(X, y, w, prior, upper)
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
        "published_launch": ({"activity": LIMIT_ACTIVITY, "power_w": prior[1], "weight": 1.0,
                              "how": "the board's published power limit, drawn with the tensor pipe at full use "
                                     "and nothing else: one more launch in every fit"}
                             if prior is not None else None),
        "weight_bounds": {"low_w": 0.0, "high_w": figures.power_limit_w,
                          "how": "each weight, idle included, between 0 and the board's published power limit "
                                 "(none where it publishes none)"},
        "evaluation": {
            "leave_one_family_out": {"model": metrics(model, y, low, high), "constant": metrics(constant, y),
                                     "model_unflagged": metrics(model[reliable], y[reliable]),
                                     "constant_unflagged": metrics(constant[reliable], y[reliable])},
            "in_sample": metrics(idle + X @ coef, y),
            "by_family_held_out": by_family,
            "activity_twins": activity_twins(X, y, [p.observation.benchmark for p in pobs], reliable),
        },
        "interval": {"error_low": low, "error_high": high,
                     "how": "5th and 95th percentiles of measured / predicted on held-out families (so it holds "
                            "about 90 % of those by construction)"},
        "library_versions": library_versions(),
    }
    return save_model(out, "power", {}, params.to_dict(), card)
