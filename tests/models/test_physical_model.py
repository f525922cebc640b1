"""The physical DVFS model trained on the GTX Titan X measurements: intervals on every prediction, the
mean surface for a kernel of instructions it never saw, and the whole path train -> save -> load ->
predict on PTX with numpy only."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
from helpers import FIXTURES, ROOT, TITANX_DATA

from ptxstatic.analysis.sequence import instruction_sequence, kernel_sequence
from ptxstatic.dataset.dataset import load_dataset
from ptxstatic.dataset.gpuptxmodel import import_folder
from ptxstatic.dataset.store import DatasetStore
from ptxstatic.features.intensity import loop_weighted_runs
from ptxstatic.models.ood import vocabulary_marks
from ptxstatic.models.physical_train import PhysicalDvfs, train_physical
from ptxstatic.ptx.parser import parse_file

pytestmark = pytest.mark.slow  # trains on the 140 benchmarks (about 10 s a fit)
SM80 = FIXTURES / "nvcc" / "sm_80" / "plain"
FAST = {"n_estimators": 40, "inner_folds": 3}


@pytest.fixture(scope="module")
def data():
    if not TITANX_DATA.is_dir():
        pytest.skip(f"GTX Titan X data not found at {TITANX_DATA} (set PTXSTATIC_TITANX_DATA)")
    store = DatasetStore(":memory:", create=True)
    import_folder(TITANX_DATA, store)
    return load_dataset(store, "gtxtitanx")


@pytest.fixture(scope="module")
def model(data):
    return PhysicalDvfs("trees", **FAST).fit(data.runs, data.scaling_surfaces(), data.clocks, groups=data.families())


def _fixture_kernels() -> list:
    out = []
    for stem in ("loops", "memory", "shared", "math"):
        module = parse_file(SM80 / f"{stem}.ptx")
        out += [(fn.name, loop_weighted_runs(fn)) for fn in module.kernels]
    return out


def test_every_prediction_has_an_ordered_interval(model, data) -> None:
    ref = data.clocks.reference
    kernels = _fixture_kernels()
    for (name, _), d in zip(kernels, model.predictor_.details([runs for _, runs in kernels])):
        assert np.all((d.lower > 0) & (d.lower <= d.surfaces) & (d.surfaces <= d.upper)), name
        np.testing.assert_allclose([d.lower[:, ref], d.surfaces[:, ref], d.upper[:, ref]], 1.0, atol=1e-12)
        np.testing.assert_array_equal(d.surfaces[2], d.surfaces[0] * d.surfaces[1])
        t = d.surfaces[0]
        assert np.all(np.diff(t[:16]) <= 1e-12) and np.all(np.diff(t[16:]) <= 1e-12), name
        assert np.all(t[16:] <= t[:16] + 1e-12), name


def test_a_kernel_of_unseen_instructions_predicts_the_mean_surface(model) -> None:
    """Instructions of real nvcc output whose opcode and ISA group the training data never contains."""
    vocab = model.predictor_.ood.vocabulary
    unseen = []
    for stem in ("warp", "tensor", "atomics"):
        for fn in parse_file(SM80 / f"{stem}.ptx").kernels:
            unseen += [ins for ins, item in zip(fn.instructions, kernel_sequence(fn))
                       if not {vocabulary_marks(item)[0], vocabulary_marks(item)[2]} & vocab]
    assert len(unseen) >= 10
    d = model.predictor_.details([instruction_sequence(unseen)])[0]
    assert d.ood.score == 1.0 and d.ood.unknown_share == 1.0 and d.mean_weight == 1.0
    mean = model.predictor_.mean_surface
    np.testing.assert_allclose(d.surfaces[:2], mean[:2], rtol=1e-12)
    assert np.all((d.lower <= mean * (1 + 1e-9)) & (mean <= d.upper * (1 + 1e-9)))
    assert any(m.startswith("opcode:") for m in d.ood.unseen)


def test_training_kernels_are_in_distribution(model, data) -> None:
    scores = model.predictor_.ood.scores(data.runs, model.predictor_.feature_matrix(data.runs))
    assert np.all(scores == 0.0)


def test_train_save_load_predict_with_numpy_only(data, tmp_path) -> None:
    out = train_physical(data, tmp_path / "physical", **FAST)
    card = json.loads((out / "card.json").read_text())
    assert card["kind"] == "physical" and set(card["quantities"]) == {
        "time_fixed", "time_memory", "power_static", "power_work"}
    assert all(v < 5.0 for v in card["quantity_fit"].values())  # the quantities reproduce the training surfaces
    script = f"""
import json, sys
from ptxstatic.models.registry import load_model
from ptxstatic.ptx.parser import parse_file
from ptxstatic.features.intensity import loop_weighted_runs
m = load_model({str(out)!r})
fn = parse_file({str(SM80 / "loops.ptx")!r}).function("loop_conv3d_valid")
d = m.predictor.details([loop_weighted_runs(fn)])[0]
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
    assert len(json.loads(cli.stdout)["configs"]) == len(data.clocks)
