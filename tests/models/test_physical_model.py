"""The physical DVFS model trained on the GTX Titan X measurements: the training path end to end on a
subset (train -> card -> load -> predict on PTX with numpy only), and on every sample: intervals on every
prediction, monotone surfaces, training kernels in distribution."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("scipy")
from support.paths import FIXTURES, ROOT

from ptxstatic.features.intensity import loop_weighted_runs
from ptxstatic.models.training.calibration import Calibrated
from ptxstatic.models.training.physical import PhysicalDvfs
from ptxstatic.models.training.train import train_dvfs
from ptxstatic.ptx import parse_file

SM80 = FIXTURES / "nvcc" / "sm_80" / "plain"


@pytest.fixture(scope="module")
def data(titanx):
    return titanx


def _fixture_kernels() -> list:
    out = []
    for stem in ("loops", "memory", "shared", "math"):
        module = parse_file(SM80 / f"{stem}.ptx")
        out += [(fn.name, loop_weighted_runs(fn)) for fn in module.kernels]
    return out


def test_train_save_load_predict_with_numpy_only(data, tmp_path) -> None:
    """``train physical`` on every third benchmark: the card says what the model is, and the artefact predicts
    on PTX in a process that never imports torch, scikit-learn or scipy."""
    subset = data.subset(range(0, len(data), 3))
    out = train_dvfs("physical", subset, tmp_path / "physical")
    card = json.loads((out / "card.json").read_text())
    assert card["kind"] == "physical" and card["energy_source"] == "time*power"
    assert set(card["quantities"]) == {"time_fixed", "time_memory", "power_static", "power_work"}
    assert all(v < 5.0 for v in card["quantity_fit_mape"].values())  # the quantities reproduce the surfaces
    assert card["calibration"]["interval_level"] == 0.9 and card["training_data"]["samples"] == len(subset)
    assert {"numpy", "scipy", "scikit-learn"} <= set(card["library_versions"])
    script = f"""
import json, sys
from ptxstatic.models.inference.loading import load_model
from ptxstatic.ptx import parse_file
from ptxstatic.features.intensity import loop_weighted_runs
m = load_model({str(out)!r})
fn = parse_file({str(SM80 / "loops.ptx")!r}).function("loop_conv3d_valid")
d = m.details([loop_weighted_runs(fn)])[0]
print(json.dumps({{"time": d.surfaces[0].tolist(), "lower": d.lower[0].tolist(), "upper": d.upper[0].tolist(),
                   "modules": sorted(k.split(".")[0] for k in sys.modules)}}))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert not {"torch", "sklearn", "scipy"} & set(got["modules"])
    assert len(got["time"]) == len(data.clocks)
    assert all(lo <= t <= hi for lo, t, hi in zip(got["lower"], got["time"], got["upper"]))
    cli = subprocess.run([sys.executable, "-m", "ptxstatic", "predict", str(SM80 / "loops.ptx"), "--kernel",
                          "loop_row_sum", "--model", str(out), "--format", "json"], capture_output=True, text=True,
                         cwd=ROOT)
    assert cli.returncode == 0, cli.stderr
    (d,) = json.loads(cli.stdout)["kernels"]
    assert len(d["configs"]) == len(data.clocks) and d["model"]["kind"] == "physical"


@pytest.fixture(scope="module")
def model(data):
    return Calibrated(PhysicalDvfs("trees", n_estimators=40), inner_folds=3).fit(
        data.runs, data.scaling_surfaces(), data.clocks, groups=data.families())


@pytest.mark.slow  # trains on the 140 benchmarks, four times
def test_every_prediction_has_an_ordered_interval_and_monotone_time(model, data) -> None:
    ref = data.clocks.reference
    kernels = _fixture_kernels()
    for (name, _), d in zip(kernels, model.details([runs for _, runs in kernels])):
        assert np.all((d.lower > 0) & (d.lower <= d.surfaces) & (d.surfaces <= d.upper)), name
        np.testing.assert_allclose([d.lower[:, ref], d.surfaces[:, ref], d.upper[:, ref]], 1.0, atol=1e-12)
        np.testing.assert_array_equal(d.surfaces[2], d.surfaces[0] * d.surfaces[1])
        t = d.surfaces[0]
        assert np.all(np.diff(t[:16]) <= 1e-12) and np.all(np.diff(t[16:]) <= 1e-12), name
        assert np.all(t[16:] <= t[:16] + 1e-12), name


@pytest.mark.slow
def test_training_kernels_are_in_distribution(model, data) -> None:
    c = model.calibration_
    scores = c.ood.scores(data.runs, c.feature_matrix(data.runs))
    assert np.all(scores == 0.0)
