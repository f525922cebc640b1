"""Calibration of any DVFS model on out-of-fold predictions, its round trip through the artefact, and
cross-validation tables with interval coverage and saved rows, on a subset of the GTX Titan X data."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("scipy")

from ptxstatic.models.inference.artifacts import save_model
from ptxstatic.models.inference.loading import load_model
from ptxstatic.models.training.baselines import GroupForest
from ptxstatic.models.training.calibration import Calibrated
from ptxstatic.models.training.cross_validation import cross_validation_results


@pytest.fixture(scope="module")
def subset(titanx):
    return titanx.subset(range(0, len(titanx), 2))


def test_a_calibrated_model_predicts_the_same_after_its_round_trip(subset, tmp_path) -> None:
    model = Calibrated(GroupForest(n_estimators=10), inner_folds=3, energy_from="head").fit(
        subset.runs, subset.scaling_surfaces(), subset.clocks, groups=subset.families())
    arrays, config = model.export()
    loaded = load_model(save_model(tmp_path / "gf", "group_forest", arrays, config, {"name": "group_forest"}))
    runs = subset.runs[:5]
    for mine, theirs in zip(model.details(runs), loaded.details(runs)):
        np.testing.assert_allclose(theirs.surfaces, mine.surfaces, rtol=1e-12)
        np.testing.assert_allclose(theirs.upper, mine.upper, rtol=1e-12)
        assert theirs.ood.to_dict() == mine.ood.to_dict() and theirs.mean_weight == mine.mean_weight
        assert np.all((mine.lower <= mine.surfaces) & (mine.surfaces <= mine.upper))
    assert loaded.calibration.energy_from == "head" and loaded.calibration.intervals.level == 0.9
    # the fitted weights follow the rule: at least the share of instructions of unknown kinds
    assert all(d.mean_weight >= d.ood.unknown_share for d in model.details(runs))


def test_cross_validation_tables_carry_coverage_and_saved_rows(subset, tmp_path) -> None:
    first = cross_validation_results(subset, ["mean_surface"], 3, "family")
    entry = first["dvfs"]["mean_surface"]
    assert set(entry["coverage"]) == {"time", "power", "energy"} and entry["scaling"]["time"]["mape"] > 0
    assert "saved" not in entry and first["folds"] == 3 and first["grouping"] == "family"
    saved = tmp_path / "family.json"
    saved.write_text(json.dumps(first))
    second = cross_validation_results(subset, [], 3, "family", saved=saved)
    assert second["dvfs"]["mean_surface"]["saved"].startswith("family.json")
    assert second["dvfs"]["mean_surface"]["scaling"] == entry["scaling"]
    assert any("mean_surface: saved results" in n for n in second["notes"])
    with pytest.raises(Exception, match="other data or folds"):
        cross_validation_results(subset, [], 5, "family", saved=saved)


def test_saved_evaluations_are_read_in_the_command_shape_and_the_bare_one() -> None:
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.training.cross_validation import evaluation_results

    bare = {"title": "t", "samples": 3, "dvfs": {"physical": {}}, "absolute": {}, "notes": []}
    doc = {"schema": 1, "command": "evaluate", "tool": {}, "evaluation": bare, "kernels": [], "errors": []}
    assert evaluation_results(doc) == evaluation_results(bare) == bare
    for other in ({**doc, "command": "predict"}, {"schema": 1, "command": "predict", "kernels": []}, [bare]):
        with pytest.raises(PtxstaticError, match="not the JSON output of ptxstatic evaluate"):
            evaluation_results(other)
