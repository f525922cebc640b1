"""Clock decisions from predicted scaling: the full table, the minimum-energy configuration, the Pareto set
of (speed-up, normalised energy), under an optional limit on the slowdown against F_max."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError

#: where the energy used for decisions comes from: the energy head, or predicted time × power
ENERGY_SOURCES = ("head", "time*power")


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
    """Predicted time, power and energy relative to the reference (F_max) configuration, per configuration."""

    clocks: ClockTable
    time: np.ndarray
    power: np.ndarray
    energy: np.ndarray
    energy_source: str = "head"

    @classmethod
    def from_prediction(cls, clocks: ClockTable, pred: np.ndarray, energy_source: str = "head") -> ScalingTable:
        """``pred``: (3, configs) time, power and energy scaling factors."""
        if energy_source not in ENERGY_SOURCES:
            raise PtxstaticError(f"unknown energy source {energy_source!r}")
        return cls(clocks, pred[0], pred[1], pred[2], energy_source)

    @property
    def decision_energy(self) -> np.ndarray:
        return self.energy if self.energy_source == "head" else self.time * self.power

    @property
    def speedup(self) -> np.ndarray:
        """Speed-up against F_max (below 1 for lower clocks)."""
        return 1.0 / self.time

    def allowed(self, max_slowdown: float | None) -> np.ndarray:
        """Configurations whose predicted time is at most (1 + max_slowdown) × the time at F_max."""
        if max_slowdown is None:
            return np.ones(len(self.time), dtype=bool)
        return self.time <= 1.0 + max_slowdown + 1e-12


def min_energy(table: ScalingTable, max_slowdown: float | None = None) -> int:
    """Index of the configuration of least predicted energy among the allowed ones (F_max always is)."""
    ok = table.allowed(max_slowdown)
    ok[table.clocks.reference] = True
    energy = np.where(ok, table.decision_energy, np.inf)
    return int(np.argmin(energy))


def pareto_set(table: ScalingTable, max_slowdown: float | None = None) -> list[int]:
    """Allowed configurations that no other allowed one beats on both speed-up and energy, fastest first."""
    ok = table.allowed(max_slowdown)
    ok[table.clocks.reference] = True
    idx = [i for i in range(len(ok)) if ok[i]]
    s, e = table.speedup, table.decision_energy
    front = [
        i for i in idx
        if not any((s[j] >= s[i] and e[j] <= e[i]) and (s[j] > s[i] or e[j] < e[i]) for j in idx)
    ]
    return sorted(front, key=lambda i: (-s[i], e[i]))
