"""Physically constrained surfaces: monotone time, energy = time x power, exact reference, fits that recover
known quantities, projection of surfaces back onto quantities, and the shrinkage/interval machinery."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.dvfs import ClockTable
from ptxstatic.models.evaluation.metrics import coverage
from ptxstatic.models.inference.physical_surfaces import PhysicalShape, clip_quantities, idle_curve, project
from ptxstatic.models.inference.uncertainty import Intervals, Shrinkage, blend

pytest.importorskip("scipy")
from ptxstatic.models.training.surface_fit import fit_quantities, fit_shape

# The GTX Titan X clock table of the gpuPTXModel measurements (gpu_info/gtxtitanx): memory ascending, then core
CORES = (595, 633, 671, 709, 747, 785, 823, 861, 899, 937, 975, 1013, 1050, 1088, 1126, 1164)
IDLE = (41, 41, 41, 41, 42, 42, 42, 43, 44, 45, 46, 48, 49, 51, 55, 56,
        77, 77, 77, 77, 77, 77, 77, 78, 78, 78, 78, 79, 81, 83, 87, 89)
CLOCKS = ClockTable((810,) * 16 + (3505,) * 16, CORES * 2, tuple(float(x) for x in IDLE))
RNG = np.random.default_rng(7)


def shape(p: float = 4.0, k: float = 4.0) -> PhysicalShape:
    return PhysicalShape(CLOCKS, p, k, idle_curve(CLOCKS))


def random_quantities(n: int, rng: np.random.Generator = RNG) -> np.ndarray:
    return clip_quantities(rng.uniform(size=(n, 4)))


@pytest.mark.parametrize("p", [1.0, 2.0, 4.0, 8.0])
def test_time_never_rises_when_a_clock_rises(p: float) -> None:
    t = shape(p).time(random_quantities(500))
    low_mem, high_mem = t[:, :16], t[:, 16:]  # each block in ascending core clock
    assert np.all(np.diff(low_mem, axis=1) <= 1e-12)
    assert np.all(np.diff(high_mem, axis=1) <= 1e-12)
    assert np.all(high_mem <= low_mem + 1e-12)
    assert np.all(t >= 1.0 - 1e-12)  # nothing is faster than at F_max


def test_energy_is_time_times_power_and_the_reference_is_one() -> None:
    s = shape().surfaces(random_quantities(300))
    np.testing.assert_array_equal(s[:, 2], s[:, 0] * s[:, 1])
    np.testing.assert_allclose(s[:, :, CLOCKS.reference], 1.0, rtol=0, atol=1e-12)
    assert np.all(s > 0)


def test_a_core_bound_kernel_follows_the_core_clock_and_a_memory_bound_one_the_memory_clock() -> None:
    core_bound, memory_bound = shape(8.0).time(np.array([[0.0, 0.0, 0.5, 0.2], [0.0, 1.0, 0.5, 0.2]]))
    ratio = np.array(CORES[-1]) / np.array(CORES, dtype=float)
    np.testing.assert_allclose(core_bound[16:], ratio, rtol=1e-9)
    np.testing.assert_allclose(memory_bound[:16], 3505 / 810, rtol=1e-9)
    np.testing.assert_allclose(memory_bound[16:], 1.0, rtol=1e-9)


@pytest.mark.parametrize("p", [1.0, 4.0])
def test_fit_recovers_known_quantities_from_a_synthetic_surface(p: float) -> None:
    truth = np.array([[0.1, 0.3, 0.5, 0.2], [0.0, 0.05, 0.7, 0.1], [0.3, 0.8, 0.4, 0.4], [0.05, 0.5, 0.6, 0.0]])
    fitted = fit_quantities(shape(p).surfaces(truth), shape(p))
    np.testing.assert_allclose(fitted, truth, atol=2e-3)


def test_the_three_coefficient_form_is_the_p1_case() -> None:
    """T = a·Fc/fc + b·Fm/fm + c with a + b + c = 1 is recovered as (c, b / (a + b)) at p = 1."""
    a, b, c = 0.55, 0.3, 0.15
    x = CORES[-1] / np.array(CLOCKS.f_core, dtype=float)
    y = 3505 / np.array(CLOCKS.f_mem, dtype=float)
    time = a * x + b * y + c
    surfaces = np.stack([time, np.ones_like(time), time])[None]
    q = fit_quantities(surfaces, shape(1.0))[0]
    np.testing.assert_allclose(q[:2], [c, b / (a + b)], atol=2e-3)


def test_shape_constants_are_learned_from_surfaces() -> None:
    truth = random_quantities(60)
    learned = fit_shape(shape(4.0, 3.0).surfaces(truth), CLOCKS)
    assert (learned.overlap, learned.core_exponent) == (4.0, 3.0)


def test_projection_reads_surfaces_back_as_quantities() -> None:
    # its own generator: the draws, and so the worst case, must not depend on which tests ran before it
    truth = random_quantities(40, np.random.default_rng(7))
    truth[:, 0] *= 0.6  # a fixed share near 1 leaves the memory share undetermined (time hardly scales)
    s = shape().surfaces(truth)
    back = shape().surfaces(project(s, shape()))
    assert np.abs(back / s - 1).max() < 0.015


def test_blend_toward_the_mean_stays_monotone_with_energy_the_product() -> None:
    sh = shape()
    a, b = sh.surfaces(random_quantities(50)), sh.surfaces(random_quantities(50))
    w = RNG.uniform(size=50)
    mixed = blend(a, b, w)
    np.testing.assert_array_equal(mixed[:, 2], mixed[:, 0] * mixed[:, 1])
    assert np.all(np.diff(mixed[:, 0, 16:], axis=1) <= 1e-12)
    np.testing.assert_allclose(blend(a, b, np.ones(50)), np.stack([b[:, 0], b[:, 1], b[:, 0] * b[:, 1]], 1))


def test_shrinkage_gives_the_mean_surface_to_a_kernel_the_model_never_saw() -> None:
    sh = shape()
    y = sh.surfaces(random_quantities(80))
    pred = y * np.exp(RNG.normal(scale=0.05, size=y.shape))
    pred[:, :, CLOCKS.reference] = 1.0
    scores = RNG.uniform(size=80)
    unseen = scores * RNG.uniform(size=80)
    rule = Shrinkage.fit(pred, np.repeat(y.mean(0)[None], 80, 0), y, scores, unseen, CLOCKS.reference)
    assert rule.weight(1.0, 1.0) == 1.0
    assert np.all(rule.weight(scores, unseen) >= unseen)


def test_shrinkage_follows_what_the_out_of_fold_errors_say() -> None:
    """Predictions that are bad exactly where the score is high make the fitted rule shrink there."""
    sh = shape()
    y = sh.surfaces(random_quantities(120))
    mean = np.repeat(np.exp(np.log(y).mean(0))[None], 120, 0)
    scores = np.r_[np.zeros(60), np.full(60, 0.5)]
    pred = y.copy()
    pred[60:] = sh.surfaces(random_quantities(60))  # out of distribution: unrelated to the truth
    rule = Shrinkage.fit(pred, mean, y, scores, np.zeros(120), CLOCKS.reference)
    assert rule.weight(0.0, 0.0) == 0.0 and rule.weight(0.5, 0.0) > 0.3


def test_conformal_intervals_cover_their_level_on_the_calibration_data() -> None:
    sh = shape()
    y = sh.surfaces(random_quantities(200))
    pred = y * np.exp(RNG.normal(scale=0.08, size=y.shape))
    w = RNG.uniform(0, 0.5, size=200)
    iv = Intervals.fit(pred, y, w, y, level=0.9)
    cov = coverage(y, iv.bounds(pred, w), CLOCKS.reference)
    assert all(v >= 90.0 for v in cov.values())
    lo, hi = iv.bounds(pred, w)
    assert np.all((lo <= pred) & (pred <= hi))


def test_blend_of_a_model_with_an_energy_head_blends_the_head() -> None:
    sh = shape()
    a, b = sh.surfaces(random_quantities(20)), sh.surfaces(random_quantities(20))
    a[:, 2] *= 1.1  # an energy head that is not time x power
    w = RNG.uniform(size=20)
    mixed = blend(a, b, w, "head")
    np.testing.assert_allclose(mixed[:, 2], np.exp((1 - w[:, None]) * np.log(a[:, 2]) + w[:, None] * np.log(b[:, 2])))
    np.testing.assert_allclose(mixed[:, :2], blend(a, b, w)[:, :2])
