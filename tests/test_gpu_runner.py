"""The GPU runner. On a machine with an NVIDIA GPU: counts equal hand-derived counts, the instrumented kernels
write the same buffers as the originals, sampled and one-warp modes, and the LLVM IR route's counts match
the PTX route's in one launch. Without a GPU those tests skip, and the runner's 'no GPU' error is checked.
The hand-derived counts are also checked against the PTX emulator, which needs no GPU."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from util import FIXTURES, needs_ptxas

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.counts.measured import block_counts, profile, run_counters
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.driver import NO_GPU, Driver
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.parser import parse_file, parse_text
from ptxstatic.toolchain.ptxas import assemble

#: a kernel whose block counts follow from its code: a guarded early exit, a branch on gid % 3, a loop that
#: runs gid % 4 times, and an empty block at the end that every thread reaches
HAND = """
.version 7.8
.target sm_75
.address_size 64

.visible .entry hand(.param .u64 out, .param .u32 n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<10>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.u32 %r5, %r3, %r4, %r2;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra $L_done;
	rem.u32 %r6, %r5, 3;
	setp.ne.u32 %p2, %r6, 0;
	mov.u32 %r7, 0;
	@%p2 bra $L_loop_check;
	add.u32 %r7, %r7, 100;
$L_loop_check:
	and.b32 %r8, %r5, 3;
$L_loop:
	setp.eq.u32 %p3, %r8, 0;
	@%p3 bra $L_store;
	add.u32 %r7, %r7, 1;
	sub.u32 %r8, %r8, 1;
	bra.uni $L_loop;
$L_store:
	cvta.to.global.u64 %rd1, %rd1;
	mul.wide.u32 %rd2, %r5, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r7;
$L_done:
}
"""


def hand_expected(threads: int, n: int) -> tuple[dict[str, int], np.ndarray]:
    """Block counts by block name, and the output, derived from the kernel's code by hand."""
    gids = np.arange(threads)
    live = gids[gids < n]
    counts = {
        "bb0": threads, "bb1": len(live), "bb2": int(np.sum(live % 3 == 0)), "$L_loop_check": len(live),
        "$L_loop": int(np.sum(live % 4 + 1)), "bb5": int(np.sum(live % 4)), "$L_store": len(live),
        "$L_done": threads,
    }
    out = np.zeros(max(n, threads), np.uint32)
    out[live] = np.where(live % 3 == 0, 100, 0) + live % 4
    return counts, out


def by_name(module, counts: dict[int, float]) -> dict[str, float]:
    return {b.name: counts[b.id] for b in build_cfg(module.function("hand")).blocks}


def hand_launch(grid: int, block: int, n: int) -> Launch:
    return Launch((grid, 1, 1), (block, 1, 1), 0, {"out": Buffer("u32", max(n, grid * block), output=True), "n": n})


def gpu() -> Driver:
    try:
        return Driver()
    except PtxstaticError as err:
        pytest.skip(str(err))


# ------------------------------------------------------------------------------------- no GPU needed
def test_hand_counts_hold_in_the_emulator():
    emulator = pytest.importorskip("ptxstatic.emulator", reason="the PTX emulator is not available")
    m = parse_text(HAND, "hand.ptx")
    launch = hand_launch(3, 96, 250)
    result = instrument(m, InstrumentOptions(banks=4))
    run = emulator.emulate(result.module, "hand", launch)
    raw = run.globals[result.counters.symbol].astype(np.uint64).tolist()
    counts = block_counts(result.counters, raw, "hand", launch)
    want, out = hand_expected(288, 250)
    assert by_name(m, counts.counts["hand"]) == want
    assert np.array_equal(run.buffers["out"], out)


@needs_ptxas
def test_hand_kernel_assembles():
    assemble(instrument(parse_text(HAND, "hand.ptx")).text, "sm_75")


def test_no_gpu_is_a_clear_error():
    try:
        Driver()
    except PtxstaticError as err:
        assert str(err).startswith(NO_GPU)
    else:
        pytest.skip("a GPU is present")
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "profile", str(FIXTURES / "llvm" / "loop_sum.ptx"),
                           "-k", "loop_sum", "--grid", "2", "--block", "64", "--arg", "0=buf:f32:640:iota",
                           "--arg", "1=buf:f32:128:out", "--arg", "2=5"], capture_output=True, text=True)
    assert proc.returncode == 2 and NO_GPU in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------------- on the GPU
@pytest.mark.gpu
@pytest.mark.parametrize("grid,block,n", [(1, 32, 32), (3, 96, 250), (40, 128, 5000)])
def test_counts_equal_hand_derived_counts(grid: int, block: int, n: int):
    drv = gpu()
    m = parse_text(HAND, "hand.ptx")
    result = profile(HAND, "hand", hand_launch(grid, block, n), driver=drv)
    want, _ = hand_expected(grid * block, n)
    assert result.outputs_match, result.mismatches
    assert by_name(m, result.counts.counts["hand"]) == want
    assert result.counts.source == "gpu"
    total = result.instructions["total"]
    assert total["control"] >= want["bb0"]  # every thread ran at least the first branch


@pytest.mark.gpu
def test_sampled_and_one_warp_modes():
    drv = gpu()
    m = parse_text(HAND, "hand.ptx")
    launch = hand_launch(8, 96, 10**6)  # every CTA does the same work (96 is a multiple of 3 and 4)
    want, _ = hand_expected(8 * 96, 10**6)
    sampled = profile(HAND, "hand", launch, InstrumentOptions("sample", 4), driver=drv)
    assert sampled.counts.source == "gpu-sampled" and any("factor 4" in n for n in sampled.counts.notes)
    assert by_name(m, sampled.counts.counts["hand"]) == want
    warp = profile(HAND, "hand", launch, InstrumentOptions("warp"), driver=drv)
    assert by_name(m, warp.counts.counts["hand"]) == hand_expected(32, 10**6)[0]


LAUNCHES = {
    "loop_sum": Launch((4, 1, 1), (64, 1, 1), 0, {"0": Buffer("f32", 256 * 7, "random", seed=1),
                                                  "1": Buffer("f32", 256, output=True), "2": 7}),
    "shared_reduce": Launch((4, 1, 1), (256, 1, 1), 0, {"0": Buffer("f32", 1024, "iota"),
                                                        "1": Buffer("f32", 4, output=True)}),
    "switch_dispatch": Launch((2, 1, 1), (128, 1, 1), 0, {
        "0": Buffer("u32", 256, "random", seed=3), "1": Buffer("u32", 256, "iota"),
        "2": Buffer("u32", 256, "random", seed=4), "3": Buffer("u32", 256, output=True)}),
}


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(LAUNCHES))
def test_outputs_identical_and_counts_equal_emulator(kernel: str):
    drv = gpu()
    m = parse_file(FIXTURES / "llvm" / f"{kernel}.ptx")
    result = profile(m, kernel, LAUNCHES[kernel], driver=drv)
    assert result.outputs_match, result.mismatches
    emulator = pytest.importorskip("ptxstatic.emulator")
    emulated = emulator.emulate(m, kernel, LAUNCHES[kernel]).counts.counts
    for fn, blocks in result.counts.counts.items():
        assert blocks == {b: emulated.get(fn, {}).get(b, 0.0) for b in blocks}


def ir_and_ptx_routes():
    """The numbered-block IR kernel instrumented by the IR route, then again by the PTX route."""
    llvm_ir = pytest.importorskip("ptxstatic.counts.instrumentation.llvm_ir")
    pytest.importorskip("llvmlite")
    from test_llvm_route import UNNAMED

    ir = llvm_ir.instrument_ir(UNNAMED, "unnamed.ll")
    both = instrument(ir.module, InstrumentOptions(symbol="__ptxstatic_ptx_counters"))
    # one CTA: the kernel writes back into the buffer it reads, indexed by %tid.x
    launch = Launch((1, 1, 1), (300, 1, 1), 0, {"0": Buffer("u32", 300, "random", seed=7), "1": 280})
    return ir, both, launch


def check_routes(ir, ir_counts: dict, ptx_counts: dict) -> None:
    """Each IR block's count is the sum of the PTX-route counts of the PTX blocks holding its counter; the
    loop block %12 is entered bit_length(v) times by each of the first 280 threads whose value v is not 0,
    and block %10 once by each whose value is 0."""
    for c in ir.counters.counters:
        assert ir_counts[c.function][c.block] == sum(ptx_counts[c.function][p] for p in c.ptx_blocks)
    values = np.random.default_rng(7).integers(0, 300, 300)[:280]  # as Buffer 'random' fills u32
    assert [c.label for c in ir.counters.counters[2:5:2]] == ["%10", "%12"]
    assert ir_counts["halvings"][2] == sum(1 for v in values if v == 0)
    assert ir_counts["halvings"][4] == sum(int(v).bit_length() for v in values)


def test_ir_route_counts_match_ptx_route_counts_emulated():
    emulator = pytest.importorskip("ptxstatic.emulator", reason="the PTX emulator is not available")
    ir, both, launch = ir_and_ptx_routes()
    run = emulator.emulate(both.module, "halvings", launch)
    # the IR route's array is declared by LLVM as .b8 bytes: read every array as raw 64-bit words
    raw = {m.symbol: np.frombuffer(run.globals[m.symbol].tobytes(), np.uint64).tolist()
           for m in (ir.counters, both.counters)}
    check_routes(ir, ir.counters.fold(raw[ir.counters.symbol]), both.counters.fold(raw[both.counters.symbol]))


@pytest.mark.gpu
def test_ir_route_counts_match_ptx_route_counts():
    drv = gpu()
    ir, both, launch = ir_and_ptx_routes()
    fn = both.module.function("halvings")
    ir_counts, ptx_counts = run_counters(drv, both.text, "halvings", launch, fn, [ir.counters, both.counters])
    check_routes(ir, ir_counts, ptx_counts)
