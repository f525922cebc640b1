"""What a launch's instructions cost once ptxas has made machine code of them, on CUDA kernels compiled to
committed PTX (tests/data/predict/costs.cu): the loop control that ptxas unrolls away, the wait of a memory
fence by its scope, a warp barrier in converged code, ``match.any``, and the constant cache's passes over the
distinct addresses of a warp's ``ld.const``."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from support.paths import ROOT

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.static import estimate_counts
from ptxstatic.features.work import (
    BARRIER_CLOCKS,
    FENCE_LATENCY,
    MATCH_ANY,
    instruction_cost,
    launch_work,
    unrollable_loop_control,
)
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Launch
from ptxstatic.models.inference.bottleneck import DEFAULT_PARAMETERS, launch_time
from ptxstatic.models.training.bottleneck import WORK_FEATURES, work_features
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.model import launch_traffic
from ptxstatic.traffic.requests import constant_replays

PTX = ROOT / "tests" / "data" / "predict" / "costs.ptx"
H200 = gpu_figures("h200")
ITERS = 4096


@pytest.fixture(scope="module")
def module():
    return parse_file(PTX)


def work(module, kernel: str, iters: int = ITERS, grid: int = 132, block: int = 256):
    args = {"1": iters, **({"2": 1.5} if kernel == "add_chain" else {})}  # (out, iters[, a])
    bound = bind(module, kernel, Launch((grid, 1, 1), (block, 1, 1), args=args))
    counts = estimate_counts(bound).counts
    return launch_work(module, counts, H200, launch_traffic(bound, counts.counts, H200))


def test_the_loop_control_of_the_main_loop_is_unrollable_and_the_remainder_loop_is_not(module) -> None:
    fn = module.function("add_chain")
    cfg = build_cfg(fn)
    found = unrollable_loop_control(fn, cfg)
    assert len(found) == 1  # the remainder loop carries .pragma "nounroll"
    (block, positions), = found.items()
    ins = cfg.blocks[block].instructions
    assert sum(i.opcode == "add.f32" for i in ins) == 4  # nvcc unrolled the chain by four
    assert [ins[k].info.opcode for k in sorted(positions)] == ["add", "setp", "bra"]
    assert all(ins[k].opcode != "add.f32" for k in positions)


def test_the_trip_counter_is_followed_through_the_adds_the_compare_reads(module) -> None:
    fn = module.function("constant_divergent")
    cfg = build_cfg(fn)
    (block, positions), = unrollable_loop_control(fn, cfg).items()
    ins = cfg.blocks[block].instructions
    assert [ins[k].info.opcode for k in sorted(positions)] == ["add", "add", "setp", "bra"]
    assert not any(ins[k].info.is_load for k in positions)


def test_unrolling_takes_the_loop_control_out_of_the_issue_time(module) -> None:
    """The chain of adds at full occupancy is issue-bound: four adds and three instructions of loop control a
    pass through the PTX loop; unrolled further, the loop control runs once every loop_unroll passes."""
    w = work(module, "add_chain", grid=132 * 8)
    assert w.loop_control["issue"] == pytest.approx(w.issue_cycles * 3 / 7, rel=0.02)
    times = {u: launch_time(w, H200, *H200.default_clocks, DEFAULT_PARAMETERS.__class__(
        **{**DEFAULT_PARAMETERS.to_dict(), "loop_unroll": u})).resources_ms["core"] for u in (1.0, 4.0)}
    assert times[4.0] / times[1.0] == pytest.approx((4 + 3 / 4) / 7, rel=0.05)


def test_fp32_arithmetic_takes_one_issue_slot_and_the_other_instructions_issue_scale(module) -> None:
    """Of the chain's seven instructions a pass, the four adds are the FMA pipe's: ``issue_scale`` (what the
    published rates miss for the rest) leaves their slots as they are."""
    w = work(module, "add_chain", grid=132 * 8)
    assert w.fma_issue_cycles == pytest.approx(w.issue_cycles * 4 / 7, rel=0.02)
    assert w.loop_control.get("fma_issue", 0.0) == 0.0
    core = {s: launch_time(w, H200, *H200.default_clocks, replace(DEFAULT_PARAMETERS, loop_unroll=1.0,
                                                                   issue_scale=s)).resources_ms["core"]
            for s in (1.0, 2.0)}
    assert core[2.0] / core[1.0] == pytest.approx((4 + 2 * 3) / 7, rel=0.05)


def test_the_extra_trees_see_the_launch_s_work_by_name(module) -> None:
    w = work(module, "add_chain", grid=132 * 8)
    x = dict(zip(WORK_FEATURES, work_features(w), strict=True))
    assert x["pipe_fma"] == pytest.approx(math.log1p(w.pipe_cycles["fma"]))
    assert x["fma_issue_cycles"] == pytest.approx(math.log1p(w.fma_issue_cycles))
    assert x["threads_per_cta"] == 256 and x["ctas"] == pytest.approx(math.log1p(132 * 8))
    assert x["dram_bytes"] == pytest.approx(math.log1p(w.traffic.steady_dram_bytes.value))


def test_a_device_fence_waits_for_the_store_and_a_block_fence_does_not(module) -> None:
    device, block = (work(module, k).path_cycles for k in ("fence_device", "fence_block"))
    fences = ITERS  # one fence a trip
    assert device["memory"] == pytest.approx(fences * (FENCE_LATENCY["device"] - 1), rel=0.01)
    assert block.get("memory", 0.0) == pytest.approx(fences * (FENCE_LATENCY["cta"] - 1), rel=0.01)
    assert device.get("control", 0.0) == block.get("control", 0.0)  # a fence is not a branch


def test_a_warp_barrier_in_converged_code_is_neither_a_branch_nor_a_wait(module) -> None:
    """Four ``bar.warp.sync`` a pass through the loop, unrolled by four: the branches a thread executes are the
    loops' own (one a pass), and no branch latency grows with the trips but the loop's."""
    w = work(module, "warp_sync")
    branches = w.pipe_cycles["branch"] * H200.rates.control / w.threads
    assert ITERS / 4 <= branches < ITERS / 4 + 8
    assert w.path_cycles["control"] < 100
    assert w.pipe_cycles["alu"] * H200.rates.int_add / w.threads >= ITERS  # they take issue slots


def test_a_cta_barrier_occupies_the_control_pipe_longer_than_a_branch(module) -> None:
    """The warp-barrier loop and the CTA-barrier loop differ in one instruction a trip: the CTA barrier's
    arrival takes BARRIER_CLOCKS of the control pipe (per lane-rate: clocks x 32 lanes per thread)."""
    barrier, warp = (work(module, k) for k in ("block_barrier", "warp_sync"))
    extra = (barrier.pipe_cycles["branch"] - warp.pipe_cycles["branch"]) * H200.rates.control / barrier.threads
    assert extra == pytest.approx(BARRIER_CLOCKS * ITERS, rel=0.01)
    assert barrier.warp_instructions == pytest.approx(warp.warp_instructions, rel=0.01)  # one slot each


def test_match_any_runs_many_clocks_on_the_warp_pipe(module) -> None:
    w = work(module, "match_any")
    per_match = w.pipe_cycles["lsu"] / (132 * 256 * ITERS)  # lane-clocks: the warp pipe's rate is 32 lanes
    assert per_match * 32 == pytest.approx(MATCH_ANY[0], rel=0.05)


def test_divergent_constant_loads_take_a_pass_per_distinct_address(module) -> None:
    """Measured on the emulated sample: 32 distinct words per warp request, 31 passes beyond the first; the
    same word for every lane: none. Without a sample, the stride along %tid.x gives a range that holds them."""
    requests = 132 * 256 // 32 * ITERS
    divergent, uniform = (work(module, k).traffic.constant_replays for k in ("constant_divergent",
                                                                              "constant_uniform"))
    assert divergent.value == pytest.approx(31 * requests, rel=0.01)
    assert uniform.value == uniform.high == 0.0
    for kernel, measured in (("constant_divergent", divergent), ("constant_uniform", uniform)):
        bound = bind(module, kernel, Launch((132, 1, 1), (256, 1, 1), args={"1": ITERS}))
        value, low, high = constant_replays(module, estimate_counts(bound).counts.counts, None)
        assert low <= measured.value <= high
        assert low <= value <= high
    # the divergent index is masked (& 1023), which the stride analysis cannot follow: a range, not a point
    assert (low, high) == (0.0, 0.0)


def test_constant_passes_make_a_divergent_constant_loop_slower_than_a_uniform_one(module) -> None:
    est = {k: launch_time(work(module, k), H200, *H200.default_clocks, DEFAULT_PARAMETERS)
           for k in ("constant_divergent", "constant_uniform")}
    assert est["constant_divergent"].bound == "l1"
    assert est["constant_divergent"].time_ms > 4 * est["constant_uniform"].time_ms


def test_a_load_after_a_store_that_may_alias_waits_for_it(module) -> None:
    """Four copies a thread in one block: without restrict each load issues after the store before it, which
    waits for its own load, so the block's path holds four global latencies; with restrict the loads are
    ld.global.nc and wait together, once."""
    def memory_path(kernel: str) -> float:
        bound = bind(module, kernel, Launch((132, 1, 1), (256, 1, 1), args={}))
        counts = estimate_counts(bound).counts
        return launch_work(module, counts, H200).path_cycles["memory"]

    ordered, free = memory_path("copy_four"), memory_path("copy_four_restrict")
    assert ordered == pytest.approx(4 * free, rel=0.1)


def _loop_block_instructions(module, kernel: str) -> float:
    """Warp instructions a warp issues for one pass through the kernel's unrollable loop (its first)."""
    fn = module.function(kernel)
    cfg = build_cfg(fn)
    (block, _), = unrollable_loop_control(fn, cfg).items()
    return sum(instruction_cost(ins, lambda i: True).count for ins in cfg.blocks[block].instructions)


def test_bit_field_instructions_are_two_machine_instructions(module) -> None:
    """Four passes of bfe, bfi and an add, and the loop control: 4 x (2 + 2 + 1) + 3."""
    assert _loop_block_instructions(module, "bit_field") == 4 * 5 + 3


def test_moves_of_immediates_and_between_registers_cost_nothing(module) -> None:
    """The butterfly's mask and clamp (mov.u32 of immediates) and the float/int reinterpretations (mov.b32
    between registers) are not machine instructions: a pass through the loop issues its shuffles, adds and
    conversions only."""
    fn = module.function("shuffle_reduce")
    cfg = build_cfg(fn)
    (block, _), = unrollable_loop_control(fn, cfg).items()
    ins = cfg.blocks[block].instructions
    moves = [i for i in ins if i.info.opcode == "mov"]
    assert len(moves) > len(ins) / 3  # the PTX is mostly moves
    assert _loop_block_instructions(module, "shuffle_reduce") == len(ins) - len(moves)
