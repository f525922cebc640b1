"""Clock decisions from predicted scaling: the full table, the minimum-energy configuration, the Pareto set
of (speed-up, normalised energy), under an optional limit on the slowdown against F_max. Every decision
and every reported column comes from the one table of surfaces (and its interval bounds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxstatic.dvfs import ENERGY_SOURCES, ClockTable
from ptxstatic.errors import PtxstaticError


def parse_fraction(text: str) -> float:
    """``5%`` -> 0.05, ``0.05`` -> 0.05."""
    t = text.strip()
    try:
        value = float(t[:-1]) / 100.0 if t.endswith("%") else float(t)
    except ValueError:
        raise PtxstaticError(f"bad fraction {text!r}: expected e.g. 5% or 0.05") from None
    if value < 0:
        raise PtxstaticError(f"bad fraction {text!r}: must not be negative")
    return value


@dataclass(frozen=True)
class ScalingTable:
    """Predicted time, power and energy relative to the reference (F_max) configuration, per configuration,
    with optional (3, configs) lower and upper interval bounds."""

    clocks: ClockTable
    time: np.ndarray
    power: np.ndarray
    energy: np.ndarray
    energy_source: str = "head"
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    @classmethod
    def from_prediction(cls, clocks: ClockTable, pred: np.ndarray, energy_source: str = "head",
                        lower: np.ndarray | None = None, upper: np.ndarray | None = None) -> ScalingTable:
        """``pred``: (3, configs) time, power and energy scaling factors. With ``energy_source`` time*power
        the energy of the table (the column and every decision) is their product, else the energy head."""
        if energy_source not in ENERGY_SOURCES:
            raise PtxstaticError(f"unknown energy source {energy_source!r}")
        energy = pred[0] * pred[1] if energy_source == "time*power" else pred[2]
        return cls(clocks, pred[0], pred[1], energy, energy_source, lower, upper)

    @property
    def speedup(self) -> np.ndarray:
        """Speed-up against F_max (below 1 for lower clocks)."""
        return 1.0 / self.time

    def allowed(self, max_slowdown: float | None) -> np.ndarray:
        """Configurations whose predicted time is at most (1 + max_slowdown) × the time at F_max."""
        if max_slowdown is None:
            return np.ones(len(self.time), dtype=bool)
        return self.time <= 1.0 + max_slowdown + 1e-12

    def rising_time(self) -> int:
        """How many pairs of configurations, differing in one clock, predict more time at the higher clock
        (0 for a physically consistent table)."""
        f_mem, f_core = np.asarray(self.clocks.f_mem), np.asarray(self.clocks.f_core)
        n = 0
        for i in range(len(self.time)):
            for j in range(len(self.time)):
                one_higher = (f_mem[j] == f_mem[i] and f_core[j] > f_core[i]) or (
                    f_core[j] == f_core[i] and f_mem[j] > f_mem[i])
                n += bool(one_higher and self.time[j] > self.time[i] * (1 + 1e-9))
        return n


def min_energy(table: ScalingTable, max_slowdown: float | None = None) -> int:
    """Index of the configuration of least predicted energy among the allowed ones (F_max always is)."""
    ok = table.allowed(max_slowdown)
    ok[table.clocks.reference] = True
    return int(np.argmin(np.where(ok, table.energy, np.inf)))


def pareto_set(table: ScalingTable, max_slowdown: float | None = None) -> list[int]:
    """Allowed configurations that no other allowed one beats on both speed-up and energy, fastest first."""
    ok = table.allowed(max_slowdown)
    ok[table.clocks.reference] = True
    idx = [i for i in range(len(ok)) if ok[i]]
    s, e = table.speedup, table.energy
    front = [
        i for i in idx
        if not any((s[j] >= s[i] and e[j] <= e[i]) and (s[j] > s[i] or e[j] < e[i]) for j in idx)
    ]
    return sorted(front, key=lambda i: (-s[i], e[i]))
