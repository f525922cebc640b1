"""The bottleneck estimate of absolute time on CUDA kernels compiled to committed PTX
(tests/data/predict/roofline.cu), with their launches' memory traffic: memory-bound time grows linearly with
n, compute-bound time with the loop count, a streaming kernel follows the memory clock and an arithmetic one
the core clock, fewer CTAs than SMs leave SMs idle, and the published figures give the bandwidths the
vendors publish."""

from __future__ import annotations

import pytest
from support.paths import ROOT

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import GPU_FIGURES, gpu_figures
from ptxstatic.hardware.issue_rates import tensor_work
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


TENSOR_PTX = ROOT / "tests" / "data" / "fixtures" / "ptx" / "nvcc" / "sm_90" / "plain" / "tensor.ptx"


def test_matrix_multiply_accumulates_load_the_tensor_pipe_by_their_multiply_adds() -> None:
    """mma.sync.m16n8k16 (tests/data/cuda/tensor.cu, nvcc for sm_90): each executed instruction puts its
    16·8·16 multiply-adds, a 32nd per thread, on the H200's tensor pipe at its published 2048 per SM per
    clock; the pipe's load grows with K as the loop's trip count does."""
    module = parse_file(TENSOR_PTX)
    h200 = gpu_figures("h200")

    def work(k: int):
        bound = bind(module, "mma_m16n8k16_ldmatrix", Launch((132, 1, 1), (128, 1, 1), args={"3": k}))
        counts = estimate_counts(bound).counts
        return launch_work(module, counts, h200, launch_traffic(bound, counts.counts, h200)), counts

    short, counts = work(256)
    fn = module.function("mma_m16n8k16_ldmatrix")
    executed = sum(n * sum(ins.info.opcode == "mma" for ins in b.instructions)
                   for b in build_cfg(fn).blocks for n in [counts.counts[fn.name].get(b.id, 0.0)])
    assert executed == 132 * 128 * 256 / 16
    assert short.pipe_cycles["tensor"] == pytest.approx(executed * 16 * 8 * 16 / 32 / h200.rates.tensor)
    long, _ = work(2048)
    assert long.pipe_cycles["tensor"] == pytest.approx(8 * short.pipe_cycles["tensor"])


@pytest.mark.parametrize("opcode,types,shape,like", [
    ("wmma.mma", ("f32", "f32"), "m16n16k16", "m16n16k16"),  # f16 inputs: wmma names the accumulators only
    ("wmma.mma", ("f32", "tf32", "tf32", "f32"), "m16n16k8", "m16n16k16"),  # half the multiply-adds, half the rate
    ("wmma.mma", ("f64", "f64", "f64", "f64"), "m8n8k4", "m16n16k16"),  # 1/32 of them at 1/16 of the rate
    ("mma", ("s32", "s8", "s8", "s32"), "m16n8k32", "m16n8k16"),  # twice the multiply-adds at twice the rate
    ("wgmma.mma_async", ("f32", "f16", "f16"), "m64n16k16", "m16n16k16"),  # four warps share a warpgroup's
])
def test_tensor_work_follows_shape_type_and_issuing_threads(opcode: str, types: tuple, shape: str, like: str) -> None:
    """Each costs a thread the tensor pipe's time of the f16 mma.sync of shape ``like``."""
    f16 = tensor_work("mma", ("f32", "f16", "f16", "f32"), ("row", "col", like))
    assert tensor_work(opcode, types, ("row", "col", shape)) == pytest.approx(f16)
