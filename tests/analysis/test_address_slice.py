"""The instructions an address-watching emulation leaves out: on hand-written PTX, what is left out and what is
kept; on every kernel nvcc made of the project's CUDA tests, the memory rules' emulation sees the same
accesses with them left out as with everything run."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.paths import FIXTURES

from ptxstatic.analysis.address_slice import address_slice, memory_steers_addresses
from ptxstatic.analysis.defuse import function_def_use
from ptxstatic.analysis.memory_access import pointer_params
from ptxstatic.emulator import emulate
from ptxstatic.limits import MEMORY_RULES_MAX_STEPS
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.ast import Reg
from ptxstatic.ptx.parser import parse_text
from ptxstatic.rules.memory_sampling import SAMPLED_CTA, kernel_launch

# out[tid] = a chain of fma on in[tid]; the loop's counter and compare decide control flow
CHAIN = """.version 8.0
.target sm_90
.address_size 64
.visible .entry chain(.param .u64 in, .param .u64 out, .param .u64 idx)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd9, [idx];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    mov.u32 %r2, 0;
LOOP:
    fma.rn.f32 %f1, %f1, %f1, 0f3F800000;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, 64;
    @%p1 bra LOOP;
    add.s64 %rd5, %rd2, %rd3;
    st.global.f32 [%rd5], %f1;
    {GATHER}
    ret;
}
"""
# a value loaded from memory the kernel may write steers an address: stored data matters
GATHER = """add.s64 %rd10, %rd9, %rd3;
    ld.global.u32 %r5, [%rd10];
    mul.wide.u32 %rd11, %r5, 4;
    add.s64 %rd6, %rd1, %rd11;
    ld.global.f32 %f2, [%rd6];"""


def chain(gather: str = ""):
    fn = parse_text(CHAIN.replace("{GATHER}", gather), "chain.ptx").function("chain")
    return fn, function_def_use(fn)


def index_of(fn, opcode: str, register: str) -> int:
    return next(i for i, ins in enumerate(fn.instructions)
                if ins.info.opcode == opcode and ins.operands and ins.operands[0] == Reg(register))


def test_the_data_a_kernel_stores_is_left_out_and_its_control_kept():
    fn, du = chain()
    assert not memory_steers_addresses([fn], function_def_use)
    left, steers = address_slice(fn, du, with_data=False)
    assert not steers
    assert index_of(fn, "fma", "%f1") in left  # the chain only reaches the stored data
    assert index_of(fn, "ld", "%f1") in left  # and so does the value loaded: its address alone is needed
    assert index_of(fn, "ld", "%rd1") not in left  # the parameter a pointer comes from is read
    store = next(i for i, ins in enumerate(fn.instructions) if ins.info.opcode == "st")
    assert store in left  # nothing reads memory for a decision: the store need not write
    assert store not in address_slice(fn, du, with_data=True)[0]
    kept = {index_of(fn, "add", "%r2"), index_of(fn, "setp", "%p1"), index_of(fn, "mul", "%rd3"),
            index_of(fn, "add", "%rd5")}  # the trip count, the branch's predicate, the addresses
    assert not kept & left
    # told that stores keep their data, the chain is needed
    assert index_of(fn, "fma", "%f1") not in address_slice(fn, du, with_data=True)[0]


def test_a_loaded_index_makes_the_module_keep_stored_data():
    fn, du = chain(GATHER)
    assert memory_steers_addresses([fn], function_def_use)
    left = address_slice(fn, du, with_data=True)[0]
    assert index_of(fn, "ld", "%r5") not in left  # the index is read: it is part of an address
    assert index_of(fn, "ld", "%f2") in left  # what the gather loads is not needed


def accesses(module, fn, leave_out) -> list[tuple]:
    launch = kernel_launch(module, fn, pointer_params(fn, function_def_use(fn)), None)[0]
    seen: list[tuple] = []
    run = emulate(module, fn, launch, max_steps=MEMORY_RULES_MAX_STEPS, ctas=[SAMPLED_CTA], partial=True,
                  outputs=False, leave_out=leave_out,
                  observer=lambda a: seen.append((a.function, id(a.instruction), a.warp, a.space, a.kind,
                                                  a.lanes.tobytes(), a.addresses.tobytes(), a.width)))
    return [*seen, run.stopped, run.warp_instructions]


@pytest.mark.parametrize("path", sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")),
                         ids=lambda p: p.stem)
def test_the_sampled_accesses_are_the_same_with_the_slice_left_out(path: Path):
    module = parse_file(path, recover=True)
    for fn in module.kernels:
        assert accesses(module, fn, slicer(module, fn)) == accesses(module, fn, None), fn.name


def slicer(module, kernel):
    with_data = memory_steers_addresses([kernel, *(f for f in module.functions if not f.is_kernel)],
                                        function_def_use)
    return lambda f: address_slice(f, function_def_use(f), with_data)[0]


def test_most_of_the_corpus_has_instructions_left_out():
    files = sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx"))
    with_some = 0
    for path in files:
        module = parse_file(path, recover=True)
        with_some += any(slicer(module, fn)(fn) for fn in module.kernels)
    assert with_some >= len(files) * 3 // 4
