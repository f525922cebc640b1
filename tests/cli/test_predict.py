"""``ptxstatic predict`` and ``evaluate`` with the shipped GTX Titan X models: scaling directions on real PTX,
intervals on every number, decisions that agree with the printed columns, the out-of-distribution report,
absolute time that grows with the work, numpy-only inference, and clean errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from support.paths import FIXTURES, ROOT, TITANX_DATA

from ptxstatic.report.schemas import json_schema

DATA = ROOT / "tests" / "data" / "predict"
SHIPPED = ROOT / "trained" / "gtxtitanx"
APPS = TITANX_DATA.parent / "gpuptxmodel-gtxtitanx-apps-validation"
EXAMPLE = ROOT / "examples" / "saxpy_reduce.ptx"
needs_models = pytest.mark.skipif(
    not (SHIPPED / "physical" / "card.json").is_file(), reason=f"no shipped physical model in {SHIPPED}"
)
HEADS = ("time", "power", "energy")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, cwd=ROOT)


def predict_json(*args: str) -> dict:
    """The prediction of the one kernel the arguments select."""
    p = run("predict", *args, "--format", "json")
    assert p.returncode == 0, p.stderr
    (kernel,) = json.loads(p.stdout)["kernels"]
    return kernel


def time_at(d: dict, f_mem: int, f_core: int) -> float:
    return next(r["time_scaling"] for r in d["configs"] if (r["f_mem_mhz"], r["f_core_mhz"]) == (f_mem, f_core))


def source(name: str, kind: str) -> str:
    if kind == "cu" and shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH: the committed PTX is tested instead")
    return str(DATA / f"{name}.{kind}")


def check_consistent(d: dict, max_slowdown: float | None = None) -> None:
    """Every printed column and every decision come from the one table: intervals around every value,
    energy as the model defines it, the minimum-energy row the least energy among the allowed rows, the
    Pareto set exactly the non-dominated allowed rows."""
    rows = d["configs"]
    for r in rows:
        for h in HEADS:
            assert r[f"{h}_low"] <= r[f"{h}_scaling"] <= r[f"{h}_high"], (h, r)
        if d["energy_source"] == "time*power":
            assert r["energy_scaling"] == pytest.approx(r["time_scaling"] * r["power_scaling"], rel=2e-5, abs=2e-5)
    allowed = [r for r in rows if max_slowdown is None or r["time_scaling"] <= 1 + max_slowdown
               or (r["f_mem_mhz"], r["f_core_mhz"]) == (d["reference"]["f_mem_mhz"], d["reference"]["f_core_mhz"])]
    best = min(allowed, key=lambda r: r["energy_scaling"])
    assert [r for r in rows if r["min_energy"]] == [best]
    assert (d["min_energy"]["f_mem_mhz"], d["min_energy"]["f_core_mhz"]) == (best["f_mem_mhz"], best["f_core_mhz"])
    assert d["min_energy"]["energy_scaling"] == best["energy_scaling"]
    assert d["min_energy"]["saving_low"] <= d["min_energy"]["saving"] <= d["min_energy"]["saving_high"]
    front = [r for r in allowed if not any(
        o["time_scaling"] <= r["time_scaling"] and o["energy_scaling"] <= r["energy_scaling"] and o is not r
        and (o["time_scaling"] < r["time_scaling"] or o["energy_scaling"] < r["energy_scaling"]) for o in allowed)]
    assert {(r["f_mem_mhz"], r["f_core_mhz"]) for r in front} == {
        (p["f_mem_mhz"], p["f_core_mhz"]) for p in d["pareto"]} == {
        (r["f_mem_mhz"], r["f_core_mhz"]) for r in rows if r["pareto"]}


def check_monotone(d: dict) -> None:
    """Time never rises when one clock rises and the other stays."""
    t = {(r["f_mem_mhz"], r["f_core_mhz"]): r["time_scaling"] for r in d["configs"]}
    for (m, c), v in t.items():
        for (m2, c2), v2 in t.items():
            if (m2 == m and c2 > c) or (c2 == c and m2 > m):
                assert v2 <= v + 1e-5, ((m, c), (m2, c2))


@needs_models
@pytest.mark.parametrize("kind", ["ptx", "cu"])
def test_pure_fma_kernel_scales_with_core_not_memory(kind: str) -> None:
    d = predict_json(source("fma_chain", kind))
    assert d["kernel"] == "fma_chain" and d["model"]["name"] == "physical" and d["model"]["default"]
    assert time_at(d, 810, 1164) < 1.1  # a quarter of the memory clock costs (almost) nothing
    assert time_at(d, 3505, 595) > 1.5  # half the core clock costs most of a factor 2
    assert d["min_energy"]["f_mem_mhz"] == 810  # so the lower memory clock saves energy
    check_consistent(d)
    check_monotone(d)


@needs_models
@pytest.mark.parametrize("kind", ["ptx", "cu"])
def test_streaming_copy_scales_with_memory(kind: str) -> None:
    d = predict_json(source("stream_copy", kind))
    assert time_at(d, 810, 1164) > 1.5
    assert time_at(d, 810, 1164) > time_at(d, 3505, 595)
    check_consistent(d)
    check_monotone(d)


@needs_models
def test_json_carries_model_intervals_and_the_out_of_distribution_report() -> None:
    d = predict_json(str(EXAMPLE), "-k", "saxpy", "--launch", "4096/256", "--param", "0=1000000")
    assert d["model"]["kind"] == "physical" and d["model"]["interval_level"] == 0.9
    assert Path(d["model"]["path"]).name == "physical"
    assert set(d["quantities"]) == {"time_fixed", "time_memory", "power_static", "power_work"}
    ood = d["ood"]
    assert ood["score"] > 0 and "opcode:bra" in ood["unseen"]  # the microbenchmarks have no branches
    assert ood["unknown_share"] <= ood["shrinkage"] <= 1
    assert d["absolute"]["model"] == "bottleneck" and d["absolute"]["estimate"] is True
    a = d["absolute"]
    assert a["time_ms_low"] <= a["time_ms"] <= a["time_ms_high"] and a["bound"] == "dram"
    # one element per thread: 8 MB read and 4 MB written, and the DVFS model follows the memory-bound share
    assert a["traffic"]["dram_read_bytes"]["value"] == pytest.approx(8e6, rel=0.01)
    assert a["memory_share"] > 0.6 and d["quantities"]["time_memory"] == pytest.approx(a["memory_share"], abs=1e-3)
    ref = next(r for r in d["configs"] if (r["f_mem_mhz"], r["f_core_mhz"]) == (3505, 1164))
    assert ref["time_ms"] == pytest.approx(a["time_ms"]) and ref["time_scaling"] == 1.0
    check_consistent(d)
    check_monotone(d)


@needs_models
def test_slowdown_limit_constrains_every_decision() -> None:
    p = run("predict", str(DATA / "fma_chain.ptx"), "--max-slowdown", "5%")
    assert p.returncode == 0, p.stderr
    assert "minimum energy with at most 5% slowdown" in p.stdout and "expected saving" in p.stdout
    assert "pareto" in p.stdout and "distribution: score" in p.stdout
    d = predict_json(str(DATA / "stream_copy.ptx"), "--max-slowdown", "5%", "--launch", "1024/256")
    assert d["min_energy"]["time_scaling"] <= 1.05
    assert all(p["time_scaling"] <= 1.05 for p in d["pareto"])
    assert any("executed sequence" in n for n in d["notes"])
    check_consistent(d, 0.05)


@needs_models
def test_absolute_time_grows_with_the_work() -> None:
    """saxpy on 1 M and on 100 M elements with the same grid: a hundred times the bytes read and about the time
    (the launch overhead aside); without a launch there is no absolute time at all."""
    small, large = (predict_json(str(EXAMPLE), "-k", "saxpy", "--launch", "64/256", "--param", f"0={n}")
                    for n in (1_000_000, 100_000_000))
    work = [d["absolute"]["time_ms"] - d["absolute"]["overhead_ms"] for d in (small, large)]
    assert work[1] / work[0] == pytest.approx(100, rel=0.1)  # L2 keeps the last written MB of either
    assert large["absolute"]["work"]["offchip_bytes"] == 100 * small["absolute"]["work"]["offchip_bytes"]
    reads = [d["absolute"]["traffic"]["dram_read_bytes"]["value"] for d in (small, large)]
    assert reads[1] / reads[0] == pytest.approx(100, rel=0.02)  # each scaled from its own sample
    bare = predict_json(str(EXAMPLE), "-k", "saxpy")
    assert bare["absolute"] is None and not any("time_ms" in r for r in bare["configs"])
    assert any("needs --launch" in n for n in bare["notes"]) and any("loop depth" in n for n in bare["notes"])


@pytest.mark.skipif(not (ROOT / "trained" / "h200" / "power" / "card.json").is_file(),
                    reason="no shipped trained/h200/power")
def test_absolute_power_on_the_h200_and_none_on_a_gpu_without_a_power_model() -> None:
    """With the H200's power model: board power with its interval and energy per launch = time x power, in
    JSON and text; the A100 has published figures (absolute time) but no power model, and says so."""
    args = (str(EXAMPLE), "-k", "saxpy", "--launch", "1024/256", "--param", "0=100000000")
    a = predict_json(*args, "--gpu", "h200")["absolute"]
    assert a["power_w_low"] < a["power_w"] < a["power_w_high"]
    assert a["energy_mj"] == pytest.approx(a["time_ms"] * a["power_w"], rel=1e-3)
    assert a["energy_mj_low"] <= a["energy_mj"] <= a["energy_mj_high"]
    text = run("predict", *args, "--gpu", "h200")
    assert text.returncode == 0 and f"board power at the same clocks: {a['power_w']:.0f} W" in text.stdout
    other = predict_json(*args, "--gpu", "a100")
    assert other["absolute"]["time_ms"] > 0 and "power_w" not in other["absolute"]
    assert any("no board power model for GPU 'a100'" in n for n in other["notes"])


@needs_models
def test_a_model_with_an_energy_head_keeps_columns_and_decisions_together() -> None:
    """wu_clusters takes its energy from its energy head: the energy column is what the decisions use."""
    d = predict_json(str(DATA / "stream_copy.ptx"), "--model", str(SHIPPED / "wu_clusters"))
    assert d["model"]["name"] == "wu_clusters" and not d["model"]["default"]
    check_consistent(d)


@needs_models
def test_a_kernel_of_unseen_instructions_gets_the_mean_surface_within_its_interval() -> None:
    """Instructions of real nvcc output whose ISA group the training data never contains (warp, tensor and
    atomic instructions): the shipped model knows nothing about them and says so."""
    from ptxstatic.analysis.sequence import instruction_sequence, kernel_sequence
    from ptxstatic.models.inference.loading import load_model
    from ptxstatic.models.inference.ood import vocabulary_marks
    from ptxstatic.ptx import parse_file

    model = load_model(SHIPPED / "physical")
    vocab = model.calibration.ood.vocabulary
    unseen = []
    for stem in ("warp", "tensor", "atomics"):
        for fn in parse_file(FIXTURES / "nvcc" / "sm_80" / "plain" / f"{stem}.ptx").kernels:
            unseen += [ins for ins, item in zip(fn.instructions, kernel_sequence(fn))
                       if vocabulary_marks(item)[2] not in vocab]
    assert len(unseen) >= 10
    d = model.details([instruction_sequence(unseen)])[0]
    assert d.ood.unknown_share == 1.0 and d.mean_weight == 1.0 and any(m.startswith("group:") for m in d.ood.unseen)
    mean = model.calibration.mean_surface
    np.testing.assert_allclose(d.surfaces[:2], mean[:2], rtol=1e-12)
    np.testing.assert_allclose(d.surfaces[2], mean[0] * mean[1], rtol=1e-12)
    assert np.all((d.lower[:2] <= mean[:2] * (1 + 1e-9)) & (mean[:2] <= d.upper[:2] * (1 + 1e-9)))


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


@needs_models
def test_predict_and_evaluate_do_not_import_torch_sklearn_or_scipy() -> None:
    call = (
        "from ptxstatic.cli.main import cli\n"
        "cli.main(args={args!r}, standalone_mode=False)"
    )
    mods = _modules_after(call.format(args=["predict", str(EXAMPLE), "--launch", "8/64", "--format", "json"]))
    assert "numpy" in mods and not {"torch", "sklearn", "scipy"} & mods
    if APPS.is_dir():
        mods = _modules_after(call.format(args=["evaluate", "--model", str(SHIPPED), "--data", str(APPS)]))
        assert not {"torch", "sklearn", "scipy"} & mods


@needs_models
def test_evaluate_on_the_validation_applications() -> None:
    """Every shipped model side by side on the applications, the mean surface a row, interval coverage for
    calibrated models, per-application errors."""
    if not APPS.is_dir():
        pytest.skip(f"validation applications not found at {APPS}")
    p = run("evaluate", "--model", str(SHIPPED), "--data", str(APPS), "--format", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json_schema("evaluate"), cls=jsonschema.Draft202012Validator)
    d = doc["evaluation"]
    assert d["samples"] == 12 and {"physical", "mean_surface", "lstm"} <= set(d["dvfs"])
    phys = d["dvfs"]["physical"]
    assert set(phys["coverage"]) == set(HEADS) and "coverage" not in d["dvfs"]["lstm"]
    assert len(phys["per_sample"]) == 12 and set(phys["per_sample"]["blackscholes"]) == set(HEADS)
    text = run("evaluate", "--model", str(SHIPPED), "--data", str(APPS))
    assert text.returncode == 0 and "gramschmidt" in text.stdout and "mean_surface" in text.stdout


@needs_models
def test_evaluate_shipped_models_in_sample() -> None:
    if not TITANX_DATA.is_dir():
        pytest.skip(f"GTX Titan X data not found at {TITANX_DATA}")
    p = run("evaluate", "--model", str(SHIPPED / "physical"), "--model", str(SHIPPED / "lstm"), "--data",
            str(TITANX_DATA), "--format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["evaluation"]
    assert d["samples"] == 140 and any("in-sample" in n for n in d["notes"])
    mean = d["dvfs"]["mean_surface (training mean)"]["scaling"]  # added: no mean_surface model was given
    for name in ("physical", "lstm"):
        for head in HEADS:
            assert d["dvfs"][name]["scaling"][head]["mape"] < 0.7 * mean[head]["mape"], (name, head)


@needs_models
def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    p = run("predict", str(tmp_path / "missing.ptx"))
    assert p.returncode == 2 and "error:" in p.stderr and "Traceback" not in p.stderr
    p = run("predict", str(DATA / "fma_chain.ptx"), "--kernel", "nope")
    assert p.returncode == 2 and "no kernel named 'nope'" in p.stderr
    p = run("predict", str(DATA / "fma_chain.ptx"), "--model", str(SHIPPED / "lstm"))
    assert p.returncode == 2 and "no calibrated intervals" in p.stderr and "Traceback" not in p.stderr
    broken = tmp_path / "physical"
    shutil.copytree(SHIPPED / "physical", broken)
    weights = broken / "weights.npz"
    weights.write_bytes(weights.read_bytes()[:1000])
    p = run("predict", str(DATA / "fma_chain.ptx"), "--model", str(broken))
    assert p.returncode == 2 and "modified or truncated" in p.stderr and "Traceback" not in p.stderr
