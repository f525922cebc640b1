"""The ``%tid.x`` stride analysis on PTX written by hand: masks, warp-wide collectives, and what a value is
computed from through the loads it reads (``value_inputs``)."""

from __future__ import annotations

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.memory_access import value_inputs
from ptxstatic.analysis.strides import UNKNOWN, VAR, StrideAnalysis
from ptxstatic.ptx.ast import Reg
from ptxstatic.ptx.parser import parse_text

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_idx, .param .u32 k_mask, .param .u32 k_stride)
{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_idx];
    ld.param.u32 %r1, [k_mask];
    ld.param.u32 %r2, [k_stride];
    mov.u32 %r3, %tid.x;
    and.b32 %r4, %r3, %r1;
    mul.lo.s32 %r5, %r3, %r2;
    and.b32 %r6, %r5, %r1;
    and.b32 %r7, %r3, 15;
    shl.b32 %r8, %r3, 2;
    and.b32 %r9, %r8, %r1;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r10, [%rd3];
    setp.gt.s32 %p1, %r10, 0;
    vote.sync.ballot.b32 %r11, %p1, -1;
    redux.sync.add.u32 %r12, %r10, -1;
    mul.wide.s32 %rd4, %r10, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r13, [%rd5];
    ret;
}
"""


def analysed():
    fn = parse_text(PTX, "strides.ptx").function("k")
    du = def_use(build_cfg(fn))
    return fn, du, StrideAnalysis(fn, du)


def defined(fn, register: str) -> int:
    return next(i for i, ins in enumerate(fn.instructions) if ins.operands and ins.operands[0] == Reg(register))


def test_a_mask_in_a_uniform_register_keeps_the_stride_and_is_named():
    fn, _, strides = analysed()
    coef = {r: strides.value[defined(fn, r)] for r in ("%r4", "%r6", "%r7", "%r9")}
    # tid & mask: 1; (tid * stride) & mask: uniform but not a constant; (tid << 2) & mask: 4
    assert coef["%r4"] == 1 and coef["%r6"] == VAR and coef["%r9"] == 4
    # tid & 15, an immediate: the lanes' values wrap within the warp, no stride
    assert coef["%r7"] == UNKNOWN
    assert strides.masked == {defined(fn, r) for r in ("%r4", "%r6", "%r9")}


def test_warp_wide_collectives_are_uniform_whatever_the_lanes_gave():
    fn, _, strides = analysed()
    assert strides.value[defined(fn, "%r10")] == UNKNOWN  # each lane loads its own element
    assert strides.value[defined(fn, "%r11")] == 0  # a ballot of them: the same mask in every lane
    assert strides.value[defined(fn, "%r12")] == 0  # their sum over the warp


def test_value_inputs_through_the_loads_a_gather_reads():
    fn, du, _ = analysed()
    gather = defined(fn, "%r13")
    shallow = value_inputs(fn, du, gather, "%rd5")
    deep = value_inputs(fn, du, gather, "%rd5", through_loads=True)
    assert shallow.loaded and shallow.params == {"k_idx"}
    assert deep.loaded and deep.params == {"k_idx"} and defined(fn, "%r10") in deep.slice
    assert defined(fn, "%rd2") in deep.slice and defined(fn, "%rd2") not in shallow.slice


UNIFORM_LOAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry u(.param .u64 u_flag, .param .u64 u_out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [u_flag];
    ld.param.u64 %rd2, [u_out];
    cvta.to.global.u64 %rd3, %rd1;
    ld.global.u32 %r1, [%rd3];
    mov.u32 %r2, %tid.x;
    add.s32 %r3, %r2, %r1;
    mul.wide.u32 %rd4, %r3, 4;
    cvta.to.global.u64 %rd5, %rd2;
    add.s64 %rd6, %rd5, %rd4;
    st.global.u32 [%rd6], %r3;
    ret;
}
"""


def test_a_load_from_one_address_for_the_whole_warp_is_uniform_whatever_the_order_of_the_analysis():
    """The value read from a warp-uniform address is the same in every lane: the store's stride is 4 bytes.
    (The fixpoint once took a load seen before its address's definition for unknown, for good.)"""
    fn = parse_text(UNIFORM_LOAD, "uniform.ptx").function("u")
    strides = StrideAnalysis(fn, def_use(build_cfg(fn)))
    assert strides.value[defined(fn, "%r1")] == 0
    assert strides.value[defined(fn, "%r3")] == 1 and strides.value[defined(fn, "%rd6")] == 4
