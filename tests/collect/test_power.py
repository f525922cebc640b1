"""Power that holds: the board probe, repeats until power is steady, and the reading a sample trusts, against the
fake board given a slow energy counter (one update per 100 ms), a power reading averaged over a window, and a
power ramp. The fake's true power is known exactly (``60 W + 200 W × min(1, warps / 512)`` at 1755 MHz), so
every figure is checked against it."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.kernels import HAND, hand_launch

from ptxstatic.collect.measure import POWER_PRECISION, REPEATS, BoardTiming, measure, probe
from ptxstatic.collect.power import averaging_window, counter_edges, counter_power
from ptxstatic.collect.runner import CollectOptions, collect
from ptxstatic.gpu.device import Device, Telemetry
from ptxstatic.gpu.fake import ENV, IDLE_W, open_fake

BIG = hand_launch(128, 128, 128 * 128)  # 512 warps: the fake draws 260 W
SMALL = hand_launch(2, 64, 128)  # 4 warps: 61.5625 W


def true_power(launch) -> float:
    return IDLE_W + 200.0 * min(1.0, launch.blocks * launch.warps_per_block / 512)


def fake(monkeypatch, tmp_path, **config: object) -> Device:
    board = tmp_path / "board.json"
    board.write_text(json.dumps(config))
    monkeypatch.setenv(ENV, str(board))
    return open_fake()


def prepared(device: Device, launch) -> int:
    return device.gpu.prepare(device.gpu.load(HAND), "hand", launch)


# --------------------------------------------------------------------------------------- the trace, by hand
def reading(t: float, energy: float | None, power: float | None = None) -> Telemetry:
    return Telemetry(t, power, None, None, None, 0, energy)


def test_edges_are_where_the_counter_changed_and_count_only_inside_the_loop():
    # the counter updates every 0.1 s by 100 mJ (1 W); read every 0.04 s, between its updates
    trace = [reading(0.01 + 0.04 * k, 100.0 * int((0.01 + 0.04 * k) / 0.1)) for k in range(30)]
    edges = counter_edges(trace)
    assert len(edges) == 11 and all(e.half_gap == pytest.approx(0.02) for e in edges)
    assert all(abs(e.t - 0.1 * (i + 1)) <= e.half_gap for i, e in enumerate(edges))  # each within its bound
    # a loop from 0.15 s to 0.95 s: the updates at 0.2 ... 0.9 s, seen within it, span seven update periods
    p = counter_power(edges, 0.15, 0.95)
    assert p.updates == 7 and p.resolution == pytest.approx(0.04 / 0.72)
    assert abs(p.watts - 1.0) <= p.resolution
    assert counter_power(edges, 0.15, 0.3) is None  # one update inside: no power


def test_averaging_window_from_the_step_of_a_moving_mean():
    # a reading averaged over 0.5 s after power steps from 60 W to 260 W at t = 1
    power = [60.0 + 200.0 * min(1.0, max(0.0, (1 + 0.01 * k - 1) / 0.5)) for k in range(100)]
    trace = [reading(1 + 0.01 * k, None, p) for k, p in enumerate(power)]
    assert averaging_window(trace, 1.0) == pytest.approx(0.5, abs=0.012)
    flat = [reading(1 + 0.01 * k, None, 100.0 + (k % 2)) for k in range(100)]
    assert averaging_window(flat, 1.0) is None  # no step to see the window by


# ---------------------------------------------------------------------------------------- the fake board
def test_probe_measures_the_counter_period_and_the_averaging_window(monkeypatch, tmp_path):
    device = fake(monkeypatch, tmp_path, energy_period_s=0.1, power_window_s=0.5)
    timing = probe(device.gpu, device.board, prepared(device, BIG), 0, 1.0)
    assert timing.counter and timing.period_s == pytest.approx(0.1, abs=1e-3) and not timing.continuous
    assert timing.window_s == pytest.approx(0.5, abs=0.02) and timing.updates_seen >= 8
    # repeats of a third of a one-second sample; for a 0.15 s sample, long enough to span three updates
    assert timing.repeat_seconds(1.0, 0.02) == pytest.approx(1 / 3)
    assert timing.repeat_seconds(0.15, 0.02) == pytest.approx(0.3)


def test_slow_counter_and_averaged_readings_after_a_step_still_give_the_power(monkeypatch, tmp_path):
    """After a 260 W kernel, a 61.6 W one measured for 0.15 s (the H200 short samples' length): the counter changes
    only every 100 ms and the readings still average the kernel before; the sample's power is within the
    precision, from the counter between its updates, and the readings are compared only past their window."""
    device = fake(monkeypatch, tmp_path, energy_period_s=0.1, power_window_s=0.5)
    timing = probe(device.gpu, device.board, prepared(device, BIG), 0, 1.0)
    start = device.board.now()
    t = measure(device.gpu, device.board, prepared(device, SMALL), 0, 0.15, timing)
    assert t.power_source == "energy-counter" and t.steady and t.repeats == REPEATS
    assert t.power_w == pytest.approx(true_power(SMALL), rel=POWER_PRECISION / 2)
    assert t.resolution <= POWER_PRECISION / 2 and t.counter_updates >= 2 * REPEATS
    assert t.loop_s >= 3 * 0.3 and "between its updates" in t.trust
    assert t.sampled_power_w == pytest.approx(true_power(SMALL), rel=1e-3) and not t.warnings
    # what the readings held before the window had passed: the 260 W kernel, still averaged in
    assert device.board.state.timeline.mean_w(start + 0.25, 0.5) > 1.5 * true_power(SMALL)


def test_power_warms_up_until_repeats_agree(monkeypatch, tmp_path):
    device = fake(monkeypatch, tmp_path, energy_period_s=0.1, power_tau_s=0.3)
    timing = BoardTiming(0.001, True, 0.1, None, 0)
    t = measure(device.gpu, device.board, prepared(device, BIG), 0, 1.0, timing)
    assert t.steady and t.repeats == REPEATS and t.repeat_spread <= POWER_PRECISION
    assert t.warmup_s >= 1 / 3  # at least the first repeat, still ramping up from idle, was dropped
    assert t.power_w == pytest.approx(true_power(BIG), rel=POWER_PRECISION)
    assert f"{REPEATS} repeats within" in t.trust and not t.warnings


def test_power_that_never_settles_stops_at_the_cap_and_says_so(monkeypatch, tmp_path):
    device = fake(monkeypatch, tmp_path, energy_period_s=0.1, power_tau_s=5.0)
    timing = BoardTiming(0.001, True, 0.1, None, 0)
    t = measure(device.gpu, device.board, prepared(device, BIG), 0, 1.0, timing)
    assert not t.steady and t.repeats == REPEATS and t.repeat_spread > POWER_PRECISION
    assert 4 / 3 < t.warmup_s < 2  # seven repeats of a third of a second (and a little) ran
    assert "power not steady" in t.trust and any("power not steady" in w for w in t.warnings)


def test_without_a_counter_readings_count_only_after_the_window(monkeypatch, tmp_path):
    device = fake(monkeypatch, tmp_path, energy_counter=False, power_window_s=0.3)
    probe(device.gpu, device.board, prepared(device, BIG), 0, 1.0)
    timing = BoardTiming(0.001, False, None, 0.3, 0)
    t = measure(device.gpu, device.board, prepared(device, SMALL), 0, 0.3, timing)
    assert t.power_source == "sampled" and t.counter_updates is None
    assert t.power_w == pytest.approx(true_power(SMALL), rel=1e-6)
    assert "after its 0.30 s averaging window" in t.trust


# ------------------------------------------------------------------------------------------ in a dataset
def test_collect_records_how_far_each_sample_s_power_holds(monkeypatch, tmp_path):
    (tmp_path / "hand.ptx").write_text(HAND)
    launches = [hand_launch(2, 64, 128).to_dict(), hand_launch(16, 64, 1024).to_dict()]
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"suite": "t", "min_seconds": 0.3, "benchmarks": [
        {"name": "hand", "source": "hand.ptx", "launches": launches}]}))
    board = tmp_path / "board.json"
    board.write_text(json.dumps({"energy_period_s": 0.1, "power_window_s": 0.2}))
    monkeypatch.setenv(ENV, str(board))
    db = tmp_path / "d.sqlite"
    summary = collect(CollectOptions(manifest, db, "fake", "fake"))
    assert summary.written == 2 and summary.failed == 0
    assert summary.board["counter_period_s"] == pytest.approx(0.1, abs=1e-3)
    con = sqlite3.connect(db)
    for steady, repeats, spread, resolution, period, updates, trust, power, warps in con.execute(
            "SELECT s.power_steady, s.power_repeats, s.power_repeat_spread, s.power_resolution, s.counter_period_s, "
            "s.counter_updates, s.power_trust, s.power_w, f.value FROM collect_samples s "
            "JOIN kernels k ON k.benchmark_id = s.benchmark_id JOIN features f ON f.kernel_id = k.id "
            "WHERE f.name = 'ctas'"):
        assert steady == 1 and repeats == REPEATS and spread <= POWER_PRECISION
        assert resolution <= POWER_PRECISION / 2 and updates >= 2 * REPEATS
        assert period == pytest.approx(0.1, abs=1e-3) and "energy counter between its updates" in trust
        assert power == pytest.approx(60 + 200 * warps * 2 / 512, rel=POWER_PRECISION / 2)
    info = json.loads(con.execute("SELECT info FROM collect_runs").fetchone()[0])
    assert info["board_timing"]["counter_period_s"] == pytest.approx(0.1, abs=1e-3)
