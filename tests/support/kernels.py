"""Hand-written kernels whose block counts are known, and their launches: run on the emulator by
tests/counts and on a GPU by tests/gpu_hardware."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.launch import Buffer, Launch

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


LAUNCHES = {
    "loop_sum": Launch((4, 1, 1), (64, 1, 1), 0, {"0": Buffer("f32", 256 * 7, "random", seed=1),
                                                  "1": Buffer("f32", 256, output=True), "2": 7}),
    "shared_reduce": Launch((4, 1, 1), (256, 1, 1), 0, {"0": Buffer("f32", 1024, "iota"),
                                                        "1": Buffer("f32", 4, output=True)}),
    "switch_dispatch": Launch((2, 1, 1), (128, 1, 1), 0, {
        "0": Buffer("u32", 256, "random", seed=3), "1": Buffer("u32", 256, "iota"),
        "2": Buffer("u32", 256, "random", seed=4), "3": Buffer("u32", 256, output=True)}),
}


#: clang -O0 style: unnamed arguments, an implicit entry block (%2) and numbered blocks, a two-phi loop,
#: and a block that is nothing but a branch (which the back end would drop if it held no counter)
UNNAMED = """\
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define ptx_kernel void @halvings(ptr addrspace(1) %0, i32 %1) {
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = icmp slt i32 %3, %1
  br i1 %4, label %5, label %19

5:                                                ; preds = %2
  %6 = zext i32 %3 to i64
  %7 = getelementptr inbounds i32, ptr addrspace(1) %0, i64 %6
  %8 = load i32, ptr addrspace(1) %7, align 4
  %9 = icmp eq i32 %8, 0
  br i1 %9, label %10, label %11

10:                                               ; preds = %5
  store i32 -1, ptr addrspace(1) %7, align 4
  br label %19

11:                                               ; preds = %5
  br label %12

12:                                               ; preds = %12, %11
  %13 = phi i32 [ 0, %11 ], [ %15, %12 ]
  %14 = phi i32 [ %8, %11 ], [ %16, %12 ]
  %15 = add i32 %13, 1
  %16 = lshr i32 %14, 1
  %17 = icmp ne i32 %16, 0
  br i1 %17, label %12, label %18

18:                                               ; preds = %12
  store i32 %15, ptr addrspace(1) %7, align 4
  br label %19

19:                                               ; preds = %18, %10, %2
  ret void
}
"""


def ir_and_ptx_routes():
    """The numbered-block IR kernel instrumented by the IR route, then again by the PTX route."""
    llvm_ir = pytest.importorskip("ptxstatic.counts.instrumentation.llvm_ir")
    pytest.importorskip("llvmlite")
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
