"""The emulator's memory-access observer and running a subset of the grid's CTAs, on hand-written PTX."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ptxstatic.emulator import CodeCache, EmulationError, MemoryAccess, emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.parser import parse_text

TEXT = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 8 .b8 tile[1024];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 8;
    mov.u64 %rd3, tile;
    add.s64 %rd4, %rd3, %rd2;
    st.shared.v2.u32 [%rd4], {%r1, %r2};
    bar.sync 0;
    setp.lt.u32 %p1, %r1, 40;
    @%p1 ld.shared.u32 %r3, [tile+4];
    cvta.shared.u64 %rd5, %rd4;
    ld.u32 %r4, [%rd5];
    add.s32 %r5, %r3, %r4;
    cvta.to.global.u64 %rd6, %rd1;
    mul.wide.u32 %rd7, %r1, 12;
    add.s64 %rd6, %rd6, %rd7;
    st.global.u32 [%rd6], %r5;
    ret;
}
"""


#: three CTAs of two warps; each thread stores three words of ``out``
LAUNCH = Launch((3, 1, 1), (64, 1, 1), 0, {"out": Buffer("u32", 3 * 64 * 3)})


def run(ctas=None):
    seen: list[MemoryAccess] = []
    e = emulate(parse_text(TEXT, "observe.ptx"), "k", LAUNCH, ctas=ctas, observer=seen.append)
    return e, seen


def test_every_access_is_reported_with_its_lanes_and_addresses():
    _, seen = run(ctas=[(2, 0, 0)])
    assert [a.warp for a in seen[:2]] == [0, 1]  # both warps store before the barrier releases them
    seen.sort(key=lambda a: a.warp)
    kinds = [(a.instruction.opcode, a.space, a.kind, a.warp) for a in seen]
    # per warp: the vector store, the guarded load, the generic load (resolved to shared), the global store
    assert kinds == [(op, space, kind, w) for w in (0, 1) for op, space, kind in (
        ("st.shared.v2.u32", "shared", "store"), ("ld.shared.u32", "shared", "load"),
        ("ld.u32", "shared", "load"), ("st.global.u32", "global", "store"))]
    assert all(a.cta == (2, 0, 0) and a.function == "k" for a in seen)
    store, guarded, generic, glob = seen[4:8]  # warp 1: threads 32..63
    assert store.width == 8 and store.addresses.tolist() == [8 * t for t in range(32, 64)]
    assert guarded.lanes.tolist() == list(range(8)) and set(guarded.addresses.tolist()) == {4}  # threads 32..39
    assert generic.width == 4 and generic.addresses.tolist() == store.addresses.tolist()  # shared offsets
    steps = np.diff(glob.addresses.astype(np.int64))
    assert glob.lanes.tolist() == list(range(32)) and set(steps.tolist()) == {12}


def test_only_the_chosen_ctas_run():
    e, seen = run(ctas=[(1, 0, 0)])
    out = e.buffers["out"].reshape(-1)
    assert {a.cta for a in seen} == {(1, 0, 0)}
    # thread t of CTA 1 stores at out[3 t] its own first tile word (t), plus tile word 1 (the CTA index) when
    # t < 40 (the others skip the guarded load and add 0)
    assert out[0:3 * 64:3].tolist() == [t + (t < 40) for t in range(64)] and not out[1::3].any()
    assert "1 of the grid's 3 CTAs were run" in e.counts.notes
    full, seen_all = run()
    assert len(seen_all) == 3 * len(seen) and full.counts.notes == ["emulated 3 CTAs x 64 threads"]


def test_a_sample_of_ctas_compiles_the_kernel_once_and_runs_as_without_it():
    """Emulations of one module and launch share their compiled code through a :class:`CodeCache` (the traffic
    model runs its sample of CTAs one emulation each); each CTA's accesses and results are the same."""
    module = parse_text(TEXT, "observe.ptx")
    cache = CodeCache()
    for cta in [(0, 0, 0), (2, 0, 0)]:
        alone: list[MemoryAccess] = []
        shared: list[MemoryAccess] = []
        fresh = emulate(module, "k", LAUNCH, ctas=[cta], observer=alone.append)
        reused = emulate(module, "k", LAUNCH, ctas=[cta], observer=shared.append, compiled=cache)
        assert [(a.instruction.opcode, a.addresses.tolist()) for a in shared] == \
            [(a.instruction.opcode, a.addresses.tolist()) for a in alone]
        assert (reused.buffers["out"] == fresh.buffers["out"]).all()
        assert reused.counts.counts == fresh.counts.counts
    assert list(cache.codes) == ["k"]
    code = cache.codes["k"]
    emulate(module, "k", LAUNCH, ctas=[(1, 0, 0)], compiled=cache)
    assert cache.codes["k"] is code  # reused, not compiled again

def test_a_cta_outside_the_grid_is_an_error():
    with pytest.raises(EmulationError, match="outside the grid"):
        run(ctas=[(3, 0, 0)])


LOOP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r2, [n];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r3, 0;
LOOP:
    ld.global.u32 %r4, [%rd4];
    add.s32 %r4, %r4, %r3;
    st.global.u32 [%rd4], %r4;
    add.s32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r2;
    @%p1 bra LOOP;
    ret;
}
"""


def loop_launch(n: int) -> Launch:
    return Launch((1, 1, 1), (128, 1, 1), 0, {"out": Buffer("u32", 128), "n": n})


def test_the_time_slice_changes_the_order_of_the_accesses_not_the_results():
    module = parse_text(LOOP, "loop.ptx")
    runs = {}
    for time_slice in (4096, 8):
        seen: list[MemoryAccess] = []
        e = emulate(module, "k", loop_launch(50), observer=seen.append, time_slice=time_slice)
        runs[time_slice] = (e, [a.warp for a in seen])
    (long, long_warps), (short, short_warps) = runs[4096], runs[8]
    assert np.array_equal(long.buffers["out"], short.buffers["out"])
    assert long.buffers["out"].tolist() == [sum(range(50))] * 128
    assert long.counts.counts == short.counts.counts
    assert sorted(long_warps) == sorted(short_warps) == sorted([0, 1, 2, 3] * 100)
    assert long_warps[:100] == [0] * 100  # one warp runs its whole loop before the next starts
    assert short_warps[:8] != [0] * 8  # the warps take turns


def test_progress_sees_the_steps_and_can_end_the_emulation():
    module = parse_text(LOOP, "loop.ptx")
    turns: list[tuple[int, int]] = []

    class Enough(Exception):
        pass

    def progress(warp: int, executed: int) -> None:
        turns.append((warp, executed))
        if executed >= 200:
            raise Enough

    with pytest.raises(Enough):
        emulate(module, "k", loop_launch(1000), time_slice=16, progress=progress)
    warps, steps = zip(*turns, strict=True)
    assert steps == tuple(sorted(steps)) and steps[0] >= 16 and 200 <= steps[-1] < 200 + 16 + 8
    assert all(b - a >= 16 for a, b in itertools.pairwise(steps))
    assert warps[:8] == (0, 1, 2, 3, 0, 1, 2, 3)  # each turn ends with the warp whose turn it was
