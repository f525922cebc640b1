"""Fitting the physical surfaces to measured ones (training time: scipy).

:func:`fit_shape` learns the GPU's two constants once from the training surfaces (the overlap exponent p of
time, the exponent k of dynamic core power); :func:`fit_quantities` fits each kernel's four quantities to
its measured surfaces: those become the targets that learners predict.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from ptxstatic.dvfs import ClockTable
from ptxstatic.models.inference.physical_surfaces import PhysicalShape, idle_curve

#: overlap exponents p compared when learning a GPU's shape
OVERLAPS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
#: dynamic core power exponents k compared (k = 3: voltage proportional to the clock)
CORE_EXPONENTS = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0)
_GRID = np.linspace(0.0, 1.0, 41)


def fit_time(times: np.ndarray, shape: PhysicalShape) -> np.ndarray:
    """(kernels, 2) time_fixed, time_memory minimising the squared log error of the time surfaces: a grid
    search, refined twice on a ten times finer grid around the best point."""
    log_t = np.log(times)
    best = _best_on(_pairs(_GRID, _GRID)[None], log_t, shape)
    step = _GRID[1]
    for _ in range(2):
        step /= 10
        local = np.clip(best[:, None, :] + _pairs(*(np.arange(-10, 11) * step,) * 2)[None], 0.0, 1.0)
        best = _best_on(local, log_t, shape)
    return best


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x, y = np.meshgrid(a, b, indexing="ij")
    return np.column_stack([x.ravel(), y.ravel()])


def _best_on(candidates: np.ndarray, log_t: np.ndarray, shape: PhysicalShape) -> np.ndarray:
    """The (time_fixed, time_memory) of ``candidates`` ((1 or kernels), m, 2) nearest each kernel's log time."""
    k, m = candidates.shape[:2]
    q = np.concatenate([candidates.reshape(k * m, 2), np.zeros((k * m, 2))], axis=1)
    log_grid = np.log(shape.time(q)).reshape(k, m, -1)
    err = ((log_grid - log_t[:, None, :]) ** 2).sum(axis=2) if k > 1 else (
        (log_grid[0] ** 2).sum(axis=1)[None] - 2 * log_t @ log_grid[0].T)
    pick = np.argmin(err, axis=1)
    return candidates[np.arange(k) if k > 1 else np.zeros(len(log_t), dtype=int), pick]


def fit_power(powers: np.ndarray, times: np.ndarray, shape: PhysicalShape) -> np.ndarray:
    """(kernels, 2) power_static, power_work: bounded least squares of the relative power error with the
    core share 1 − s_i − s_w, so the reference configuration is matched exactly. ``times``: the kernels'
    time surfaces (the fitted ones, so that power is fitted as the model will compute it)."""
    core = shape.core_power_curve()
    out = np.empty((len(powers), 2))
    for i, (p, t) in enumerate(zip(powers, times)):
        w = 1.0 / p
        A = np.column_stack([shape.idle - core, 1.0 / t - core]) * w[:, None]
        s = lsq_linear(A, (p - core) * w, bounds=([0.0, 0.0], [1.0, 1.0])).x
        out[i] = s / max(1.0, s.sum())
    return out


def fit_quantities(y: np.ndarray, shape: PhysicalShape) -> np.ndarray:
    """(kernels, 4) quantities (``physical.QUANTITIES``) fitted to (kernels, 3, configs) measured surfaces."""
    q = np.column_stack([fit_time(y[:, 0], shape), np.zeros((len(y), 2))])
    q[:, 2:] = fit_power(y[:, 1], shape.time(q), shape)
    return q


def _mean_sq_log(a: np.ndarray, b: np.ndarray) -> float:
    return float(((np.log(a) - np.log(b)) ** 2).mean())


def fit_shape(y: np.ndarray, clocks: ClockTable, overlaps: tuple[float, ...] = OVERLAPS,
              core_exponents: tuple[float, ...] = CORE_EXPONENTS) -> PhysicalShape:
    """The GPU's shape from training surfaces: the overlap exponent with the least mean squared log error
    of the per-kernel time fits, then the core exponent with the least error of the power fits."""
    idle = idle_curve(clocks)
    best: tuple[float, PhysicalShape, np.ndarray] | None = None
    for p in overlaps:
        shape = PhysicalShape(clocks, p, 3.0, idle)
        q = np.column_stack([fit_time(y[:, 0], shape), np.zeros((len(y), 2))])
        err = _mean_sq_log(shape.time(q), y[:, 0])
        if best is None or err < best[0]:
            best = (err, shape, q)
    assert best is not None
    _, shape, q = best
    times = shape.time(q)
    best = None
    for k in core_exponents:
        candidate = PhysicalShape(clocks, shape.overlap, k, idle)
        q[:, 2:] = fit_power(y[:, 1], times, candidate)
        err = _mean_sq_log(candidate.power(q, times), y[:, 1])
        if best is None or err < best[0]:
            best = (err, candidate, q.copy())
    return best[1]  # type: ignore[index]
