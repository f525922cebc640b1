"""Static block counts where control flow depends on data, on arithmetic that wraps, or on loops too long to
step through, against the functional emulator's counts of the same launch and against counts worked out by
hand (``tests/data/counts/data.cu``; ``MARK(k)`` puts ``pmevent k`` in the block of interest).

Known data is read (buffers with a fill, never written by the kernel); data the interpreter cannot read is
measured on an emulated sample of the launch's CTAs; unknown data gives an interval from what the code
implies; exact counts hold in the GPU's arithmetic (32-bit indices that wrap, 64-bit trip counts)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc

import pytest
from support.paths import DATA

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.counts.static.interp import Interpreter
from ptxstatic.counts.static.markov import block_frequencies
from ptxstatic.emulator import emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file, parse_text

PTX = DATA / "counts" / "data.ptx"
MODULE = parse_file(PTX)


def block(kernel: str, marker: int) -> int:
    """The block holding ``pmevent marker`` in ``kernel``."""
    for b in build_cfg(MODULE.function(kernel)).blocks:
        if any(i.opcode == "pmevent" and int(i.operands[0].text) == marker for i in b.instructions):
            return b.id
    raise AssertionError(f"no marker {marker} in {kernel}")


def estimate(kernel: str, launch: Launch, **kw):
    return estimate_counts(bind(MODULE, kernel, launch), **kw)


def emulated(kernel: str, launch: Launch, **kw) -> dict[int, float]:
    return emulate(MODULE, kernel, launch, outputs=False, **kw).counts.counts[kernel]


def trips_launch(fill: str, **kw) -> Launch:
    return Launch((4, 1, 1), (64, 1, 1), 0, {"0": Buffer("s32", 256, fill, **kw), "1": Buffer("f32", 256), "2": 250})


@pytest.mark.parametrize(("fill", "kw"), [("iota", {}), ("random", {"seed": 3}), ("const", {"value": 37})])
def test_trip_counts_read_from_a_buffer_equal_the_emulator(fill, kw):
    launch = trips_launch(fill, **kw)
    est = estimate("trips_from_buffer", launch)
    assert est.exact
    assert est.counts.counts["trips_from_buffer"] == emulated("trips_from_buffer", launch)
    if fill == "iota":  # thread t < 250 loops t times
        assert est.counts.counts["trips_from_buffer"][block("trips_from_buffer", 0)] == sum(range(250))


def test_a_branch_on_random_floats_in_a_loop_equals_the_emulator():
    launch = Launch((2, 1, 1), (64, 1, 1), 0, {"0": Buffer("f32", 128 * 100, "random", seed=1),
                                               "1": Buffer("s32", 128), "2": 100, "3": 0.25})
    est = estimate("count_above", launch)
    assert est.exact and est.counts.counts["count_above"] == emulated("count_above", launch)


def test_without_the_buffer_the_trip_counts_are_an_estimate_with_an_unbounded_interval():
    est = estimate("trips_from_buffer", Launch((4, 1, 1), (64, 1, 1), 0, {"2": 250}))
    b = block("trips_from_buffer", 0)
    assert not est.counts.exact["trips_from_buffer"][b]
    assert est.counts.interval("trips_from_buffer", b) == (0.0, float("inf"))
    assert est.executed()["high"] is None


def test_unknown_data_gives_an_interval_that_holds_a_short_and_a_long_run():
    n, launch = 1000, Launch((2, 1, 1), (32, 1, 1), 0, {"1": Buffer("s32", 64), "2": 1000})
    est = estimate("find_zero", launch)
    b = block("find_zero", 2)
    low, high = est.counts.interval("find_zero", b)
    assert (low, high) == (0.0, 64 * n)  # the loop runs at most n times per thread: the code says so
    total = est.executed()
    for fill in ("zeros", "ones"):  # the first element is 0: no step; no 0 at all: n steps per thread
        data = Launch(launch.grid, launch.block, 0, {**launch.args, "0": Buffer("s32", 64 * n, fill)})
        run = emulated("find_zero", data)
        assert low <= run[b] <= high
        assert total["low"] <= sum(run.values()) <= total["high"]
        assert estimate("find_zero", data).counts.counts["find_zero"] == run  # given the data: exact


@pytest.mark.parametrize(("ctas", "fill"), [(4, "iota"), (256, "random")])
def test_data_staged_through_shared_memory_is_measured_on_an_emulated_sample(ctas, fill):
    launch = Launch((ctas, 1, 1), (256, 1, 1), 0, {"0": Buffer("s32", 256 * ctas, fill, seed=5),
                                                   "1": Buffer("s32", 256 * ctas), "2": 256 * ctas - 24})
    est = estimate("staged_branch", launch)
    b = block("staged_branch", 3)
    truth = emulated("staged_branch", launch)[b]
    assert "emulated sample" in est.method and not est.counts.exact["staged_branch"][b]
    assert est.reasons["staged_branch"][b].endswith("split as in the emulated sample")
    low, high = est.counts.interval("staged_branch", b)
    assert low <= truth <= high
    if ctas == 4:  # every CTA emulated: the branch splits as the launch does
        assert est.counts.counts["staged_branch"][b] == truth
    else:
        assert est.counts.counts["staged_branch"][b] == pytest.approx(truth, rel=0.1)
        assert est.stderr["staged_branch"][b] > 0


def test_a_32_bit_index_that_wraps_is_counted_in_the_gpus_arithmetic():
    # 4194305 CTAs of 1024 threads: i = blockIdx.x * 1024 + threadIdx.x wraps past 2^31 (negative: below n)
    # and past 2^32 (CTA 4194304 counts 0, 1, ... again)
    launch = Launch((4194305, 1, 1), (1024, 1, 1), 0, {"1": 100})
    signed = estimate("guard_wrap", launch)
    unsigned = estimate("guard_wrap_unsigned", launch)
    assert signed.counts.counts["guard_wrap"][block("guard_wrap", 4)] == 2**31 + 200
    assert unsigned.counts.counts["guard_wrap_unsigned"][block("guard_wrap_unsigned", 7)] == 200
    assert signed.exact and unsigned.exact
    # the per-CTA pieces of that sum, on the emulator: CTAs 0 and 4194304 give 100, 2097151 none, 2097152 all
    big = Launch(launch.grid, launch.block, 0, {"0": Buffer("f32", 1 << 20), "1": 100})
    for cta, expected in [(0, 100), (2097151, 0), (4194304, 100)]:
        assert emulated("guard_wrap", big, ctas=[(cta, 0, 0)], partial=True)[block("guard_wrap", 4)] == expected


def test_an_unsigned_stride_that_wraps_every_16_ctas():
    launch = Launch((17, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 32), "1": 268435456, "2": 32})
    est = estimate("stride_wrap", launch)
    b = block("stride_wrap", 5)
    assert est.exact and est.counts.counts["stride_wrap"][b] == emulated("stride_wrap", launch)[b] == 64


@pytest.mark.parametrize("m", [10**15, 2**53 + 1, 2**62 + 7])
def test_a_64_bit_trip_count_is_counted_exactly_as_a_whole_number(m):
    est = estimate("long_trips", Launch((1, 1, 1), (100, 1, 1), 0, {"1": m}))
    count = est.counts.counts["long_trips"][block("long_trips", 6)]
    assert est.exact and isinstance(count, int) and count == 100 * m


def test_a_triangular_nest_bounded_by_parameters_is_counted_in_closed_form():
    small = Launch((2, 1, 1), (32, 1, 1), 0, {"0": Buffer("f32", 64 * 40), "1": Buffer("f32", 64 * 64),
                                              "2": 64, "3": 40})
    assert estimate("pair_sums", small).counts.counts["pair_sums"] == emulated("pair_sums", small)
    started = time.process_time()
    est = estimate("pair_sums", Launch((8, 1, 1), (256, 1, 1), 0, {"2": 2048, "3": 2048}))
    assert time.process_time() - started < 1.5
    assert est.exact and est.counts.counts["pair_sums"][block("pair_sums", 8)] == 2047 * 2048 // 2 * 2048


def test_iterations_that_differ_are_sampled_and_extrapolated_within_their_interval():
    launch = Launch((1, 1, 1), (64, 1, 1), 0, {"0": Buffer("f32", 64), "1": 3000})
    est = estimate("hash_switch", launch)
    truth = emulated("hash_switch", launch)
    header = block("hash_switch", 9)
    assert est.counts.exact["hash_switch"][header] and est.counts.counts["hash_switch"][header] == 64 * 3000
    for marker in (10, 11, 12, 13):
        b = block("hash_switch", marker)
        assert "extrapolated" in est.reasons["hash_switch"][b]
        low, high = est.counts.interval("hash_switch", b)
        assert low <= truth[b] <= high and high - low < 64 * 3000 / 2
        assert est.counts.counts["hash_switch"][b] == pytest.approx(truth[b], rel=0.1)
    assert est.executed()["count"] == pytest.approx(sum(truth.values()), rel=0.02)


def branchy_ptx(sections: int) -> str:
    """A kernel with a branch on loaded data every ten lines."""
    body = "".join(f"\tsetp.gt.f32 %p{k}, %f1, 0f3F000000;\n\t@%p{k} bra $L_{k};\n"
                   + "".join(f"\tadd.f32 %f{8 * k + j + 2}, %f1, 0f3F800000;\n" for j in range(7)) + f"$L_{k}:\n"
                   for k in range(sections))
    return (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry branchy(.param .u64 p)\n{\n"
            f"\t.reg .pred %p<{sections}>;\n\t.reg .f32 %f<{8 * sections + 2}>;\n\t.reg .b64 %rd<3>;\n"
            "\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tld.global.f32 %f1, [%rd2];\n"
            f"{body}\tret;\n}}\n")


def test_the_fallback_is_linear_in_the_blocks():
    module = parse_text(branchy_ptx(5000), "branchy.ptx")  # 10,001 blocks: a dense solve needs 800 MB
    plan = Interpreter(module, {}).plan("branchy")
    tracemalloc.start()
    freq = block_frequencies(plan)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20
    assert freq[plan.cfg.entry] == 1.0 and sorted(set(freq.round(12))) == [0.5, 1.0]
    est = estimate_counts(bind(module, "branchy", Launch((1, 1, 1), (32, 1, 1))), max_seconds=0.2)
    assert "branch-probability" in est.method and est.executed()["count"] == pytest.approx(32 * 1.5 * 5000 + 32, 1e-6)


def test_blocks_shows_the_interval_in_text_and_json():
    args = [sys.executable, "-m", "ptxstatic", "blocks", str(PTX), "-k", "find_zero", "--grid", "2", "--block", "32",
            "--param", "n=1000"]
    text = subprocess.run(args, capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "estimated [0, 64000]" in text.stdout and "executed blocks:" in text.stdout
    out = subprocess.run([*args, "--format", "json"], capture_output=True, text=True)
    entry = json.loads(out.stdout)["kernels"][0]
    b = str(block("find_zero", 2))
    assert entry["low"]["find_zero"][b] == 0 and entry["high"]["find_zero"][b] == 64000
    assert entry["executed"]["low"] + 64000 <= entry["executed"]["high"] < float("inf")
