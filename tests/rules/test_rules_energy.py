"""PS501 energy-saving-clocks and PS502 memory-or-compute-bound on a streaming and an arithmetic kernel
(tests/data/rules/cuda/ps5_energy.cu), for the default target, the GTX Titan X.

PS501's figures are the shipped physical model's (``ptxstatic.predict.predict_kernel``): the test checks that
the rule reports the minimum-energy configuration among those at most ``max-slowdown`` slower, recomputed here
from the full table. PS502's roofline ratio is derived by hand.
"""

from __future__ import annotations

import pytest
from support.rules import found, lint, marked, ptx

from ptxstatic.config import Config
from ptxstatic.predict import load_models, predict_kernel
from ptxstatic.ptx import parse_file

STEM = "ps5_energy"
ON = ("PS5",)  # the energy rules are opt-in: ALL does not run them
DEFAULT = Config(select=ON)


def test_energy_rules_run_only_when_selected():
    assert lint(STEM, "PS501,PS502", config=Config()) == []
    assert lint(STEM, "PS501,PS502", config=Config(select=("ALL",), ignore=("PS1",))) == []
    for select in (("PS5",), ("PS",), ("PS501", "PS502"), ("ALL", "PS5")):
        assert {f.code for f in lint(STEM, "PS501,PS502", config=Config(select=select))} == {"PS501", "PS502"}
    assert lint(STEM, "PS501,PS502", config=Config(select=("PS5",), ignore=("PS50",))) == []


def test_reports_exactly_the_marked_lines():
    for code in ("PS501", "PS502"):
        assert found(lint(STEM, code, config=DEFAULT)) == marked(STEM, code), code
        assert found(lint(STEM, code, config=Config(gpu="titanx", select=ON))) == marked(STEM, code), code
        assert {f.kernel for f in lint(STEM, code, "plain", config=DEFAULT)} == {k for k, _ in marked(STEM, code)}
        assert lint(STEM, code, "G", config=DEFAULT) == []  # a debug build says nothing of the real kernel


def test_saving_clocks_are_the_minimum_energy_within_the_slowdown():
    (f,) = lint(STEM, "PS501", config=DEFAULT)
    table = predict_kernel(parse_file(ptx(STEM)), "fma_chain", load_models("gtxtitanx"))["configs"]
    allowed = [c for c in table if c["time_scaling"] <= 1.05]
    best = min(allowed, key=lambda c: c["energy_scaling"])
    assert (f.properties["f_mem_mhz"], f.properties["f_core_mhz"]) == (best["f_mem_mhz"], best["f_core_mhz"])
    assert f.properties["saving"] == pytest.approx(1 - best["energy_scaling"], abs=1e-4)
    assert f.properties["saving"] >= 0.10
    assert f.properties["time_scaling"] <= 1.05
    assert f"memory {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz" in f.message
    assert "physical model of gtxtitanx" in f.message
    # the streaming kernel saves less than 10 % within 5 % slowdown: a near miss
    triad = predict_kernel(parse_file(ptx(STEM)), "stream_triad", load_models("gtxtitanx"), max_slowdown=0.05)
    assert triad["min_energy"]["saving"] < 0.10
    higher = Config(select=ON, rules={"PS501": {"min-saving": f.properties["saving"] + 0.001}})
    assert lint(STEM, "PS501", config=higher) == []


def test_roofline_classification_by_hand():
    """stream_triad on the GTX Titan X, in 1/128 SM issue cycles per thread at the sm_52 rates: outside the
    loop 5 ld.param (4 each), 4 mov (1), mad.lo and mul.lo (3 each), setp (2), bra and ret (4 each), 3 cvta
    (1): 43; the grid-stride loop body, weighted 16: mul.wide 3, 4 integer adds 4, 2 loads and a store 12,
    fma 1, setp 2, bra 4: 26 x 16 = 416; 459/128 cycles. Off-chip bytes: 12 x 16 = 192. Peak DRAM bytes per SM
    cycle: 384 bits / 8 x 2 transfers x 3505 MHz / (24 SMs x 1164 MHz) = 12.0447. Memory / issue time:
    (192 / 12.0447) / (459 / 128) = 4.445."""
    by_kernel = {f.kernel: f.properties for f in lint(STEM, "PS502", config=DEFAULT)}
    triad = by_kernel["stream_triad"]
    expected = (192 / (384 / 8 * 2 * 3505 / (24 * 1164))) / (459 / 128)
    assert triad["memory_to_issue"] == pytest.approx(expected, abs=1e-3) and triad["class"] == "memory-bound"
    assert triad["memory_share"] == pytest.approx(expected / (1 + expected), abs=1e-3)
    assert by_kernel["fma_chain"]["class"] == "compute-bound" and by_kernel["fma_chain"]["memory_to_issue"] < 0.1
    assert "balanced_poly" not in by_kernel  # 48 multiply-adds per 8 bytes: between the two thresholds
    assert triad["gpu"] == "gtxtitanx" and triad["model"] == "roofline"
    # the thresholds are the configuration's
    stricter = Config(select=ON, rules={"PS502": {"memory-bound": 0.9}})
    assert {f.kernel for f in lint(STEM, "PS502", config=stricter)} == {"fma_chain"}
    # another GPU's published figures: the H100's bandwidth per SM cycle is lower relative to its issue rate
    h100 = Config(gpu="h100", select=ON)
    assert {f.kernel for f in lint(STEM, "PS502", config=h100)} == {"stream_triad", "fma_chain"}


def test_with_a_launch_the_class_is_the_launch_traffics():
    """With a launch in the configuration PS502 reads the bottleneck estimate predict gives for it (the
    launch's traffic): a coalesced copy of 16 MiB is DRAM-bound on the GTX Titan X and on the H200, with the
    same share predict reports; the arithmetic kernel stays compute-bound."""
    from ptxstatic.launch import Buffer, Launch

    n = 1 << 22
    launch = Launch((n // 256, 1, 1), (256, 1, 1), 0, {"a": Buffer("f32", n), "b": Buffer("f32", n),
                                                        "c": Buffer("f32", n, output=True), "s": 2.0, "n": n,
                                                        "rounds": 64, "in": Buffer("f32", n),
                                                        "out": Buffer("f32", n, output=True)})
    for gpu in ("gtxtitanx", "h200"):
        by_kernel = {f.kernel: f for f in lint(STEM, "PS502", config=Config(select=ON, gpu=gpu, launch=launch))}
        triad = by_kernel["stream_triad"]
        assert triad.properties["model"] == "bottleneck" and triad.properties["bound"] == "dram", gpu
        assert "the configured launch takes" in triad.message and "bound by DRAM" in triad.message
        own = Launch(launch.grid, launch.block, 0, {k: launch.args[k] for k in ("a", "b", "c", "s", "n")})
        predicted = predict_kernel(parse_file(ptx(STEM)), "stream_triad", load_models(gpu), own)["absolute"]
        assert triad.properties["memory_share"] == pytest.approx(predicted["memory_share"], abs=1e-3)
        assert triad.properties["time_ms"] == pytest.approx(predicted["time_ms"], rel=1e-6)
        assert by_kernel["fma_chain"].properties["class"] == "compute-bound", gpu


def test_no_clock_prediction_for_a_gpu_without_a_model():
    assert lint(STEM, "PS501", config=Config(gpu="h100", select=ON)) == []


def test_no_roofline_class_on_an_architecture_without_published_issue_rates():
    """The RTX 4090 and L40S have published memory and cache figures but sm_89 has no issue rates in
    ``ISSUE_RATES``: PS502 says nothing rather than guess (or fail)."""
    for gpu in ("rtx4090", "l40s", "4090"):
        assert lint(STEM, "PS502", config=Config(gpu=gpu, select=ON)) == [], gpu


def test_default_gpu_is_the_prediction_pipelines():
    from ptxstatic import predict
    from ptxstatic.rules import energy

    assert energy.DEFAULT_GPU == predict.DEFAULT_GPU
