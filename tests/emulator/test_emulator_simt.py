"""The emulator's execution model on hand-written PTX: divergence and reconvergence, jump tables, barriers
(named, counted, reducing), inter-warp spin-waits, calls (by .param, by register, indirect, recursive,
exiting), module variables, multi-dimensional launches, and the errors it reports."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.emulator import EmulationError, emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.parser import parse_text

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 out", decls: str = "", extra: str = "") -> str:
    """A kernel ``k`` with common registers; ``%rd9`` is ``out`` + 4 * linear thread id."""
    return HEAD + extra + f"""
.visible .entry k({params})
{{
    .reg .pred %p<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    {decls}
    mov.u32 %r30, %tid.x;
    mov.u32 %r31, %ctaid.x;
    mov.u32 %r32, %ntid.x;
    mad.lo.s32 %r33, %r31, %r32, %r30;
    ld.param.u64 %rd8, [out];
    mul.wide.u32 %rd10, %r33, 4;
    add.s64 %rd9, %rd8, %rd10;
{body}
}}
"""


def run(text: str, threads: int, blocks: int = 1, width: int = 1, **kw):
    out = Buffer("u32", blocks * threads * width)
    return emulate(parse_text(text, "simt.ptx"), "k", Launch((blocks, 1, 1), (threads, 1, 1), 0, {"out": out}), **kw)


def counts_by_label(e, text: str, fn: str = "k") -> dict[str, float]:
    f = parse_text(text).function(fn)
    return {(b.labels[0] if b.labels else f"bb{b.id}"): e.counts.of(fn)[b.id] for b in build_cfg(f).blocks}


def bits(lanes) -> int:
    return sum(1 << (t % 32) for t in lanes)


# ------------------------------------------------------------------------------------- divergence
NESTED = kernel("""
    and.b32 %r2, %r30, 1;
    setp.eq.u32 %p1, %r2, 0;
    mov.u32 %r5, 0;
    @%p1 bra EVEN;
    activemask.b32 %r5;
    bra.uni JOIN;
EVEN:
    and.b32 %r3, %r30, 2;
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra JOIN;
    activemask.b32 %r5;
JOIN:
    activemask.b32 %r6;
    add.u32 %r5, %r5, %r6;
    st.global.u32 [%rd9], %r5;
    ret;
""")


def test_nested_divergence_reconverges_at_post_dominators() -> None:
    threads = 48  # the second warp has 16 lanes
    e = run(NESTED, threads)
    got = e.buffers["out"]
    for t in range(threads):
        warp = range(32 * (t // 32), min(threads, 32 * (t // 32) + 32))
        full = bits(warp)
        inner = bits(u for u in warp if u % 2) if t % 2 else bits(u for u in warp if u % 4 == 2) if t % 4 == 2 else 0
        assert got[t] == (inner + full) % (1 << 32), t
    c = counts_by_label(e, NESTED)
    assert c == {"bb0": threads, "bb1": threads / 2, "EVEN": threads / 2, "bb3": threads / 4, "JOIN": threads}
    assert e.warp_entries["k"][0] == 2


LOOP = kernel("""
    rem.u32 %r1, %r30, 5;          // trip count tid % 5
    rem.u32 %r2, %r30, 7;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
HEAD:
    setp.ge.u32 %p1, %r3, %r1;
    @%p1 bra DONE;
    setp.eq.u32 %p2, %r3, 2;
    setp.eq.and.u32 %p3, %r2, 0, %p2;
    @%p3 bra BROKE;               // tid % 7 == 0 leaves at i == 2
    activemask.b32 %r5;
    popc.b32 %r5, %r5;
    add.u32 %r4, %r4, %r5;        // sums how many lanes run each iteration with this one
    add.u32 %r3, %r3, 1;
    bra.uni HEAD;
BROKE:
    add.u32 %r4, %r4, 1000;
DONE:
    st.global.u32 [%rd9], %r4;
    ret;
""")


def test_loop_with_per_lane_trips_and_a_second_exit() -> None:
    e = run(LOOP, 64)
    trips = []
    for t in range(64):
        n = t % 5
        trips.append(min(n, 2) if t % 7 == 0 and n > 2 else n)
    broke = [t % 7 == 0 and t % 5 > 2 for t in range(64)]
    want = []
    for t in range(64):
        warp = range(32 * (t // 32), 32 * (t // 32) + 32)
        acc = sum(sum(1 for u in warp if trips[u] > i) for i in range(trips[t]))
        want.append(acc + (1000 if broke[t] else 0))
    assert e.buffers["out"].tolist() == want
    c = counts_by_label(e, LOOP)
    assert c["HEAD"] == sum(trips) + 64  # one more entry per lane: the exit test or the break
    assert c["BROKE"] == sum(broke)
    assert c["DONE"] == 64


TABLE = kernel("""
    rem.u32 %r1, %r30, 3;
    brx.idx %r1, TARGETS;
L0:
    mov.u32 %r2, 100;
    bra.uni END;
L1:
    mov.u32 %r2, 200;
    bra.uni END;
L2:
    mov.u32 %r2, 300;
END:
    activemask.b32 %r3;
    add.u32 %r2, %r2, %r3;
    st.global.u32 [%rd9], %r2;
    ret;
TARGETS: .branchtargets L0, L1, L2;
""")


def test_jump_table_splits_a_warp_three_ways() -> None:
    e = run(TABLE, 32)
    assert e.buffers["out"].tolist() == [(100 * (t % 3 + 1) + 0xFFFFFFFF) % (1 << 32) for t in range(32)]
    c = counts_by_label(e, TABLE)
    assert (c["L0"], c["L1"], c["L2"], c["END"]) == (11, 11, 10, 32)


# ---------------------------------------------------------------------------------------- barriers
SHARED_SWAP = kernel("""
    mov.u64 %rd1, buf;
    mul.wide.u32 %rd2, %r30, 4;
    add.s64 %rd3, %rd1, %rd2;
    mul.lo.u32 %r1, %r30, 3;
    st.shared.u32 [%rd3], %r1;
    bar.sync 0;
    add.u32 %r2, %r30, 32;
    rem.u32 %r2, %r2, 64;
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.shared.u32 %r3, [%rd5];
    st.global.u32 [%rd9], %r3;
    ret;
""", decls=".shared .align 4 .b32 buf[64];")


def test_bar_sync_makes_other_warps_stores_visible() -> None:
    e = run(SHARED_SWAP, 64, blocks=2)
    assert e.buffers["out"].tolist() == [((t + 32) % 64) * 3 for t in range(64)] * 2


REDUCE = kernel("""
    rem.u32 %r1, %r30, 3;
    setp.eq.u32 %p1, %r1, 0;
    setp.lt.u32 %p2, %r30, 200;
    setp.eq.u32 %p3, %r30, 70;
    bar.red.popc.u32 %r2, 0, %p1;
    bar.red.and.pred %p4, 0, %p2;
    bar.red.or.pred %p5, 0, %p3;
    bar.red.and.pred %p6, 0, %p1;
    selp.u32 %r3, 1000, 0, %p4;
    selp.u32 %r4, 10000, 0, %p5;
    selp.u32 %r5, 100000, 0, %p6;
    add.u32 %r2, %r2, %r3;
    add.u32 %r2, %r2, %r4;
    add.u32 %r2, %r2, %r5;
    st.global.u32 [%rd9], %r2;
    ret;
""")


@pytest.mark.parametrize("threads", [64, 96])
def test_bar_red_reduces_over_the_cta(threads: int) -> None:
    e = run(REDUCE, threads)
    popc = sum(1 for t in range(threads) if t % 3 == 0)
    want = popc + 1000 + (10000 if threads > 70 else 0)
    assert set(e.buffers["out"].tolist()) == {want}


NAMED = kernel("""
    setp.lt.u32 %p1, %r30, 32;
    @%p1 bra CONSUMER;
    mov.u64 %rd1, data;
    mul.lo.u32 %r1, %r30, 7;
    st.shared.u32 [%rd1], %r1;     // the producer warp (lanes 32..63) writes, then signals barrier 1
    bar.arrive 1, 64;
    mov.u32 %r2, 0;
    bra.uni OUT;
CONSUMER:
    bar.sync 1, 64;                 // the consumer warp runs first and must wait here
    mov.u64 %rd1, data;
    ld.shared.u32 %r2, [%rd1];
OUT:
    st.global.u32 [%rd9], %r2;
    ret;
""", decls=".shared .align 4 .b32 data[1];")


def test_named_barrier_with_arrive_orders_producer_before_consumer() -> None:
    e = run(NAMED, 64)
    assert e.buffers["out"].tolist() == [63 * 7] * 32 + [0] * 32


def test_barrier_that_never_fills_is_a_deadlock() -> None:
    with pytest.raises(EmulationError, match="deadlock"):
        run(kernel("bar.sync 1, 96;\n ret;"), 64)


SPIN = kernel("""
    mov.u64 %rd1, flag;
    mov.u64 %rd2, data;
    setp.lt.u32 %p1, %r30, 32;
    @!%p1 bra PRODUCE;
WAIT:                               // warp 0 runs first and waits for warp 1
    ld.volatile.shared.u32 %r1, [%rd1];
    setp.eq.u32 %p2, %r1, 0;
    @%p2 bra WAIT;
    ld.shared.u32 %r2, [%rd2];
    bra.uni OUT;
PRODUCE:
    mov.u32 %r2, 4242;
    st.shared.u32 [%rd2], %r2;
    membar.cta;
    mov.u32 %r1, 1;
    st.volatile.shared.u32 [%rd1], %r1;
OUT:
    st.global.u32 [%rd9], %r2;
    ret;
""", decls=".shared .align 4 .b32 flag[1];\n.shared .align 4 .b32 data[1];")


def test_spin_wait_on_another_warp_makes_progress() -> None:
    e = run(SPIN, 64)
    assert e.buffers["out"].tolist() == [4242] * 64
    assert counts_by_label(e, SPIN)["WAIT"] > 32  # warp 0 spun before warp 1 ran


def test_runaway_loop_hits_the_step_limit() -> None:
    with pytest.raises(EmulationError, match="more than 5000 warp instructions"):
        run(kernel("SPIN:\n add.u32 %r1, %r1, 1;\n bra.uni SPIN;"), 32, max_steps=5000)


# ------------------------------------------------------------------------------------------- calls
CALLS = HEAD + """
.func (.param .b32 ret) fact(.param .b32 n)
{
    .reg .pred %p1;
    .reg .b32 %r<5>;
    ld.param.b32 %r1, [n];
    setp.le.u32 %p1, %r1, 1;
    mov.u32 %r4, 1;
    @%p1 bra DONE;
    sub.u32 %r2, %r1, 1;
    {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], %r2;
    call.uni (r), fact, (a);
    ld.param.b32 %r3, [r];
    }
    mul.lo.u32 %r4, %r1, %r3;
DONE:
    st.param.b32 [ret], %r4;
    ret;
}
.func (.reg .u32 sum) add3(.reg .u32 a, .reg .u32 b, .reg .u32 c)
{
    add.u32 sum, a, b;
    add.u32 sum, sum, c;
    ret;
}
.func quit_odd(.param .b32 x)
{
    .reg .pred %p1;
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [x];
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 1;
    @%p1 exit;
    ret;
}
.func (.param .b32 r) twice(.param .b32 x)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [x];
    add.u32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
.func (.param .b32 r) square(.param .b32 x)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [x];
    mul.lo.u32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
.global .align 8 .u64 table[2] = {twice, square};
"""

CALLER = kernel("""
    rem.u32 %r1, %r30, 8;
    {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], %r1;
    call.uni (r), fact, (a);
    ld.param.b32 %r2, [r];
    }
    mov.u32 %r6, 5;
    call.uni (%r3), add3, (%r2, %r30, %r6);
    and.b32 %r4, %r30, 1;
    mul.wide.u32 %rd1, %r4, 8;
    mov.u64 %rd2, table;
    add.s64 %rd3, %rd2, %rd1;
    ld.global.u64 %rd4, [%rd3];
    {
    .param .b32 a;
    .param .b32 r;
    st.param.b32 [a], %r3;
    call (r), %rd4, (a), proto;
    ld.param.b32 %r5, [r];
    }
    st.global.u32 [%rd9], %r5;
    {
    .param .b32 a;
    st.param.b32 [a], %r30;
    call.uni quit_odd, (a);
    }
    add.u32 %r5, %r5, 1;
    st.global.u32 [%rd9], %r5;
    ret;
proto: .callprototype (.param .b32 _) _ (.param .b32 _);
""")


def test_recursive_register_indirect_and_exiting_calls() -> None:
    import math

    text = CALLS + CALLER[len(HEAD):]
    e = run(text, 64)
    want = []
    for t in range(64):
        s = math.factorial(t % 8) + t + 5
        v = 2 * s if t % 2 == 0 else s * s
        want.append((v + (1 if t % 2 == 0 else 0)) % (1 << 32))  # odd lanes exit inside quit_odd
    assert e.buffers["out"].tolist() == want
    assert e.counts.of("twice")[0] == 32 and e.counts.of("square")[0] == 32
    assert e.counts.of("fact")[0] == 64 + sum(max(0, t % 8 - 1) for t in range(64))  # calls, recursive ones too
    assert e.counts.of("add3")[0] == 64


# ----------------------------------------------------------------------------- memory, dims, errors
GLOBALS = kernel("""
    ld.global.u64 %rd1, [gp];
    ld.u8 %r1, [%rd1];
    ld.global.u32 %r2, [word];
    add.u32 %r1, %r1, %r2;
    mov.u32 %r4, (1 << 4) + 3 * ~(-2);  // a constant expression: 16 + 3
    add.u32 %r1, %r1, %r4;
    st.global.u32 [%rd9], %r1;
    atom.global.add.u32 %r3, [hits], 1;
    ret;
""", extra="""
.global .align 4 .b8 bytes[8] = {10, 11, 12, 13, 14, 15, 16, 17};
.global .align 8 .u64 gp = generic(bytes)+5;
.global .align 4 .u32 word = 1000;
.visible .global .align 4 .u32 hits;
""")


def test_module_variables_initialisers_and_results() -> None:
    e = run(GLOBALS, 32, blocks=3)
    assert e.buffers["out"].tolist() == [15 + 1000 + 19] * 96
    assert e.globals["hits"].tolist() == [96]
    assert e.globals["word"].tolist() == [1000]
    e = run(GLOBALS, 32, symbols={"word": np.array([7], dtype=np.uint32)})
    assert set(e.buffers["out"].tolist()) == {15 + 7 + 19}


DIMS = HEAD + """
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z;
    mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y; mov.u32 %r6, %ntid.z;
    mov.u32 %r7, %ctaid.x; mov.u32 %r8, %ctaid.y; mov.u32 %r9, %nctaid.x;
    mad.lo.u32 %r10, %r3, %r5, %r2;
    mad.lo.u32 %r10, %r10, %r4, %r1;          // linear thread id in the block
    mad.lo.u32 %r11, %r8, %r9, %r7;            // linear block id (grid z = 1)
    mul.lo.u32 %r12, %r4, %r5;
    mul.lo.u32 %r12, %r12, %r6;
    mad.lo.u32 %r13, %r11, %r12, %r10;
    mov.u32 %r14, %laneid; mov.u32 %r15, %warpid;
    mad.lo.u32 %r16, %r15, 32, %r14;           // must equal the linear thread id
    sub.u32 %r16, %r16, %r10;
    mad.lo.u32 %r17, %r16, 1000000, %r13;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r13, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r17;
    ret;
}
"""


def test_multidimensional_grid_and_block() -> None:
    launch = Launch((3, 2, 1), (4, 3, 5), 0, {"out": Buffer("u32", 6 * 60)})
    e = emulate(parse_text(DIMS), "k", launch)
    assert e.buffers["out"].tolist() == list(range(360))


def test_bad_launches_are_clear_errors() -> None:
    m = parse_text(CALLS + CALLER[len(HEAD):])
    with pytest.raises(EmulationError, match="no function named nope"):
        emulate(m, "nope", Launch())
    with pytest.raises(EmulationError, match="not a kernel"):
        emulate(m, "fact", Launch())
    with pytest.raises(EmulationError, match="has no value"):
        emulate(m, "k", Launch())
    with pytest.raises(EmulationError, match="not buffers"):
        emulate(m, "k", Launch(args={"out": Buffer("u32", 4)}), inputs={"zzz": np.zeros(1)})
    with pytest.raises(EmulationError, match="no module variable"):
        emulate(m, "k", Launch(args={"out": Buffer("u32", 4)}), symbols={"zzz": np.zeros(1)})


def test_oversized_launches_are_refused_before_allocating() -> None:
    m = parse_text(kernel("ret;"))
    with pytest.raises(EmulationError, match="global memory"):
        emulate(m, "k", Launch(args={"out": Buffer("f64", 1 << 38)}))
    with pytest.raises(EmulationError, match="shared memory"):
        emulate(m, "k", Launch(shared_bytes=1 << 30, args={"out": Buffer("u32", 4)}))


def test_a_launch_of_gigabytes_touches_only_the_pages_it_reads() -> None:
    """Buffers are laid out at their real sizes but made page by page as the emulation reaches them: one CTA
    of a launch over an 8 GiB random buffer reads exactly the values the buffer's fill defines there."""
    body = """
    ld.param.u64 %rd11, [in];
    cvt.u64.u32 %rd12, %r33;
    add.s64 %rd12, %rd12, 2147483000;
    shl.b64 %rd12, %rd12, 2;
    add.s64 %rd13, %rd11, %rd12;
    ld.global.u32 %r1, [%rd13];
    st.global.u32 [%rd9], %r1;
    ret;"""
    source = kernel(body, params=".param .u64 out, .param .u64 in")
    big = Buffer("f32", 1 << 31, "random", seed=3)
    out = Buffer("u32", 64, output=True)
    e = emulate(parse_text(source), "k", Launch((1, 1, 1), (64, 1, 1), 0, {"out": out, "in": big}), outputs=["out"])
    expected = big.values_at(np.float32, 2147483000, 2147483064)
    assert np.array_equal(e.buffers["out"].view(np.float32), expected) and list(e.buffers) == ["out"]
    sampled = emulate(parse_text(source), "k", Launch((2, 1, 1), (64, 1, 1), 0, {"out": out, "in": big}),
                      ctas=[(0, 0, 0)], outputs=False)
    assert sampled.buffers == {} and sampled.counts.of("k")
