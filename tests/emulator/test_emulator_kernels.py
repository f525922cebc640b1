"""The emulator on real nvcc output (tests/data/emulator/kernels.cu): outputs against numpy references
computed from the inputs, and block-entry counts against counts derived by hand from the CUDA source.

Blocks are found through ``-lineinfo``: a source line tagged ``// @name`` in kernels.cu, plus an opcode the
block must hold (one source line can spread over several blocks). Output checks run on all three PTX
variants (-O3, -O3 -lineinfo, -G), count checks on the -lineinfo one.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from support.paths import DATA as TEST_DATA

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.emulator import EMULATED, Emulation, emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.ast import Module
from ptxstatic.ptx.parser import parse_file

DATA = TEST_DATA / "emulator"
VARIANTS = ("plain", "lineinfo", "G")
RNG = np.random.default_rng(20240611)


@cache
def module(variant: str) -> Module:
    return parse_file(DATA / f"kernels_sm80_{variant}.ptx")


@cache
def anchors() -> dict[str, int]:
    lines = (DATA / "kernels.cu").read_text().splitlines()
    return {m.group(1): i + 1 for i, line in enumerate(lines) if (m := re.search(r"\S.*// @(\w+)$", line))}


def block_count(e: Emulation, anchor: str, opcode: str, function: str | None = None) -> float:
    """Thread entries of the one block holding code of the tagged line and an instruction ``opcode...``."""
    fn_name = function or e.kernel
    line = anchors()[anchor]
    fn = module("lineinfo").function(fn_name)
    found = [
        b.id for b in build_cfg(fn).blocks
        if any(i.loc and i.loc.line == line and i.loc.file.endswith("kernels.cu") for i in b.instructions)
        and any(i.opcode.startswith(opcode) for i in b.instructions)
    ]
    assert len(found) == 1, f"{anchor}/{opcode}: blocks {found}"
    return e.counts.of(fn_name)[found[0]]


def launch(grid: int, block: int, args: dict, shared: int = 0) -> Launch:
    return Launch((grid, 1, 1), (block, 1, 1), shared, args)


def entry_count(e: Emulation) -> float:
    return e.counts.of(e.kernel)[0]


# ------------------------------------------------------------------------------------------ kernels
@pytest.mark.parametrize("variant", VARIANTS)
def test_vec_add(variant: str) -> None:
    n = 1000
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    spec = launch(4, 256, {"0": Buffer("f32", n), "1": Buffer("f32", n), "2": Buffer("f32", n), "3": n})
    e = emulate(module(variant), "vec_add", spec, inputs={"0": a, "1": b})
    np.testing.assert_array_equal(e.buffers["vec_add_param_2"], a + b)
    assert e.counts.source == EMULATED
    if variant == "lineinfo":
        assert entry_count(e) == 4 * 256
        assert block_count(e, "vec_add_body", "st.global") == n


@pytest.mark.parametrize("variant", VARIANTS)
def test_saxpy_guard_with_partial_last_block(variant: str) -> None:
    n, alpha = 300, np.float32(2.5)  # 3 blocks of 128 threads: the last one is partly idle
    x, y = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    spec = launch(3, 128, {"0": n, "1": float(alpha), "2": Buffer("f32", n), "3": Buffer("f32", n)})
    e = emulate(module(variant), "saxpy", spec, inputs={"2": x, "3": y})
    expect = (np.float64(alpha) * x + y).astype(np.float32)
    np.testing.assert_allclose(e.buffers["saxpy_param_3"], expect, rtol=1e-6)
    np.testing.assert_array_equal(e.buffers["saxpy_param_2"], x)
    if variant == "lineinfo":
        assert block_count(e, "saxpy_body", "st.global") == n


def tree_sum(values: np.ndarray) -> np.float32:
    """The float32 sum in the order of block_sum's shared-memory tree."""
    v = values.astype(np.float32).copy()
    s = len(v) // 2
    while s > 0:
        v[:s] = v[:s] + v[s: 2 * s]
        s //= 2
    return v[0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_shared_memory_tree_reduction(variant: str) -> None:
    n, blocks, threads = 500, 4, 128
    x = RNG.random(n, dtype=np.float32)
    spec = launch(blocks, threads, {"0": Buffer("f32", n), "1": Buffer("f32", blocks), "2": n}, shared=4 * threads)
    e = emulate(module(variant), "block_sum", spec, inputs={"0": x})
    padded = np.zeros(blocks * threads, dtype=np.float32)
    padded[:n] = x
    expect = [tree_sum(padded[b * threads: (b + 1) * threads]) for b in range(blocks)]
    np.testing.assert_array_equal(e.buffers["block_sum_param_1"], expect)
    if variant == "lineinfo":
        levels = int(np.log2(threads))
        assert block_count(e, "tree_add", "setp") == blocks * threads * levels  # every thread tests tid < s
        assert block_count(e, "tree_add", "add.f32") == blocks * (threads - 1)  # s threads add at level s
        assert block_count(e, "block_sum_store", "st.global") == blocks


@pytest.mark.parametrize("variant", VARIANTS)
def test_warp_shuffle_reduction(variant: str) -> None:
    threads = 2 * 128
    x = RNG.integers(-1000, 1000, threads).astype(np.int32)
    spec = launch(2, 128, {"0": Buffer("s32", threads), "1": Buffer("s32", threads // 32)})
    e = emulate(module(variant), "warp_sum", spec, inputs={"0": x})
    np.testing.assert_array_equal(e.buffers["warp_sum_param_1"], x.reshape(-1, 32).sum(axis=1))
    if variant == "lineinfo":
        assert block_count(e, "warp_sum_store", "st.global") == threads // 32


@pytest.mark.parametrize("variant", VARIANTS)
def test_warp_vote_and_butterfly(variant: str) -> None:
    threads = 128
    x = RNG.integers(-50, 50, threads).astype(np.int32)
    args = {"0": Buffer("s32", threads), "1": Buffer("s32", 4), "2": Buffer("u32", 4), "3": Buffer("s32", threads)}
    e = emulate(module(variant), "warp_vote", launch(2, 64, args), inputs={"0": x})
    warps = x.reshape(-1, 32)
    np.testing.assert_array_equal(e.buffers["warp_vote_param_1"], warps.max(axis=1))
    ballots = [sum(1 << k for k in range(32) if w[k] > 0) for w in warps]
    np.testing.assert_array_equal(e.buffers["warp_vote_param_2"], ballots)
    below = [int(np.count_nonzero(w[:k] > 0)) for w in warps for k in range(32)]
    np.testing.assert_array_equal(e.buffers["warp_vote_param_3"], below)


@pytest.mark.parametrize("kernel", ["histogram", "histogram_shared"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_atomic_histograms_with_grid_stride_loop(kernel: str, variant: str) -> None:
    n, bins, blocks, threads = 1000, 16, 3, 64
    data = RNG.integers(0, 1 << 20, n).astype(np.int32)
    spec = launch(blocks, threads, {"0": Buffer("s32", n), "1": n, "2": Buffer("u32", bins), "3": bins})
    e = emulate(module(variant), kernel, spec, inputs={"0": data})
    np.testing.assert_array_equal(e.buffers[f"{kernel}_param_2"], np.bincount(data % bins, minlength=bins))
    if variant == "lineinfo" and kernel == "histogram":
        assert block_count(e, "hist_atomic", "atom.global") == n
    if variant == "lineinfo" and kernel == "histogram_shared":
        counts = e.counts.of(kernel)
        fn = module("lineinfo").function(kernel)
        atoms = {op: sum(counts[b.id] for b in build_cfg(fn).blocks for i in b.instructions if i.opcode.startswith(op))
                 for op in ("atom.shared", "red.shared", "atom.global", "red.global")}
        assert atoms["atom.shared"] + atoms["red.shared"] == n  # one shared atomic per element
        assert atoms["atom.global"] + atoms["red.global"] == blocks * bins  # one flush per bin per block


@pytest.mark.parametrize("variant", VARIANTS)
def test_nested_loops_with_trip_counts_from_parameters(variant: str) -> None:
    n, m, threads = 5, 7, 128
    spec = launch(2, 64, {"0": Buffer("f32", threads), "1": n, "2": m})
    e = emulate(module(variant), "nested_loops", spec)
    t = np.arange(threads)
    acc = np.zeros(threads, dtype=np.float32)
    for i in range(n):
        for j in range(m):
            acc = acc + (i * j + t).astype(np.float32)
    np.testing.assert_array_equal(e.buffers["nested_loops_param_0"], acc)
    if variant == "lineinfo":
        assert block_count(e, "nested_inner", "add.f32") == n * m * threads


@pytest.mark.parametrize("variant", VARIANTS)
def test_divergent_if_else_on_thread_index(variant: str) -> None:
    blocks, threads = 2, 64
    x = RNG.integers(-100, 100, threads).astype(np.int32)
    spec = launch(blocks, threads, {"0": Buffer("s32", threads), "1": Buffer("s32", blocks * threads)})
    e = emulate(module(variant), "divergent", spec, inputs={"0": x})
    t = np.arange(threads)
    then = np.array([x[: k % 5].sum() for k in t])
    expect = np.where(t % 3 == 0, then, x * 2 - t).astype(np.int32)
    np.testing.assert_array_equal(e.buffers["divergent_param_1"], np.tile(expect, blocks))
    if variant == "lineinfo":
        assert block_count(e, "div_then_loop", "ld.global") == blocks * sum(k % 5 for k in t if k % 3 == 0)
        assert block_count(e, "div_else", "ld.global") == blocks * np.count_nonzero(t % 3)


@pytest.mark.parametrize("variant", VARIANTS)
def test_noinline_device_function_call(variant: str) -> None:
    n, degree = 100, 5
    x = RNG.random(n, dtype=np.float32)
    spec = launch(2, 64, {"0": Buffer("f32", n), "1": Buffer("f32", n), "2": n, "3": degree})
    e = emulate(module(variant), "call_poly", spec, inputs={"0": x})
    trips = degree + (np.arange(n) & 1)
    expect = np.ones(n, dtype=np.float32)
    for k in range(trips.max()):
        expect = np.where(k < trips, (expect.astype(np.float64) * x + 1).astype(np.float32), expect)
    np.testing.assert_allclose(e.buffers["call_poly_param_1"], expect, rtol=1e-6)
    if variant == "lineinfo":
        callee = next(f.name for f in module("lineinfo").functions if "poly" in f.name and not f.is_kernel)
        assert e.counts.of(callee)[0] == n  # entered once per thread with i < n
        assert block_count(e, "poly_loop", "fma", callee) == trips.sum()


@pytest.mark.parametrize("variant", VARIANTS)
def test_grid_stride_loop(variant: str) -> None:
    n = 1000
    x = RNG.random(n, dtype=np.float32)
    e = emulate(module(variant), "grid_stride", launch(2, 64, {"0": Buffer("f32", n), "1": Buffer("f32", n), "2": n}),
                inputs={"0": x})
    np.testing.assert_array_equal(e.buffers["grid_stride_param_1"], 2 * x + 1)
    if variant == "lineinfo":
        assert block_count(e, "grid_stride_body", "st.global") == n


@pytest.mark.parametrize("variant", VARIANTS)
def test_early_return(variant: str) -> None:
    n = 100
    v = RNG.integers(-3, 12, n).astype(np.int32)
    spec = launch(2, 64, {"0": Buffer("s32", n), "1": Buffer("s32", n), "2": n})
    e = emulate(module(variant), "early_return", spec, inputs={"0": v})
    expect = np.array([-1 if k < 0 else sum(j * j for j in range(k)) for k in v], dtype=np.int32)
    np.testing.assert_array_equal(e.buffers["early_return_param_1"], expect)
    if variant == "lineinfo":
        assert block_count(e, "early_negative", "st.global") == np.count_nonzero(v < 0)
        assert block_count(e, "early_loop", "add") == v[v > 0].sum()


@pytest.mark.parametrize("variant", VARIANTS)
def test_local_memory_array(variant: str) -> None:
    threads = 128
    idx = RNG.integers(0, 1 << 16, threads).astype(np.int32)
    spec = launch(2, 64, {"0": Buffer("s32", threads), "1": Buffer("s32", threads)})
    e = emulate(module(variant), "local_array", spec, inputs={"0": idx})
    t = np.arange(threads)
    np.testing.assert_array_equal(e.buffers["local_array_param_1"], (idx & 15) ** 2 + t)


@pytest.mark.parametrize("variant", VARIANTS)
def test_constant_memory_and_device_variable(variant: str) -> None:
    threads = 128
    x = RNG.random(threads, dtype=np.float32)
    c = RNG.random(4, dtype=np.float32)
    spec = launch(2, 64, {"0": Buffer("f32", threads), "1": Buffer("f32", threads)})
    e = emulate(module(variant), "constants", spec, inputs={"0": x}, symbols={"coeffs": c})
    expect = ((c[3] * x.astype(np.float64) + c[2]) * x + c[1]) * x + c[0]
    np.testing.assert_allclose(e.buffers["constants_param_1"], expect, rtol=1e-6)
    assert e.globals["total"].tolist() == [threads * (threads - 1) // 2]


def test_instruction_counts_follow_block_counts() -> None:
    n = 1000
    e = emulate(module("plain"), "vec_add", launch(4, 256, {"0": Buffer("f32", n), "1": Buffer("f32", n),
                                                           "2": Buffer("f32", n), "3": n}))
    blocks = build_cfg(module("plain").function("vec_add")).blocks
    counts = e.counts.of("vec_add")
    assert e.thread_instructions == sum(counts[b.id] * len(b) for b in blocks)
    assert e.instructions["add.f32"] == n
    assert e.warp_instructions == sum(e.warp_entries["vec_add"][b.id] * len(b) for b in blocks)


def test_fresh_nvcc_build_gives_the_same_results(build_ptx) -> None:
    """kernels.cu recompiled now: same outputs and the same counts as the committed PTX."""
    fresh = build_ptx(DATA / "kernels.cu", "sm_80", ["-O3", "-lineinfo"], name="fresh.ptx").module
    n = 500
    x = RNG.integers(-3, 12, n).astype(np.int32)
    spec = launch(4, 128, {"0": Buffer("s32", n), "1": Buffer("s32", n), "2": n})
    old = emulate(module("lineinfo"), "early_return", spec, inputs={"0": x})
    new = emulate(fresh, "early_return", spec, inputs={"0": x})
    np.testing.assert_array_equal(old.buffers["early_return_param_1"], new.buffers["early_return_param_1"])
    assert old.thread_instructions == new.thread_instructions


def test_instrumented_counters_equal_emulated_counts() -> None:
    """The block counters of the instrumentation pass, run in the emulator, equal its own block counts."""
    from ptxstatic.counts.instrumentation.ptx_pass import instrument

    inst = instrument(module("lineinfo"))
    n = 100
    x = RNG.integers(-3, 12, n).astype(np.int32)
    cases = {
        "early_return": (launch(2, 64, {"0": Buffer("s32", n), "1": Buffer("s32", n), "2": n}), {"0": x}),
        "call_poly": (launch(2, 64, {"0": Buffer("f32", n), "1": Buffer("f32", n), "2": n, "3": 4}), {}),
        "block_sum": (launch(2, 128, {"0": Buffer("f32", n), "1": Buffer("f32", 2), "2": n}, shared=512), {}),
    }
    for name, (spec, inputs) in cases.items():
        want = emulate(module("lineinfo"), name, spec, inputs=inputs)
        got = emulate(inst.module, name, spec, inputs=inputs)
        folded = inst.counters.fold(got.globals[inst.counters.symbol].tolist())
        for fn, blocks in want.counts.counts.items():
            assert {b: float(c) for b, c in folded[fn].items()} == blocks, f"{name}/{fn}"
        for buf, data in want.buffers.items():
            np.testing.assert_array_equal(got.buffers[buf], data)
