"""The board power model: on CUDA kernels compiled to committed PTX (tests/data/predict/roofline.cu,
tests/data/traffic/traffic.cu) with the power model shipped for the H200, and which of the H200's measured
board powers its fit uses and how much (the shared default-clock data; the test that needs it skips without
it). Training: test_train_absolute.py."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.paths import ROOT

from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Buffer, Launch
from ptxstatic.models.evaluation.measured_launches import DISAGREEMENT, UNRELIABLE_WEIGHT, measured_powers
from ptxstatic.models.inference.board_power import launch_power
from ptxstatic.models.inference.bottleneck import l2_times, launch_time
from ptxstatic.models.inference.loading import bottleneck_parameters, power_parameters
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic

PTX = ROOT / "tests" / "data" / "predict" / "roofline.ptx"
TRAFFIC_PTX = ROOT / "tests" / "data" / "traffic" / "traffic.ptx"
H200 = gpu_figures("h200")
SHARED = ROOT.parent / "shared" / "data" / "h200-default-clocks"
needs_data = pytest.mark.skipif(not (SHARED / "microbenchmarks-1s.sqlite").is_file(),
                                reason=f"the H200 measurements are not at {SHARED}")
needs_model = pytest.mark.skipif(power_parameters("h200") is None, reason="no shipped trained/h200/power")


def launch_work_of(ptx: Path, kernel: str, launch: Launch):
    module = parse_file(ptx)
    bound = bind(module, kernel, launch)
    counts = estimate_counts(bound).counts
    return launch_work(module, counts, H200, launch_traffic(bound, counts.counts, H200))


def power(kernel: str, grid: int, args: dict):
    params = power_parameters("h200")
    assert params is not None
    work = launch_work_of(PTX, kernel, Launch((grid, 1, 1), (256, 1, 1), args=args))
    return launch_power(work, H200, *H200.default_clocks, bottleneck_parameters("h200"), params), params


def atomic_work():
    """1024 CTAs of 256 threads adding to one line's sixteen counters (tests/data/traffic/traffic.cu)."""
    return launch_work_of(TRAFFIC_PTX, "atomic_slots", Launch((1024, 1, 1), (256, 1, 1), 0, {
        "counts": Buffer("u32", 16, output=True), "slots": 16, "iters": 64}))


@needs_model
def test_a_streaming_kernel_keeps_dram_busy_and_draws_more_than_idle() -> None:
    """DRAM is the streaming kernel's busiest unit, in use for the share of the launch's modelled time that its
    bytes take at DRAM's sustained rate."""
    work = launch_work_of(PTX, "saxpy_n", Launch((4096, 1, 1), (256, 1, 1), args={"0": 1 << 26, "1": 2}))
    tp, params = bottleneck_parameters("h200"), power_parameters("h200")
    assert params is not None
    p = launch_power(work, H200, *H200.default_clocks, tp, params)
    est = launch_time(work, H200, *H200.default_clocks, tp)
    assert max(p.activities, key=p.activities.get) == "dram"
    assert p.activities["dram"] == pytest.approx(est.resources_ms["dram"] / est.time_ms)
    assert params.idle_w < p.power_w and p.low_w < p.power_w < p.high_w


@needs_model
def test_one_cta_draws_a_fraction_of_what_a_full_grid_draws_above_idle() -> None:
    """One CTA keeps one SM of 132 busy: its pipes' activity, and so the power above idle, is about 1/132 of a
    grid that fills every SM."""
    args = {"1": 1.0001, "2": 0.5, "3": 2000}
    (one, params), (full, _) = power("fma_loop", 1, args), power("fma_loop", 4 * H200.sms, args)
    assert one.activities["fma"] == pytest.approx(full.activities["fma"] / H200.sms, rel=0.2)
    assert one.power_w - params.idle_w < (full.power_w - params.idle_w) / 50


@needs_model
def test_atomics_on_one_line_are_l2_bound_in_time_but_draw_near_idle() -> None:
    """A hot counter keeps one L2 slice's atomic unit busy while the rest of the chip waits: the time model
    calls the launch L2-bound, yet the L2 moves next to nothing, so its activity stays near 0 and the board
    draws within a tenth of idle (measured on the H200: such launches drew 134-175 W, the least of any)."""
    work, tp, params = atomic_work(), bottleneck_parameters("h200"), power_parameters("h200")
    assert params is not None
    est = launch_time(work, H200, *H200.default_clocks, tp)
    assert max(est.resources_ms, key=est.resources_ms.get) == "l2"
    moving, serialising = l2_times(work.traffic, H200, H200.default_clocks[1], tp)
    assert moving < serialising / 100
    p = launch_power(work, H200, *H200.default_clocks, tp, params)
    assert p.activities["l2"] < 0.01
    assert p.power_w < params.idle_w * 1.1


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
