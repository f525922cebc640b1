"""``ptxstatic train bottleneck`` and ``train power`` on the H200's measured launches of four microbenchmark
families (the shared default-clock data; skipped without it or without nvcc, which compiles the manifest's
sources), and ``predict`` with what they wrote."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

from ptxstatic.collect.manifest import load_manifest
from ptxstatic.models.training.bottleneck import FITTED

SHARED = ROOT.parent / "shared" / "data" / "h200-default-clocks"
FAMILIES = {"fp32.cu", "fp64.cu", "global_mem.cu", "int.cu"}
PTX = ROOT / "tests" / "data" / "predict" / "roofline.ptx"
pytestmark = [
    pytest.mark.skipif(not (SHARED / "microbenchmarks-1s.sqlite").is_file(),
                       reason=f"the H200 measurements are not at {SHARED}"),
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH (training compiles the manifest)"),
]


def families_dataset(families: set[str], db: Path) -> tuple[Path, int]:
    """The 1 s samples of ``families`` in a dataset of their own, and how many there are."""
    manifest = load_manifest(ROOT / "microbenchmarks" / "manifest.json")
    keep = [b.name for b in manifest.benchmarks if b.source.name in families]
    shutil.copy(SHARED / "microbenchmarks-1s.sqlite", db)
    with sqlite3.connect(db) as con:
        con.execute(f"DELETE FROM collect_samples WHERE benchmark NOT IN ({', '.join('?' * len(keep))})", keep)
        kept = con.execute("SELECT COUNT(*) FROM collect_samples WHERE status = 'ok'").fetchone()[0]
    return db, kept


@pytest.fixture(scope="module")
def four_families(tmp_path_factory) -> tuple[Path, int]:
    return families_dataset(FAMILIES, tmp_path_factory.mktemp("h200") / "h200.sqlite")


def train(model: str, db: Path, out: Path) -> dict:
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "train", model, "--data", str(db), "--gpu", "h200",
                        "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "card.json").read_text())


def test_train_bottleneck_scores_itself_against_an_unfitted_model_and_a_constant(four_families, tmp_path) -> None:
    """The card scores the fit leave-one-family-out beside the same model unfitted, GPU Mangrove's extra-trees
    and a constant time, on the same launches; the fitted parameters stay inside their bounds and the fit
    beats the constant."""
    db, kept = four_families
    card = train("bottleneck", db, tmp_path / "bottleneck")
    held, baselines = card["evaluation"]["leave_one_family_out"], card["evaluation"]["baselines_held_out"]
    assert set(baselines) == {"unfitted", "extra_trees", "constant"}
    assert {b["launches"] for b in baselines.values()} == {held["launches"]} and held["launches"] <= kept
    assert held["median_error"] < baselines["constant"]["median_error"]
    assert set(card["evaluation"]["by_family_held_out"]) == {f.removesuffix(".cu") for f in FAMILIES}
    for name, (low, high) in FITTED.items():
        assert low <= card["config"][name] <= high, name
    assert card["interval"]["error_low"] < 1 < card["interval"]["error_high"]


def test_train_power_and_predict_with_it(tmp_path: Path) -> None:
    """``train power`` on the four families and the tensor cores' writes a card scored leave-one-family-out
    against a constant; ``predict --gpu h200`` with that model prints the board power and the energy per
    launch. The tensor family held out is predicted from the board's published power limit (one launch at
    the limit with the tensor pipe busy: 59 % median error without it, 18 % with it), and no weight
    passes the limit: without the bound, the fits that leave the streaming family out gave DRAM or the
    load/store pipe, which the other four barely exercise, hundreds of kilowatts, and predicted that family
    at over 60 times its power."""
    families = FAMILIES | {"tensor.cu"}
    db, kept = families_dataset(families, tmp_path / "h200.sqlite")
    models = tmp_path / "models"
    shutil.copytree(ROOT / "trained" / "h200" / "bottleneck", models / "h200" / "bottleneck")
    card = train("power", db, models / "h200" / "power")
    held = card["evaluation"]["leave_one_family_out"]
    assert held["model"]["launches"] == held["constant"]["launches"] == card["samples"]["used"] == kept
    by_family = card["evaluation"]["by_family_held_out"]
    assert set(by_family) == {f.removesuffix(".cu") for f in families}
    assert card["published_launch"]["activity"] == "tensor" and card["published_launch"]["power_w"] == 700
    assert by_family["tensor"]["median_error"] < 0.3
    weights = [card["config"]["idle_w"], *card["config"]["weights"].values()]
    assert card["config"]["idle_w"] > 0 and min(weights) >= 0 and max(weights) <= 700
    assert by_family["global_mem"]["mean_error"] < 2.5
    assert card["interval"]["error_low"] < 1 < card["interval"]["error_high"]
    env = {**os.environ, "PTXSTATIC_MODELS": str(models)}
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "predict", str(PTX), "-k", "saxpy_n", "--gpu", "h200",
                        "--launch", "4096/256", "--param", "0=67108864", "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)["kernels"][0]["absolute"]
    assert a["power_w_low"] < a["power_w"] < a["power_w_high"]
    assert a["power_parameters"] == card["config"]["fitted_on"]
    assert a["energy_mj"] == pytest.approx(a["time_ms"] * a["power_w"], rel=1e-3)


def test_evaluate_scores_the_shipped_h200_models_on_a_collect_dataset(four_families) -> None:
    """``evaluate --model trained/h200 --data DB``: a time row over the launches with exact block counts and a
    power row over the samples with usable power, each with its interval's coverage; data the shipped models
    were not fitted on gets no in-sample note. A DVFS model beside them is refused."""
    db, kept = four_families
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "evaluate", "--model", "trained/h200", "--data", str(db),
                        "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    ev = json.loads(p.stdout)["evaluation"]
    time_row, power_row = ev["absolute"]["bottleneck (time)"], ev["absolute"]["power (board power)"]
    assert 0 < time_row["launches"] <= ev["samples"] == kept and power_row["launches"] == kept
    assert 0 < time_row["interval"] <= 100 and 0 < power_row["interval"] <= 100
    assert not any("in-sample" in n for n in ev["notes"])
    mixed = subprocess.run([sys.executable, "-m", "ptxstatic", "evaluate", "--model", "trained/h200", "--model",
                            "trained/gtxtitanx/physical", "--data", str(db)], capture_output=True, text=True, cwd=ROOT)
    assert mixed.returncode == 2 and "scored on their own" in mixed.stderr and "Traceback" not in mixed.stderr
