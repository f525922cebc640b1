"""Physically constrained DVFS surfaces: a kernel is four interpretable quantities, and its 32-configuration
time, power and energy scaling surfaces are computed from them (numpy only).

With x = F_core / f_core and y = F_mem / f_mem (1 at the reference configuration F_max, larger below it):

* time: ``T = c + ((a·x)^p + (b·y)^p)^(1/p)``. ``c`` (``time_fixed``) is the share of time at F_max that no
  clock changes (launch overhead, host waits); ``a`` and ``b`` are the core-bound and memory-bound demands,
  given by ``time_memory`` = b / (a + b) and normalised so that T(F_max) = 1. ``p`` (``overlap``) is one
  constant per GPU: p = 1 adds core and memory time (no overlap), large p takes their maximum (perfect
  overlap). Since a, b, c ≥ 0 and p > 0, time never rises when a clock rises.
* power: ``P = s_i·I(f) + s_c·(f_core/F_core)^k + s_w / T``. ``s_i`` (``power_static``) follows the GPU's
  idle-power curve I (relative to its value at F_max); ``s_c`` = 1 − s_i − s_w is dynamic core power,
  V²·f with the core voltage rising with the clock under DVFS, modelled as f^k with one exponent k
  (``core_exponent``) per GPU, learned once from the training surfaces (GPU physics, not kernel-specific);
  ``s_w`` (``power_work``) is a fixed energy per run (the switching of the arithmetic and memory work the
  kernel does) spread over its run time. P(F_max) = 1.
* energy = time × power, exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError

QUANTITIES = ("time_fixed", "time_memory", "power_static", "power_work")
#: what each quantity means, for model cards and reports
MEANINGS = {
    "time_fixed": "share of time at F_max that no clock changes",
    "time_memory": "memory-bound share of the clock-dependent demand (0 core-bound, 1 memory-bound)",
    "power_static": "share of power at F_max that follows the idle-power curve",
    "power_work": "share of power at F_max that is a fixed energy per run (arithmetic and memory traffic) "
                  "spread over the run time",
}


def clip_quantities(q: np.ndarray) -> np.ndarray:
    """Quantities moved into their valid region: each in [0, 1] and power_static + power_work ≤ 1."""
    q = np.clip(np.asarray(q, dtype=np.float64), 0.0, 1.0)
    total = q[..., 2] + q[..., 3]
    over = total > 1.0
    if np.any(over):
        q = q.copy()
        q[over, 2] /= total[over]
        q[over, 3] /= total[over]
    return q


@dataclass(frozen=True)
class PhysicalShape:
    """The kernel-independent part of the surfaces for one GPU's clock table."""

    clocks: ClockTable
    overlap: float  # p
    core_exponent: float  # k
    idle: np.ndarray  # (configs,) idle power relative to F_max

    def __post_init__(self) -> None:
        n = len(self.clocks)
        if self.idle.shape != (n,):
            raise PtxstaticError(f"physical shape: the idle-power curve must have {n} values")
        if not (self.overlap > 0 and self.core_exponent > 0 and np.all(self.idle > 0)):
            raise PtxstaticError("physical shape: overlap, core exponent and idle power must be positive")

    @property
    def core_ratio(self) -> np.ndarray:
        """x = F_core / f_core per configuration."""
        f = np.asarray(self.clocks.f_core, dtype=np.float64)
        return f[self.clocks.reference] / f

    @property
    def memory_ratio(self) -> np.ndarray:
        """y = F_mem / f_mem per configuration."""
        f = np.asarray(self.clocks.f_mem, dtype=np.float64)
        return f[self.clocks.reference] / f

    def demands(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, c) per kernel from (…, 4) quantities."""
        q = clip_quantities(q)
        c, rho, p = q[..., 0], q[..., 1], self.overlap
        norm = ((1.0 - rho) ** p + rho ** p) ** (1.0 / p)
        return (1.0 - c) * (1.0 - rho) / norm, (1.0 - c) * rho / norm, c

    def time(self, q: np.ndarray) -> np.ndarray:
        """(…, configs) time scaling factors."""
        a, b, c = self.demands(q)
        p = self.overlap
        scaled = ((a[..., None] * self.core_ratio) ** p + (b[..., None] * self.memory_ratio) ** p) ** (1.0 / p)
        return c[..., None] + scaled

    def core_power_curve(self) -> np.ndarray:
        """(f_core / F_core)^k per configuration."""
        return self.core_ratio ** -self.core_exponent

    def power(self, q: np.ndarray, time: np.ndarray) -> np.ndarray:
        """(…, configs) power scaling factors, given the kernel's time scaling."""
        q = clip_quantities(q)
        s_i, s_w = q[..., 2:3], q[..., 3:4]
        return s_i * self.idle + (1.0 - s_i - s_w) * self.core_power_curve() + s_w / time

    def surfaces(self, q: np.ndarray) -> np.ndarray:
        """(kernels, 3, configs) time, power and energy scaling factors; energy = time × power exactly."""
        q = np.atleast_2d(q)
        t = self.time(q)
        p = self.power(q, t)
        return np.stack([t, p, t * p], axis=1)

    def to_config(self) -> dict:
        return {"clocks": self.clocks.to_dict(), "overlap": float(self.overlap),
                "core_exponent": float(self.core_exponent), "idle": self.idle.tolist()}

    @classmethod
    def from_config(cls, config: dict) -> PhysicalShape:
        try:
            return cls(ClockTable.from_dict(config["clocks"]), float(config["overlap"]),
                       float(config["core_exponent"]), np.asarray(config["idle"], dtype=np.float64))
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"physical model shape is malformed ({exc!r})") from None


def idle_curve(clocks: ClockTable) -> np.ndarray:
    """Idle power per configuration relative to F_max (the clock table must record it)."""
    if clocks.idle_power_w is None:
        raise PtxstaticError("the physical model needs the idle power of every clock configuration")
    idle = np.asarray(clocks.idle_power_w, dtype=np.float64)
    return idle / idle[clocks.reference]


_COARSE = np.linspace(0.0, 1.0, 41)
_FINE = np.linspace(-1.0, 1.0, 21) / 40  # ±1 coarse step in 21 points


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x, y = np.meshgrid(a, b, indexing="ij")
    return np.column_stack([x.ravel(), y.ravel()])


def _best(candidates: np.ndarray, error: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The candidate pair of least error, refined on a finer grid around it (clipped to [0, 1])."""
    coarse = candidates[np.argmin(error(candidates))]
    fine = np.clip(coarse + _pairs(_FINE, _FINE), 0.0, 1.0)
    return fine[np.argmin(error(fine))]


def project(surfaces: np.ndarray, shape: PhysicalShape) -> np.ndarray:
    """(n, 4) quantities whose surfaces are closest to (n, 3, configs) given ones: time by squared log error
    over (time_fixed, time_memory), then power by squared relative error over (power_static, power_work)
    given that time, each on a grid refined around its best point. Lets any surface predictor (an LSTM,
    say) be read as quantities, with numpy only."""
    q = np.zeros((len(surfaces), 4))
    grid = _pairs(_COARSE, _COARSE)
    shares = grid[grid.sum(axis=1) <= 1.0 + 1e-12]
    core = shape.core_power_curve()
    for i, s in enumerate(surfaces):
        log_t = np.log(s[0])

        def time_error(c: np.ndarray, log_t: np.ndarray = log_t) -> np.ndarray:
            full = np.column_stack([c, np.zeros((len(c), 2))])
            return ((np.log(shape.time(full)) - log_t) ** 2).sum(axis=1)

        q[i, :2] = _best(grid, time_error)
        time = shape.time(q[i])

        def power_error(sh: np.ndarray, p: np.ndarray = s[1], time: np.ndarray = time) -> np.ndarray:
            sh = clip_quantities(np.column_stack([np.zeros((len(sh), 2)), sh]))[:, 2:]
            model = sh[:, :1] * shape.idle + (1 - sh.sum(1, keepdims=True)) * core + sh[:, 1:] / time
            return (((model - p) / p) ** 2).sum(axis=1)

        q[i, 2:] = clip_quantities(np.concatenate([[0.0, 0.0], _best(shares, power_error)]))[2:]
    return q
