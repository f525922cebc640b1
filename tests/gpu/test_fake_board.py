"""The fake board's power physics, which the power tests lean on: energy integrated in closed form, a counter that
changes only at its update period, a reading averaged over a window, a trace on the virtual clock; and module
variables that keep their values from one run to the next, as on a GPU."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from support.kernels import HAND, hand_launch

from ptxstatic.counts.instrumentation.ptx_pass import instrument
from ptxstatic.gpu.fake import ENV, IDLE_W, PowerTimeline, open_fake
from ptxstatic.ptx.parser import parse_text


def test_timeline_energy_is_the_integral_of_its_power():
    line = PowerTimeline(tau_s=0.2)
    line.run(0.0, 0.5, 260.0)
    line.run(0.5, 0.3, 100.0)
    assert line.level(0.0) == IDLE_W and line.level(0.5) == pytest.approx(260 - 200 * math.exp(-2.5))
    ts = np.linspace(0.0, 0.8, 80_001)
    numeric = np.trapezoid([line.level(t) for t in ts], ts)
    assert line.energy_j(0.8) == pytest.approx(numeric, rel=1e-6)
    assert line.mean_w(0.8, 0.3) == pytest.approx((line.energy_j(0.8) - line.energy_j(0.5)) / 0.3)
    assert line.mean_w(0.1, 0.3) < line.level(0.1)  # the window still holds idle time before the first loop


def test_board_counter_period_window_and_trace(tmp_path, monkeypatch):
    (tmp_path / "b.json").write_text(json.dumps({"energy_period_s": 0.1, "power_window_s": 0.2}))
    monkeypatch.setenv(ENV, str(tmp_path / "b.json"))
    device = open_fake()
    gpu, board = device.gpu, device.board
    p = gpu.prepare(gpu.load(HAND), "hand", hand_launch(128, 128, 128 * 128))  # 512 warps: 260 W
    board.start_trace(0.01)
    seconds = sum(gpu.time(p, 1, 1000)) / 1e3
    while board.now() < 0.35:
        gpu.time(p, 1, 1000)
    readings = board.stop_trace()
    assert [r.t for r in readings[:3]] == pytest.approx([0.0, 0.01, 0.02]) and readings[-1].t == board.now()
    energies = sorted({r.energy_mj for r in readings})
    assert energies == pytest.approx([0.0, 26_000.0, 52_000.0, 78_000.0])  # 260 W, one update per 0.1 s
    assert readings[10].power_w == pytest.approx(IDLE_W + 200 * 0.1 / 0.2)  # half the window is this kernel
    assert readings[30].power_w == pytest.approx(260.0) and seconds > 0


def test_module_variables_keep_their_values_between_runs(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path / "b.json"))
    gpu = open_fake().gpu
    instrumented = instrument(parse_text(HAND), source_text=HAND)
    module = gpu.load(instrumented.text)
    totals = []
    for _ in range(2):
        p = gpu.prepare(module, "hand", hand_launch(2, 64, 100))
        gpu.run(p)
        totals.append(np.frombuffer(gpu.read_global(module, instrumented.counters.symbol), np.uint64).copy())
        gpu.release(p)
    assert totals[0].sum() > 0 and np.array_equal(totals[1], 2 * totals[0])  # the counters add up, as on a GPU
