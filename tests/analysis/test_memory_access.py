"""Sectors of global requests, wavefronts of shared requests and what an address is computed from, on
addresses and PTX written by hand; every expected figure is derived in the comment beside it."""

from __future__ import annotations

import numpy as np
import pytest

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.memory_access import address_inputs, global_sectors, pointer_params, shared_wavefronts
from ptxstatic.ptx.parser import parse_text

LANES = np.arange(32)
BASE = 1 << 20  # 32- and 128-byte aligned


@pytest.mark.parametrize("lanes, addresses, width, expected", [
    # the minimum is what the same lanes touch reading consecutive elements: 4, 8 and 16 sectors for a whole
    # warp of 4-, 8- and 16-byte elements
    (LANES, BASE + 4 * LANES, 4, (4, 4)),  # 128 contiguous bytes
    (LANES, BASE + 4 + 4 * LANES, 4, (5, 4)),  # the same shifted by 4 bytes: straddles a fifth sector
    (LANES, BASE + 0 * LANES, 4, (1, 4)),  # broadcast: one sector
    (LANES, BASE + 128 * LANES, 4, (32, 4)),  # a sector per lane
    (LANES, BASE + 8 * LANES, 4, (8, 4)),  # 256 bytes spanned for 128
    (LANES, BASE + 16 * LANES, 16, (16, 16)),  # 16-byte vectors: 512 contiguous bytes
    (LANES, BASE + 8 * LANES, 8, (8, 8)),  # doubles: 256 contiguous bytes
    (LANES, BASE + 4 * (LANES // 2), 4, (2, 4)),  # pairs of lanes share a float: 64 bytes
    (LANES[1::2], BASE + 4 * LANES[1::2], 4, (4, 4)),  # odd lanes only, each at its own float: 4 sectors
    (LANES[1::2], BASE + 128 * LANES[1::2], 4, (16, 4)),  # odd lanes, a sector each
])
def test_global_sectors(lanes, addresses, width, expected):
    assert global_sectors(lanes, addresses.astype(np.uint64), width) == expected


@pytest.mark.parametrize("lanes, addresses, width, expected", [
    (LANES, 4 * LANES, 4, (1, 1, 1)),  # word k in bank k
    (LANES, 8 * LANES, 4, (2, 1, 2)),  # stride 2 words: banks 0, 2, .., 30 twice each
    (LANES, 128 * LANES, 4, (32, 1, 32)),  # a column of a 32 x 32 float tile: every lane in bank 0
    (LANES, 132 * LANES, 4, (1, 1, 1)),  # padded to 33 words a row: banks k
    (LANES, 0 * LANES, 4, (1, 1, 1)),  # broadcast of one word
    (LANES, 4 * (LANES % 2) * 32, 4, (2, 1, 2)),  # two words of bank 0, each shared by 16 lanes
    (LANES, 8 * LANES, 8, (2, 2, 1)),  # doubles: two phases of 16 lanes, each 128 contiguous bytes
    (LANES, 16 * LANES, 8, (4, 2, 2)),  # doubles 16 B apart: each half-warp spans 256 B, two words a bank
    (LANES, 16 * LANES, 16, (4, 4, 1)),  # 16-byte vectors: four phases of 8 lanes, 128 contiguous bytes each
    (LANES, 32 * LANES, 16, (8, 4, 2)),  # 16-byte vectors 32 B apart: each quarter spans 256 B
    (LANES[:16], 8 * LANES[:16], 8, (1, 1, 1)),  # one half-warp of doubles: one phase
    (LANES, 8 * (LANES % 16), 8, (2, 2, 1)),  # both halves read the same 128 bytes: broadcast within each
])
def test_shared_wavefronts(lanes, addresses, width, expected):
    assert shared_wavefronts(lanes, addresses.astype(np.uint64), width) == expected


PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 n, .param .u64 idx, .param .u32 pitch)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [n];
    ld.param.u64 %rd3, [idx];
    ld.param.u32 %r1, [pitch];
    cvta.to.global.u64 %rd4, %rd1;
    mov.u32 %r2, %tid.x;
    mul.lo.s32 %r3, %r2, %r1;
    mul.wide.s32 %rd5, %r3, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.f32 %f1, [%rd6];
    add.s64 %rd7, %rd3, 16;
    ld.u32 %r4, [%rd7];
    mul.wide.s32 %rd8, %r4, 4;
    add.s64 %rd9, %rd4, %rd8;
    shl.b64 %rd10, %rd2, 2;
    add.s64 %rd11, %rd9, %rd10;
    st.global.u32 [%rd11], %r4;
    ret;
}
"""


def test_address_inputs_and_pointer_parameters():
    fn = parse_text(PTX, "inputs.ptx").function("k")
    du = def_use(build_cfg(fn))
    index = {ins.opcode: i for i, ins in enumerate(fn.instructions)}
    strided = address_inputs(fn, du, index["ld.global.f32"])
    assert strided.params == {"p", "pitch"} and not strided.loaded
    gathered = address_inputs(fn, du, index["st.global.u32"])
    assert gathered.params == {"p", "n"} and gathered.loaded  # the index comes from memory (through idx)
    # p reaches a cvta, idx an address after an addition; n is scaled first (a size), pitch is 32-bit
    assert pointer_params(fn, du) == {"p", "idx"}
