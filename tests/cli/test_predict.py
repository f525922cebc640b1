"""``ptxstatic predict`` and ``evaluate`` with the shipped GTX Titan X models: sensible scaling directions on
real PTX, decisions, numpy-only inference, and clean errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from ptxstatic.analysis.sequence import SeqItem

DATA = ROOT / "tests" / "data" / "predict"
SHIPPED = ROOT / "trained" / "gtxtitanx"
TITANX = ROOT / ".." / "shared" / "data" / "gpuptxmodel-gtxtitanx"
needs_models = pytest.mark.skipif(
    not (SHIPPED / "lstm" / "card.json").is_file(), reason=f"no shipped LSTM model in {SHIPPED}"
)
try:
    from ptxstatic.analysis.sequence import kernel_sequence  # noqa: F401
    from ptxstatic.ptx import parse_file  # noqa: F401

    FRONT_END = True
except ImportError:
    FRONT_END = False
needs_front_end = pytest.mark.skipif(not FRONT_END, reason="the PTX front end (ptxstatic.ptx.parse_file) is missing")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, cwd=ROOT)


def predict_json(*args: str) -> dict:
    p = run("predict", *args, "--format", "json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def time_at(d: dict, f_mem: int, f_core: int) -> float:
    return next(r["time_scaling"] for r in d["configs"] if (r["f_mem_mhz"], r["f_core_mhz"]) == (f_mem, f_core))


def source(name: str, kind: str) -> str:
    if kind == "cu" and shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH: the committed PTX is tested instead")
    return str(DATA / f"{name}.{kind}")


@needs_models
@needs_front_end
@pytest.mark.parametrize("kind", ["ptx", "cu"])
def test_pure_fma_kernel_scales_with_core_not_memory(kind: str) -> None:
    d = predict_json(source("fma_chain", kind))
    assert d["kernel"] == "fma_chain"
    assert time_at(d, 810, 1164) < 1.1  # a quarter of the memory clock costs (almost) nothing
    assert time_at(d, 3505, 595) > 1.5  # half the core clock costs most of a factor 2
    assert d["min_energy"]["f_mem_mhz"] == 810  # so the lower memory clock saves energy


@needs_models
@needs_front_end
@pytest.mark.parametrize("kind", ["ptx", "cu"])
def test_streaming_copy_scales_with_memory(kind: str) -> None:
    d = predict_json(source("stream_copy", kind))
    assert time_at(d, 810, 1164) > 1.5
    assert time_at(d, 810, 1164) > time_at(d, 3505, 595)


@needs_models
@needs_front_end
def test_text_output_constraints_and_launch() -> None:
    p = run("predict", str(DATA / "fma_chain.ptx"), "--max-slowdown", "5%")
    assert p.returncode == 0, p.stderr
    assert "minimum energy with at most 5% slowdown" in p.stdout and "pareto" in p.stdout
    d = predict_json(str(DATA / "stream_copy.ptx"), "--max-slowdown", "5%", "--launch", "1024/256")
    assert d["min_energy"]["time_scaling"] <= 1.05
    assert all(p["time_scaling"] <= 1.05 for p in d["pareto"])
    assert any("executed sequence" in n for n in d["notes"])
    assert {"time_ms", "power_w", "energy_mj"} <= set(d["configs"][0])


@needs_models
def test_model_path_on_constructed_sequences() -> None:
    """The inference path itself, on SeqItems built by hand: compute-bound vs memory-bound mixes."""
    from ptxstatic.decisions.clocks import ScalingTable, min_energy
    from ptxstatic.dvfs import ClockTable
    from ptxstatic.models.registry import load_model

    model = load_model(SHIPPED / "lstm").predictor
    fma = SeqItem("fma", "fp32", "", "f32", 1, 3, 1, False, 1, "arith")
    ld = SeqItem("ld", "mem.global", "global", "f32", 1, 1, 1, False, 1, "arith")
    st = SeqItem("st", "mem.global", "global", "f32", 1, 2, 0, False, 1, "global_load")
    clocks: ClockTable = model.clocks
    low_mem, low_core = clocks.index(810, 1164), clocks.index(3505, 595)
    compute = model.predict([(fma, 4096)])
    memory = model.predict([([(ld, 1), (st, 1)], 4096)])
    assert compute[0, low_core] > 1.5 and compute[0, low_mem] < 1.15
    assert memory[0, low_mem] > 1.5
    assert compute.shape == (3, len(clocks)) and (compute[:, clocks.reference] == 1).all()
    best = min_energy(ScalingTable.from_prediction(clocks, compute))
    assert clocks.f_mem[best] == 810


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


@needs_models
@needs_front_end
def test_predict_and_evaluate_do_not_import_torch_or_sklearn() -> None:
    call = (
        "from ptxstatic.cli.main import cli\n"
        "cli.main(args={args!r}, standalone_mode=False)"
    )
    mods = _modules_after(call.format(args=["predict", str(DATA / "fma_chain.ptx"), "--format", "json"]))
    assert "numpy" in mods and not {"torch", "sklearn"} & mods
    if TITANX.is_dir():
        mods = _modules_after(call.format(args=["evaluate", "--model", str(SHIPPED), "--data", str(TITANX)]))
        assert not {"torch", "sklearn"} & mods


@needs_models
def test_evaluate_shipped_models_in_sample() -> None:
    if not TITANX.is_dir():
        pytest.skip(f"GTX Titan X data not found at {TITANX}")
    p = run("evaluate", "--model", str(SHIPPED), "--data", str(TITANX), "--format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["samples"] == 140 and any("in-sample" in n for n in d["notes"])
    lstm, mean = d["dvfs"]["lstm"]["scaling"], d["dvfs"]["mean_surface"]["scaling"]
    for head in ("time", "power", "energy"):
        assert lstm[head]["mape"] < 0.5 * mean[head]["mape"]


@needs_models
def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    p = run("predict", str(tmp_path / "missing.ptx"))
    assert p.returncode == 2 and "error:" in p.stderr and "Traceback" not in p.stderr
    if FRONT_END:
        p = run("predict", str(DATA / "fma_chain.ptx"), "--kernel", "nope")
        assert p.returncode == 2 and "no kernel 'nope'" in p.stderr
    broken = tmp_path / "lstm"
    shutil.copytree(SHIPPED / "lstm", broken)
    weights = broken / "weights.npz"
    weights.write_bytes(weights.read_bytes()[:1000])
    p = run("predict", str(DATA / "fma_chain.ptx"), "--model", str(broken))
    assert p.returncode == 2 and "modified or truncated" in p.stderr and "Traceback" not in p.stderr
