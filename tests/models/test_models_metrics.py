"""Metrics and cross-validation folds."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.models.evaluation.metrics import (
    absolute_metrics,
    coverage,
    dvfs_entry,
    energy_choice_metrics,
    scaling_metrics,
)


def test_scaling_metrics_leave_out_the_reference() -> None:
    true = np.ones((2, 3, 3))
    true[:, :, 0] = 2.0
    pred = true.copy()
    pred[:, 0, 0] = 2.18  # 9 % off on time at config 0
    pred[:, 1, 2] = 5.0  # the reference column is ignored
    m = scaling_metrics(true, pred, reference=2)
    assert m["time"]["mape"] == pytest.approx(4.5) and m["time"]["abs_points"] == pytest.approx(9.0)
    assert m["power"]["mape"] == 0 and m["time"]["within_10"] == 100.0


def test_energy_choice() -> None:
    true = np.array([[0.8, 0.9, 1.0], [1.2, 0.95, 1.0]])
    pred = np.array([[0.85, 0.7, 1.0], [1.1, 0.9, 1.0]])  # first sample: picks 0.9 instead of 0.8
    m = energy_choice_metrics(true, pred, reference=2)
    assert m["excess_over_oracle"] == pytest.approx(100 * (0.9 / 0.8 - 1) / 2)
    assert m["saved_vs_fmax"] == pytest.approx(100 * (0.1 + 0.05) / 2)
    assert m["oracle_saved_vs_fmax"] == pytest.approx(100 * (0.2 + 0.05) / 2)


def test_dvfs_entry_scores_the_product_energy_coverage_and_each_sample() -> None:
    true = np.ones((2, 3, 3))
    true[:, 0, 0], true[:, 1, 0], true[:, 2, 0] = 2.0, 0.5, 1.0
    pred = true.copy()
    pred[:, 2, 0] = 1.2  # the energy head is 20 % off; time x power is exact
    e = dvfs_entry(true, pred, 2, (true * 0.95, true * 1.05), ["a", "b"])
    assert e["scaling"]["energy"]["mape"] == pytest.approx(10.0) and e["energy_time_power"]["mape"] == 0.0
    assert e["coverage"] == {"time": 100.0, "power": 100.0, "energy": 100.0}
    assert e["per_sample"]["b"] == {"time": 0.0, "power": 0.0, "energy": 10.0}
    assert coverage(true, (true * 1.01, true * 1.05), 2)["time"] == 0.0


def test_absolute_metrics() -> None:
    m = absolute_metrics(np.array([1.0, 2.0, 4.0, 10.0]), np.array([1.05, 2.3, 4.0, 5.0]))
    assert m["mape_median"] == pytest.approx(10.0) and m["within_10"] == 50.0 and m["within_20"] == 75.0


def test_grouped_folds_keep_groups_apart_and_the_longest_in_training() -> None:
    pytest.importorskip("sklearn")
    from ptxstatic.models.training.folds import duration_classes, grouped_folds

    groups = [f"f{i // 3}" for i in range(60)]
    durations = np.linspace(0, 1, 60) ** 2
    folds = grouped_folds(groups, duration_classes(durations), 5, seed=1, always_train=[59, 58])
    tested = np.concatenate([t for _, t in folds])
    assert sorted(tested.tolist()) == list(range(57))  # 57 shares its group with 58 and 59
    for train, test in folds:
        assert not {groups[i] for i in train} & {groups[i] for i in test}
        assert {58, 59} <= set(train.tolist())
        assert len(set(duration_classes(durations)[test].tolist())) == 3  # every fold holds short to long
