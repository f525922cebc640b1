"""The board power model: on CUDA kernels compiled to committed PTX (tests/data/predict/roofline.cu) with the
power model shipped for the H200, and which of the H200's measured board powers its fit uses and how much
(the shared default-clock data; the test that needs it skips without it). Training: test_train_absolute.py."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.paths import ROOT

from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Launch
from ptxstatic.models.evaluation.measured_launches import DISAGREEMENT, UNRELIABLE_WEIGHT, measured_powers
from ptxstatic.models.inference.board_power import launch_power
from ptxstatic.models.inference.loading import bottleneck_parameters, power_parameters
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic

PTX = ROOT / "tests" / "data" / "predict" / "roofline.ptx"
H200 = gpu_figures("h200")
SHARED = ROOT.parent / "shared" / "data" / "h200-default-clocks"
needs_data = pytest.mark.skipif(not (SHARED / "microbenchmarks-1s.sqlite").is_file(),
                                reason=f"the H200 measurements are not at {SHARED}")
needs_model = pytest.mark.skipif(power_parameters("h200") is None, reason="no shipped trained/h200/power")


def power(kernel: str, grid: int, args: dict):
    module = parse_file(PTX)
    bound = bind(module, kernel, Launch((grid, 1, 1), (256, 1, 1), args=args))
    counts = estimate_counts(bound).counts
    work = launch_work(module, counts, H200, launch_traffic(bound, counts.counts, H200))
    params = power_parameters("h200")
    assert params is not None
    return launch_power(work, H200, *H200.default_clocks, bottleneck_parameters("h200"), params), params


@needs_model
def test_a_streaming_kernel_keeps_dram_busy_and_draws_more_than_idle() -> None:
    p, params = power("saxpy_n", 4096, {"0": 1 << 26, "1": 2})
    assert p.activities["dram"] > 0.9
    assert params.idle_w < p.power_w and p.low_w < p.power_w < p.high_w


@needs_model
def test_one_cta_draws_a_fraction_of_what_a_full_grid_draws_above_idle() -> None:
    """One CTA keeps one SM of 132 busy: its pipes' activity, and so the power above idle, is about 1/132 of a
    grid that fills every SM."""
    args = {"1": 1.0001, "2": 0.5, "3": 2000}
    (one, params), (full, _) = power("fma_loop", 1, args), power("fma_loop", 4 * H200.sms, args)
    assert one.activities["fma"] == pytest.approx(full.activities["fma"] / H200.sms, rel=0.2)
    assert one.power_w - params.idle_w < (full.power_w - params.idle_w) / 50


@needs_data
def test_flagged_power_counts_half_and_short_loops_none() -> None:
    """The 1 s samples: those whose two readings differ by more than 15 % of the energy counter's (as their
    warnings say) count half, the others fully; the 0.15 s samples' energy-counter power is left out."""
    db = SHARED / "microbenchmarks-1s.sqlite"
    powers = measured_powers([db], "h200")
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT benchmark, launch, power_w, sampled_power_w, warnings FROM collect_samples "
                           "WHERE status = 'ok'").fetchall()
    assert len(powers) == len(rows)
    flagged = {(b, lk) for b, lk, _, _, w in rows if any(DISAGREEMENT in x for x in json.loads(w))}
    assert flagged and len(flagged) < len(rows)
    assert {k for k, (_, w) in powers.items() if w == UNRELIABLE_WEIGHT} == flagged
    assert all((abs(p - s) / p > 0.15) == ((b, lk) in flagged) for b, lk, p, s, _ in rows)
    assert measured_powers([SHARED / "microbenchmarks-short.sqlite"], "h200") == {}
