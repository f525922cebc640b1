"""``evaluate --fullpipe``: models through the whole pipeline (each application's PTX, predict per kernel at
its launch, kernels combined) against the applications' measured surfaces, on two of the GTX Titan X
validation applications (their manifest entries, PTX and measurements as the data set has them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT, TITANX_APPS

FULLPIPE = TITANX_APPS / "fullpipe"
APPS = ("gemm", "md5hash")
pytestmark = pytest.mark.skipif(not (FULLPIPE / "manifest.json").is_file(),
                                reason=f"the validation applications' full pipeline is not at {FULLPIPE}")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, cwd=ROOT)


def two_apps(tmp_path: Path) -> Path:
    """A full-pipeline folder with the manifest entries of :data:`APPS` and the data set's PTX and
    measurements."""
    folder = tmp_path / "fullpipe"
    folder.mkdir()
    manifest = json.loads((FULLPIPE / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({a: manifest[a] for a in APPS}))
    (folder / "ptx").symlink_to(FULLPIPE / "ptx")
    (tmp_path / "realbenchmarks").symlink_to(TITANX_APPS / "realbenchmarks")
    return folder


def test_every_model_and_the_constant_surface_through_the_pipeline(tmp_path):
    folder = two_apps(tmp_path)
    models = ROOT / "trained" / "gtxtitanx"
    p = run("evaluate", "--model", str(models / "physical"), "--model", str(models / "mean_surface"),
            "--fullpipe", str(folder), "--format", "json")
    assert p.returncode == 0, p.stderr
    ev = json.loads(p.stdout)["evaluation"]
    assert ev["samples"] == len(APPS)
    for name in ("physical", "mean_surface"):
        entry = ev["dvfs"][name]
        assert set(entry["per_sample"]) == set(APPS)
        assert all(0 < entry["scaling"][h]["mape"] < 100 for h in ("time", "power", "energy"))
        assert all(0 <= entry["coverage"][h] <= 100 for h in ("time", "power", "energy"))
    # the constant surface is the same for every application; the physical model follows each one's launches
    per_app = ev["dvfs"]["physical"]["per_sample"]
    assert per_app["gemm"] != per_app["md5hash"]
    text = run("evaluate", "--model", str(models / "mean_surface"), "--fullpipe", str(folder))
    assert text.returncode == 0 and "full pipeline on gtxtitanx's 2 validation applications" in text.stdout


def test_a_folder_without_a_manifest_is_a_clear_error(tmp_path):
    p = run("evaluate", "--model", str(ROOT / "trained" / "gtxtitanx" / "mean_surface"), "--fullpipe", str(tmp_path))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "no readable full-pipeline manifest.json" in p.stderr
    both = run("evaluate", "--model", str(ROOT / "trained" / "gtxtitanx"), "--data", str(tmp_path),
               "--fullpipe", str(tmp_path))
    assert both.returncode != 0 and "give one of --data" in both.stderr
