"""The GPU runner on an NVIDIA GPU: counts equal hand-derived counts, the instrumented kernels write the
same buffers as the originals, sampled and one-warp modes, and the LLVM IR route's counts match the PTX
route's in one launch. Every test here needs a GPU and skips without one."""

from __future__ import annotations

import pytest
from support.kernels import HAND, LAUNCHES, by_name, check_routes, hand_expected, hand_launch, ir_and_ptx_routes
from support.paths import FIXTURES

from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions
from ptxstatic.counts.measured import profile, run_counters
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import Device
from ptxstatic.gpu.open import open_device
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file, parse_text


@pytest.fixture(scope="module")
def gpu() -> Device:
    try:
        device = open_device("cuda")
        device.gpu.info()
    except PtxstaticError as err:
        pytest.skip(str(err))
    yield device
    device.close()


@pytest.mark.parametrize("grid,block,n", [(1, 32, 32), (3, 96, 250), (40, 128, 5000)])
def test_counts_equal_hand_derived_counts(gpu: Device, grid: int, block: int, n: int):
    m = parse_text(HAND, "hand.ptx")
    result = profile(bind(m, "hand", hand_launch(grid, block, n)), gpu)
    want, _ = hand_expected(grid * block, n)
    assert result.outputs_match, result.mismatches
    assert by_name(m, result.counts.counts["hand"]) == want
    assert result.counts.source == "gpu"
    total = result.instructions["total"]
    assert total["control"] >= want["bb0"]  # every thread ran at least the first branch


def test_sampled_and_one_warp_modes(gpu: Device):
    m = parse_text(HAND, "hand.ptx")
    launch = hand_launch(8, 96, 10**6)  # every CTA does the same work (96 is a multiple of 3 and 4)
    want, _ = hand_expected(8 * 96, 10**6)
    sampled = profile(bind(m, "hand", launch), gpu, InstrumentOptions("sample", 4))
    assert sampled.counts.source == "gpu-sampled" and any("factor 4" in n for n in sampled.counts.notes)
    assert by_name(m, sampled.counts.counts["hand"]) == want
    warp = profile(bind(m, "hand", launch), gpu, InstrumentOptions("warp"))
    assert by_name(m, warp.counts.counts["hand"]) == hand_expected(32, 10**6)[0]


@pytest.mark.parametrize("kernel", sorted(LAUNCHES))
def test_outputs_identical_and_counts_equal_emulator(gpu: Device, kernel: str):
    m = parse_file(FIXTURES / "llvm" / f"{kernel}.ptx")
    result = profile(bind(m, kernel, LAUNCHES[kernel]), gpu)
    assert result.outputs_match, result.mismatches
    emulator = pytest.importorskip("ptxstatic.emulator")
    emulated = emulator.emulate(m, kernel, LAUNCHES[kernel]).counts.counts
    for fn, blocks in result.counts.counts.items():
        assert blocks == {b: emulated.get(fn, {}).get(b, 0.0) for b in blocks}


def test_ir_route_counts_match_ptx_route_counts(gpu: Device):
    ir, both, launch = ir_and_ptx_routes()
    ir_counts, ptx_counts = run_counters(gpu.gpu, both.text, bind(both.module, "halvings", launch),
                                         [ir.counters, both.counters])
    check_routes(ir, ir_counts, ptx_counts)
