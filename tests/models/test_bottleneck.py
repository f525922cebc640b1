"""The bottleneck estimate of absolute time on CUDA kernels compiled to committed PTX
(tests/data/predict/roofline.cu), with their launches' memory traffic: memory-bound time grows linearly with
n, compute-bound time with the loop count, a streaming kernel follows the memory clock and an arithmetic one
the core clock, fewer CTAs than SMs leave SMs idle, and the published figures give the bandwidths the
vendors publish."""

from __future__ import annotations

import pytest
from support.paths import ROOT

from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import GPU_FIGURES, gpu_figures
from ptxstatic.launch import Launch
from ptxstatic.models.inference.bottleneck import DEFAULT_PARAMETERS, launch_time
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic

PTX = ROOT / "tests" / "data" / "predict" / "roofline.ptx"
TITANX = gpu_figures("gtxtitanx")


@pytest.fixture(scope="module")
def module():
    return parse_file(PTX)


def estimate(module, kernel: str, grid: int, args: dict, figures=TITANX, f_mem: float = 3505, f_core: float = 1164):
    launch = Launch((grid, 1, 1), (256, 1, 1), args=dict(args))
    bound = bind(module, kernel, launch)
    counts = estimate_counts(bound).counts
    traffic = launch_traffic(bound, counts.counts, figures)
    return launch_time(launch_work(module, counts, figures, traffic), figures, f_mem, f_core, DEFAULT_PARAMETERS)


def busy(e) -> float:
    """Time without the launch overhead."""
    return e.time_ms - e.overhead_ms


@pytest.mark.parametrize("grid_scales", [False, True])
def test_memory_bound_time_grows_linearly_with_n(module, grid_scales: bool) -> None:
    """saxpy on n and on 8n elements: a fixed grid striding over them, or one thread per element."""
    n = 1 << 20
    small, large = (estimate(module, "saxpy_n", m // 256 if grid_scales else 96, {"0": m, "1": 2})
                    for m in (n, 8 * n))
    assert small.bound == large.bound == "dram"
    assert busy(large) / busy(small) == pytest.approx(8, rel=0.02)
    assert small.low_ms <= small.time_ms <= small.high_ms


def test_compute_bound_time_grows_linearly_with_the_loop_count(module) -> None:
    short, long = (estimate(module, "fma_loop", 240, {"1": 1.0001, "2": 0.5, "3": iters}) for iters in (500, 4000))
    assert short.bound == long.bound == "core"
    assert busy(long) / busy(short) == pytest.approx(8, rel=0.02)


def test_a_streaming_kernel_follows_the_memory_clock_and_an_arithmetic_one_the_core_clock(module) -> None:
    def slowdowns(kernel: str, args: dict) -> tuple[float, float]:
        ref = estimate(module, kernel, 240, args).time_ms
        return (estimate(module, kernel, 240, args, f_mem=810).time_ms / ref,
                estimate(module, kernel, 240, args, f_core=595).time_ms / ref)

    memory, core = slowdowns("saxpy_n", {"0": 1 << 24, "1": 2})
    assert memory > 3.5 and core < 1.2  # 3505 / 810 = 4.3 when all of the time is memory time; L2 and the
    # schedulers follow the core clock
    memory, core = slowdowns("fma_loop", {"1": 1.0001, "2": 0.5, "3": 4000})
    assert memory < 1.1 and core > 1.8  # 1164 / 595 = 1.96


def test_a_launch_of_fewer_ctas_than_sms_leaves_sms_idle(module) -> None:
    """One CTA or as many CTAs as the GPU has SMs take the same core time; twice as many take longer, at most
    twice: here twice, as the kernel's four independent chains of multiply-adds keep the schedulers busy with
    one CTA an SM already."""
    args = {"1": 1.0001, "2": 0.5, "3": 2000}
    one, full, double = (estimate(module, "fma_loop", g, args).resources_ms["core"]
                         for g in (1, TITANX.sms, 2 * TITANX.sms))
    assert full == pytest.approx(one, rel=1e-6) and double == pytest.approx(2 * one, rel=1e-6)


def test_the_streaming_kernel_is_faster_on_h100_by_the_bandwidth_ratio(module) -> None:
    h100 = gpu_figures("h100")
    args = {"0": 1 << 24, "1": 2}
    titan, hopper = (estimate(module, "saxpy_n", 1024, args, g, g.memory_mhz, g.max_core_mhz) for g in (TITANX, h100))
    ratio = h100.bandwidth(h100.memory_mhz) / TITANX.bandwidth(TITANX.memory_mhz)
    assert busy(titan) / busy(hopper) == pytest.approx(ratio, rel=0.02)


@pytest.mark.parametrize("name,gb_s,sms", [("gtxtitanx", 336.5, 24), ("a100", 1555, 108), ("h100", 3350, 132)])
def test_published_bandwidth_follows_from_bus_width_and_memory_clock(name: str, gb_s: float, sms: int) -> None:
    g = GPU_FIGURES[name]
    assert g.bandwidth(g.memory_mhz) / 1e9 == pytest.approx(gb_s, rel=0.002)
    assert g.sms == sms and g.sources and g.rates.source
