"""The memory traffic model on kernels whose traffic is worked out by hand (tests/data/traffic/traffic.cu, PTX
by nvcc for sm_90): per instruction the requests and sectors (measured on the emulated sample, or from the
address's stride), L1 hits, L2 sectors and DRAM bytes per launch on the H200's figures."""

from __future__ import annotations

import pytest
from support.paths import DATA, needs_ptxas

from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.features.work import launch_work
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Buffer, Launch
from ptxstatic.models.inference.bottleneck import BottleneckParameters, resource_times
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.atomics import busy_slices
from ptxstatic.traffic.model import launch_traffic
from ptxstatic.traffic.requests import instruction_traffic
from ptxstatic.traffic.spills import register_cap

PTX = DATA / "traffic" / "traffic.ptx"
H200 = gpu_figures("h200")
MIB = 1 << 20


@pytest.fixture(scope="module")
def module():
    return parse_file(PTX)


def traffic(module, kernel: str, grid: int, block: int, args: dict, gpu=H200):
    bound = bind(module, kernel, Launch((grid, 1, 1), (block, 1, 1), 0, args))
    return launch_traffic(bound, estimate_counts(bound).counts.counts, gpu)


def loads(t):
    return [i for i in t.instructions if i.kind == "load" and i.space == "global"]


def test_a_coalesced_copy_moves_each_byte_once(module):
    n = 1 << 20
    t = traffic(module, "row_copy", n // 256, 256, {"in": Buffer("f32", n, "random"),
                                                     "out": Buffer("f32", n, output=True), "n": n})
    (ld,) = loads(t)
    assert (ld.requests, ld.cost, ld.ideal, ld.method) == (n / 32, 4.0, 4.0, "emulated")
    assert t.l1_sectors.value == 2 * n / 8  # 4 sectors for each 32 floats, read and written
    assert t.l2_read_sectors.value == t.l2_write_sectors.value == n / 8
    assert t.dram_read_bytes.value == pytest.approx(4 * MIB, rel=1e-6)
    assert sum(b.written_back.value for b in t.buffers) == pytest.approx(4 * MIB, rel=1e-6)
    # 4 MiB written fit in what the H200's L2 keeps dirty at the end of a kernel: none is written back in it
    assert t.dram_write_bytes.value == 0.0


@pytest.mark.parametrize("cols_by", ["cols", "3", "column_walk_param_3"])
def test_a_column_walk_costs_a_sector_per_element_in_l1_and_its_bytes_once_in_dram(module, cols_by: str):
    """4096 rows of 64 floats, one row per lane: each request touches 32 sectors (4 would do), and the next 7
    columns of each row are in the sector already brought: L1 hits 7 of 8, L2 and DRAM see each byte once.
    The row length is given by the kernel's C++ parameter name, its index or its PTX name."""
    rows, cols = 4096, 64
    t = traffic(module, "column_walk", rows // 128, 128, {"m": Buffer("f32", rows * cols, "random"),
                                                           "sums": Buffer("f32", rows, output=True),
                                                           "rows": rows, cols_by: cols})
    reached = [i for i in loads(t) if i.requests]  # the loop unrolled four times: four loads
    assert {(i.cost, i.ideal, i.stride) for i in reached} == {(32.0, 4.0, cols * 4)}
    assert sum(i.requests for i in reached) == rows / 32 * cols
    assert t.l2_read_sectors.value == pytest.approx(sum(i.sectors for i in reached) / 8)  # L1 hits 7 of 8
    assert t.l2_read_sectors.value == pytest.approx(rows * cols / 8)
    assert t.dram_read_bytes.value == pytest.approx(rows * cols * 4, rel=1e-3)


def test_stores_written_in_part_are_counted_beyond_their_bytes_worth(module):
    """The naive transpose stores one float per lane down a column: 32 sectors a request where its 128 bytes
    would fill 4, so 28 a request are written in part; the tiled transpose's stores fill their sectors."""
    width = 1024
    args = {"in": Buffer("f32", width * width, "random"), "out": Buffer("f32", width * width, output=True),
            "width": width}

    def launched(kernel: str):
        bound = bind(module, kernel, Launch((width // 32, width // 32, 1), (32, 8, 1), 0, args))
        return launch_traffic(bound, estimate_counts(bound).counts.counts, H200)

    requests = width * width / 32
    assert launched("transpose_naive").l2_partial_write_sectors.value == pytest.approx(28 * requests)
    assert launched("transpose_tiled").l2_partial_write_sectors.value == 0.0


def test_a_broadcast_is_one_sector_a_request_and_read_once_from_dram(module):
    """256 CTAs of 256 threads all read the same 256 floats: one sector a request; each SM's L1 misses each
    of the vector's 32 sectors once, and DRAM reads its 1 KiB once."""
    n, length = 1 << 16, 256
    t = traffic(module, "broadcast", n // 256, 256, {"x": Buffer("f32", length, "random"),
                                                      "out": Buffer("f32", n, output=True), "n": n, "len": length})
    reached = [i for i in loads(t) if i.requests]  # the loop unrolled four times
    assert {i.cost for i in reached} == {1.0}
    assert sum(i.requests for i in reached) == pytest.approx(n / 32 * length)
    # each CTA asks for 8 warps x 256 sectors, of which its SM's L1 misses the vector's 32: once per CTA
    assert t.l2_read_sectors.value == pytest.approx(32 * n / 256)
    x = next(b for b in t.buffers if b.name == "broadcast_param_0")
    assert x.dram_read_bytes.value == pytest.approx(length * 4)


def test_a_stencil_reads_its_neighbours_from_l1_and_its_input_once_from_dram(module):
    n = 1 << 20
    t = traffic(module, "stencil3", n // 256, 256, {"in": Buffer("f32", n, "random"),
                                                     "out": Buffer("f32", n, output=True), "n": n})
    costs = sorted(i.cost for i in loads(t))
    # in[i] aligned, in[i - 1] and in[i + 1] over two lines (the first lane of the grid takes no part)
    assert costs == pytest.approx([4.0, 5.0, 5.0], abs=0.05)
    # the input's sectors once each, and the two at each CTA's ends twice: the neighbouring CTA, on another SM,
    # reads them too (34 sectors for a CTA's 32)
    assert t.l2_read_sectors.value == pytest.approx(n / 8 * 34 / 32, rel=0.01)
    assert t.dram_read_bytes.value == pytest.approx(4 * MIB, rel=0.01)


def test_without_a_sample_the_figures_come_from_the_stride_and_say_so(module):
    """Instructions the sample did not reach: a constant stride gives the exact figures of 32 lanes; a stride
    uniform but not a constant (the column walk's cols) is judged uncoalesced with the assumption said."""
    counts = {fn.name: {b: 1024.0 for b in range(40)} for fn in module.kernels}
    by_kernel = {i.function: i for i in instruction_traffic(module, counts, None) if i.kind == "load"}
    copy, walk, bcast = by_kernel["row_copy"], by_kernel["column_walk"], by_kernel["broadcast"]
    assert (copy.method, copy.stride, copy.cost) == ("stride", 4, 4.0)
    assert (bcast.method, bcast.stride, bcast.cost) == ("stride", 0, 1.0)
    assert (walk.method, walk.stride, walk.cost, walk.cost_low) == ("stride", "uniform", 32.0, 4.0)
    assert "uniform but not a constant" in walk.assumption and "assumed" in walk.assumption


def test_on_maxwell_plain_loads_skip_l1_and_a_sector_read_again_late_leaves_l2(module):
    """Each lane sums its own row of 256 floats (the loop unrolled four times): 65,536 rows in CTAs of 128,
    16 resident per SM of the GTX Titan X, 1,536 warps at a time. Its plain loads are cached in L2 only
    there: every one of the 8 reads of a sector goes to L2 (the H200's L1 serves 7 of them). A warp reads a
    sector again after its own 32 sectors of the previous load, the whole GPU after 1,536 x 32 x 32 bytes =
    1.5 MiB: within the half of the 3 MiB L2 taken as usable (DRAM reads the footprint once), beyond the
    lowest share, 35 %: there 2 - 1.5 / 1.05 = 57 % of the 7 reads again are still in L2, so the high end
    of the DRAM interval is the footprint x (1 + 7 x 0.43)."""
    rows, cols = 1 << 16, 256
    args = {"a": Buffer("f32", rows * cols, "random"), "y": Buffer("f32", rows, output=True), "rows": rows,
            "cols": cols}
    footprint = rows * cols * 4
    titanx = traffic(module, "row_sum_plain", rows // 128, 128, args, gpu_figures("gtxtitanx"))
    assert all(titanx.l1_hit[(i.function, i.index)] == 0.0 for i in loads(titanx) if i.requests)
    assert titanx.l2_read_sectors.value == pytest.approx(8 * footprint / 32, rel=0.01)
    a = next(b for b in titanx.buffers if b.name.endswith("param_0"))
    assert a.dram_read_bytes.value == pytest.approx(footprint, rel=0.01)
    assert a.dram_read_bytes.low == pytest.approx(footprint, rel=0.01)
    assert a.dram_read_bytes.high == pytest.approx(footprint * (1 + 7 * (1 - (2 - 1.5 / 1.05))), rel=0.02)
    h200 = traffic(module, "row_sum_plain", rows // 128, 128, args)
    assert h200.l2_read_sectors.value < 0.3 * titanx.l2_read_sectors.value


@pytest.mark.parametrize(("slots", "lines"), [(16, 1.0), (1024, 32.0), (1 << 18, 8192.0)])
def test_atomics_spread_over_the_lines_their_slots_fill(module, slots: int, lines: float):
    """1024 CTAs of 256 threads add to slot global_id % slots: 16 slots are one line all CTAs share, 1024
    slots 32 lines (each sampled CTA eight of its own, the buffer holds 32), 2^18 slots 8192 lines (each CTA
    eight of its own over the whole grid)."""
    t = traffic(module, "atomic_slots", 1024, 256, {"counts": Buffer("u32", slots, output=True),
                                                     "slots": slots, "iters": 4})
    assert t.l2_atomic_lines == pytest.approx(lines)
    assert t.l2_atomic_sectors.value == pytest.approx(1024 * 8 * 4 * (2 if slots == 16 else 4))


def test_atomics_on_one_line_take_one_slice_and_spread_ones_many():
    assert busy_slices(1.0, 64) == 1.0
    assert busy_slices(32.0, 64) == pytest.approx(11.8, abs=0.3)  # 32 lines: the busiest slice gets ~2.7
    many = [busy_slices(n, 64) for n in (2, 8, 64, 1024, 1 << 16, 1 << 22)]
    assert many == sorted(many) and 60 < many[-1] < 64


def test_a_hot_counter_costs_far_more_l2_time_per_atomic_than_spread_slots(module):
    params = BottleneckParameters()
    per_sector = []
    for slots in (16, 1 << 18):
        bound = bind(module, "atomic_slots", Launch((1024, 1, 1), (256, 1, 1), 0,
                                                    {"counts": Buffer("u32", slots, output=True),
                                                     "slots": slots, "iters": 4}))
        counts = estimate_counts(bound).counts
        t = launch_traffic(bound, counts.counts, H200)
        work = launch_work(module, counts, H200, t)
        per_sector.append(resource_times(work, H200, *H200.default_clocks, params)["l2"] / t.l2_atomic_sectors.value)
    slices = H200.l2_bytes / params.l2_bytes_per_slice
    assert per_sector[0] / per_sector[1] == pytest.approx(busy_slices(8192, slices), rel=1e-6)


def test_launch_bounds_give_the_registers_a_thread_may_use(module):
    assert register_cap(module.function("spilling_accumulators"), "sm_90") == 32  # 65536 / (1024 x 2)
    assert register_cap(module.function("accumulators"), "sm_90") is None


@needs_ptxas
def test_spills_ptxas_adds_run_with_the_loop_and_overflow_l1_and_l2(module):
    """ptxas spills the 96 accumulators of spilling_accumulators (32 registers a thread under its launch bounds)
    in its loop: the L1 sectors beyond the output's grow with the loop's trips; a CTA's 1024 frames overflow
    its share of L1 and the frames of every resident thread overflow L2. Without bounds the same code keeps
    them in registers and moves only its output."""
    n = 1056 * 1024

    def run(kernel: str, iters: int):
        return traffic(module, kernel, 1056, 1024, {"0": Buffer("f32", n, output=True), "1": iters})

    plain, short, long = run("accumulators", 64), run("spilling_accumulators", 16), run("spilling_accumulators", 64)
    output = n / 8  # one float a thread: 4 sectors a warp
    assert plain.l1_sectors.value == output and plain.l2_read_sectors.value == 0.0
    assert not any("register spills" in a for a in plain.assumptions)
    assert 3.0 < (long.l1_sectors.value - output) / (short.l1_sectors.value - output) < 4.0
    assert 0 < long.l2_read_sectors.value < long.l1_sectors.value
    assert long.dram_read_bytes.value > 0 and long.dram_write_bytes.value > 0
    assert long.l1_sectors.low < long.l1_sectors.value < long.l1_sectors.high
    assert any("register spills" in a for a in long.assumptions)
