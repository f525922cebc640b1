"""Fitting the bottleneck time model's parameters (:mod:`ptxstatic.models.inference.bottleneck`) to a GPU's
measured launches (scipy).

An observation is one measured launch of a manifest as ``predict`` sees it
(:mod:`ptxstatic.models.evaluation.measured_launches`). The fit minimises the
squared log ratio of predicted to measured time over the launches whose counts are exact; the interval's
error factors are the 5th and 95th percentiles of the ratio on launches of families held out of the fit
(leave-one-family-out, a family being a manifest source file).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.features.work import PATH_KINDS, PIPE_NAMES, LaunchWork
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.models.evaluation.measured_launches import Observation
from ptxstatic.models.inference.bottleneck import DEFAULT_PARAMETERS, BottleneckParameters, launch_time

#: parameters the fit moves, with their bounds: physically plausible ranges, so that a few launches the
#: model cannot describe do not carry a parameter to a value that means nothing (the L2's from the A100's
#: published 5120 bytes per clock: slow launches the model does not describe otherwise pull it below what
#: streaming kernels show, and they would be called L2-bound; atomics have their own rate)
FITTED = {"dram_share": (0.5, 1.0), "l2_bytes_per_clock": (5120.0, 20000.0),
          "l2_partial_write_bytes_per_clock": (500.0, 20000.0),
          "l2_atomic_sectors_per_slice_clock": (0.05, 4.0), "l2_bytes_per_slice": (65536.0, 4194304.0),
          "l1_sectors_per_clock": (1.0, 8.0),
          "shared_wavefronts_per_clock": (0.5, 2.0), "latency_scale": (0.5, 2.0),
          "memory_latency_scale": (0.5, 2.0), "special_latency_scale": (0.5, 2.0),
          "control_latency_scale": (0.5, 4.0), "issue_scale": (0.5, 1.5), "alu_scale": (0.4, 1.5),
          "xu_scale": (0.4, 1.5), "tensor_scale": (0.5, 8.0), "loop_unroll": (1.0, 8.0),
          "constant_addresses_per_clock": (0.1, 4.0), "overlap": (2.0, 16.0), "overhead_us": (1.0, 10.0)}
#: the robust loss of the fit and its scale (log ratio): a few launches the model cannot describe (tensor
#: cores, atomics to one address) must not bend it for the rest
LOSS, LOSS_SCALE = "soft_l1", 0.2


def _with(params: BottleneckParameters, x: np.ndarray) -> BottleneckParameters:
    return replace(params, **{k: float(v) for k, v in zip(FITTED, x, strict=True)})


def log_ratios(obs: list[Observation], figures: GpuFigures, params: BottleneckParameters) -> np.ndarray:
    """log(predicted / measured) per observation at the GPU's default clocks."""
    f_mem, f_core = figures.default_clocks or (figures.memory_mhz, figures.max_core_mhz)
    return np.array([math.log(launch_time(o.work, figures, f_mem, f_core, params).time_ms / o.time_ms)
                     for o in obs])


def fit(obs: list[Observation], figures: GpuFigures, start: BottleneckParameters = DEFAULT_PARAMETERS
        ) -> BottleneckParameters:
    """The parameters that minimise the squared log ratios over ``obs`` (within :data:`FITTED`'s bounds); one
    that no launch of ``obs`` depends on (the tensor pipe's rate without a tensor-core launch) keeps its start:
    the loss is flat along it, and the solver's steps would carry it anywhere."""
    from scipy.optimize import least_squares

    if not obs:
        raise PtxstaticError("no measured launches to fit the bottleneck model on")
    lo, hi = (np.array([b[i] for b in FITTED.values()]) for i in (0, 1))
    x0 = np.clip([getattr(start, k) for k in FITTED], lo, hi)

    def residuals(x: np.ndarray) -> np.ndarray:
        return log_ratios(obs, figures, _with(start, x))

    base = residuals(x0)
    free = []
    for i in range(len(x0)):
        moved = x0.copy()
        moved[i] = x0[i] * 1.01 if x0[i] * 1.01 <= hi[i] else x0[i] * 0.99
        if not np.array_equal(residuals(moved), base):
            free.append(i)

    def partial(y: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[free] = y
        return x

    result = least_squares(lambda y: residuals(partial(y)), x0[free], bounds=(lo[free], hi[free]),
                           x_scale="jac", diff_step=1e-3, loss=LOSS, f_scale=LOSS_SCALE)
    return _with(start, partial(result.x))


def held_out_ratios(obs: list[Observation], figures: GpuFigures, start: BottleneckParameters = DEFAULT_PARAMETERS
                    ) -> dict[int, float]:
    """log(predicted / measured) of each observation by a fit that did not see its family, started from
    ``start`` (the defaults: starting from the fit on every family would carry what it learnt from the held-out
    one into parameters no other family constrains)."""
    out = {}
    for family in sorted({o.family for o in obs}):
        train = [o for o in obs if o.family != family and o.exact]
        test = [i for i, o in enumerate(obs) if o.family == family]
        params = fit(train, figures, start)
        for i, r in zip(test, log_ratios([obs[i] for i in test], figures, params), strict=True):
            out[i] = float(r)
    return out


#: GPU Mangrove's extra-trees at one point of its grid (a search in every held-out fold would take an hour)
EXTRA_TREES = {"max_features": [1.0], "criterion": ["squared_error"], "n_estimators": [256]}
#: the launch's work and traffic as the extra-trees see them (volumes as log(1 + value))
WORK_FEATURES = ("instructions", "issue_cycles", "fma_issue_cycles", "threads", "ctas", "threads_per_cta",
                 "resident_ctas", *(f"pipe_{p}" for p in PIPE_NAMES),
                 *(f"path_{k}" for k in PATH_KINDS), "dram_bytes", "l2_sectors", "l2_partial_write_sectors",
                 "l2_atomic_sectors", "l1_sectors", "shared_wavefronts", "constant_replays")


def work_features(work: LaunchWork) -> list[float]:
    """:data:`WORK_FEATURES` of one launch."""
    t = work.traffic
    volumes = [work.offchip_bytes, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] if t is None else [
        t.steady_dram_bytes.value, t.l2_read_sectors.value + t.l2_write_sectors.value,
        t.l2_partial_write_sectors.value, t.l2_atomic_sectors.value, t.l1_sectors.value,
        t.shared_wavefronts.value, t.constant_replays.value]
    counts = [work.instructions, work.issue_cycles, work.fma_issue_cycles, work.threads, work.ctas,
              *(work.pipe_cycles.get(p, 0.0) for p in PIPE_NAMES),
              *(work.path_cycles.get(k, 0.0) for k in PATH_KINDS), *volumes]
    logs = [math.log1p(max(v, 0.0)) for v in counts]
    return [*logs[:5], float(work.threads_per_cta), float(work.resident_ctas), *logs[5:]]


def extra_trees_ratios(obs: list[Observation], seed: int = 0) -> dict[int, float]:
    """log(predicted / measured) of each observation by GPU Mangrove's model, extra-trees of log time
    (:data:`EXTRA_TREES`), on :func:`work_features`, trained on the other families' exact observations."""
    from ptxstatic.models.training.forest import AbsoluteForest

    X = np.array([work_features(o.work) for o in obs])
    times = np.array([o.time_ms for o in obs])
    exact = np.array([o.exact for o in obs])
    families = np.array([o.family for o in obs])
    out = {}
    for family in sorted(set(families)):
        train = exact & (families != family)
        model = AbsoluteForest("time", EXTRA_TREES, feature_names=WORK_FEATURES, seed=seed)
        model.fit(X[train], times[train])
        test = np.flatnonzero(families == family)
        out.update(zip(test.tolist(), np.log(model.predict(X[test]) / times[test]).tolist(), strict=True))
    return out


def constant_ratios(obs: list[Observation]) -> dict[int, float]:
    """log(predicted / measured) of each observation predicted at the geometric mean of the measured times of
    the other families' exact observations (the baseline a time model must beat)."""
    out = {}
    for family in sorted({o.family for o in obs}):
        others = [math.log(o.time_ms) for o in obs if o.family != family and o.exact]
        mean = sum(others) / len(others) if others else 0.0
        out.update({i: mean - math.log(o.time_ms) for i, o in enumerate(obs) if o.family == family})
    return out


def error_factors(ratios: list[float]) -> tuple[float, float]:
    """The 5th and 95th percentiles of predicted / measured, as multiplicative interval factors: the interval
    ``[low / q95, high / q5]`` holds the measurement 90 % of the time on such launches."""
    r = np.exp(np.asarray(ratios))
    return float(1.0 / np.percentile(r, 95)), float(1.0 / np.percentile(r, 5))


def metrics(ratios: list[float] | np.ndarray) -> dict:
    """How close predicted / measured (given as log ratios) is to 1."""
    r = np.exp(np.asarray(ratios, dtype=float))
    if not len(r):
        return {"launches": 0}
    return {"launches": len(r), "within_25_percent": round(float(np.mean(np.abs(r - 1) <= 0.25)), 4),
            "within_2x": round(float(np.mean((r >= 0.5) & (r <= 2))), 4),
            "median_error": round(float(np.median(np.abs(r - 1))), 4),
            "median_ratio": round(float(np.median(r)), 4)}


def train_bottleneck(obs: list[Observation], figures: GpuFigures, out: Path, sources: dict,
                     progress: Callable[[str], None] = lambda s: None) -> Path:
    """Fit on every exact observation, score by leave-one-family-out, set the interval factors from the
    held-out errors, and write the model with its card."""
    from ptxstatic.models.inference.artifacts import save_model
    from ptxstatic.models.inference.loading import BOTTLENECK
    from ptxstatic.models.training.train import library_versions

    exact = [o for o in obs if o.exact]
    progress(f"fitting on {len(exact)} launches with exact block counts")
    params = fit(exact, figures)
    progress("leave-one-family-out")
    held = held_out_ratios(obs, figures)
    held_exact = [held[i] for i, o in enumerate(obs) if o.exact and i in held]
    low, high = error_factors(held_exact)
    fitted_on = f"fitted on {len(exact)} launches of {figures.name} ({', '.join(sorted(sources))})"
    params = replace(params, error_low=low, error_high=high, fitted_on=fitted_on)
    inside = log_ratios(exact, figures, params)
    progress("baselines")
    exact_index = [i for i, o in enumerate(obs) if o.exact and i in held]
    constant = constant_ratios(obs)
    trees = extra_trees_ratios(obs)
    baselines = {
        "unfitted": metrics(log_ratios([obs[i] for i in exact_index], figures, DEFAULT_PARAMETERS)),
        "extra_trees": metrics([trees[i] for i in exact_index]),
        "constant": metrics([constant[i] for i in exact_index]),
    }
    card = {
        "name": BOTTLENECK, "gpu": figures.name, "training_data": sources,
        "split": "fitted on every launch whose block counts are exact (measured on the GPU, or static and exact); "
                 "scored leave-one-family-out (a family: a manifest source file)",
        "evaluation": {"in_sample": metrics(inside), "leave_one_family_out": metrics(held_exact),
                       "baselines_held_out": baselines,
                       "baselines_how": "unfitted: the same model with its default parameters on the published "
                                        "figures (no fit); extra_trees: GPU Mangrove's extra-trees of log time "
                                        "(256 trees, every feature at each split) on the launch's work and "
                                        "traffic (instructions, issue, pipe and latency-path cycles, launch size, "
                                        "DRAM, L2, L1, shared and constant volumes), trained on the other "
                                        "families; constant: each held-out family's launches predicted at "
                                        "the geometric mean of the other families' measured times",
                       "by_family_held_out": {f: metrics([held[i] for i, o in enumerate(obs)
                                                          if o.family == f and o.exact and i in held])
                                              for f in sorted({o.family for o in obs})}},
        "interval": {"error_low": low, "error_high": high,
                     "how": "5th and 95th percentiles of measured / predicted on held-out families"},
        "library_versions": library_versions(),
    }
    return save_model(out / BOTTLENECK if out.name != BOTTLENECK else out, "bottleneck", {}, params.to_dict(), card)
