"""Clock decisions: minimum-energy configuration, Pareto set, slowdown limit."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.decisions.clock_choice import ScalingTable, min_energy, pareto_set, parse_fraction
from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError

CLOCKS = ClockTable((1000, 1000, 2000, 2000), (500, 1000, 500, 1000))
#                 config:    (1000,500) (1000,1000) (2000,500) (2000,1000)=F_max
PRED = np.array([
    [1.30, 1.04, 1.25, 1.00],  # time
    [0.55, 0.80, 0.70, 1.00],  # power
    [0.70, 0.85, 0.90, 1.00],  # energy head
])


def test_minimum_energy_and_slowdown_limit() -> None:
    table = ScalingTable.from_prediction(CLOCKS, PRED)
    assert min_energy(table) == 0
    assert min_energy(table, max_slowdown=0.05) == 1  # 30 % and 25 % slower are not allowed
    assert min_energy(table, max_slowdown=0.0) == 3  # only F_max itself
    product = ScalingTable.from_prediction(CLOCKS, PRED, "time*power")
    np.testing.assert_allclose(product.energy, PRED[0] * PRED[1])
    assert min_energy(product) == 0


def test_pareto_set() -> None:
    table = ScalingTable.from_prediction(CLOCKS, PRED)
    # (speed-up, energy): F_max (1, 1); (1000,1000) (0.96, 0.85); (1000,500) (0.77, 0.70);
    # (2000,500) (0.8, 0.9) is beaten by (1000,1000) on both
    assert pareto_set(table) == [3, 1, 0]
    assert pareto_set(table, max_slowdown=0.05) == [3, 1]


def test_parse_fraction() -> None:
    assert parse_fraction("5%") == pytest.approx(0.05) and parse_fraction("0.1") == pytest.approx(0.1)
    with pytest.raises(PtxstaticError):
        parse_fraction("five")
    with pytest.raises(PtxstaticError):
        parse_fraction("-3%")
