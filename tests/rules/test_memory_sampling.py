"""The launch the memory rules emulate a kernel with, and what the sampling keeps, on hand-written PTX."""

from __future__ import annotations

import pytest

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.memory_access import pointer_params
from ptxstatic.config import Config
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import MEMORY_RULES_SAMPLE_REQUESTS, MEMORY_RULES_SAMPLE_WARPS
from ptxstatic.ptx.parser import parse_text
from ptxstatic.rules.memory_sampling import DEFAULT_GRID, SATURATED, kernel_launch, sample_module

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 data, .param .u64 count, .param .f32 scale, .param .align 8 .b8 box[16])
{DIRECTIVE}
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [count];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra DONE;
    st.global.u32 [%rd5], %r1;
DONE:
    ret;
}
"""


def kernel(directive: str = ""):
    module = parse_text(PTX.replace("{DIRECTIVE}", directive), "sampling.ptx")
    return module, module.function("k")


def launch_of(directive: str = "", configured: Launch | None = None):
    module, fn = kernel(directive)
    return kernel_launch(module, fn, pointer_params(fn, def_use(build_cfg(fn))), configured)


@pytest.mark.parametrize("directive, block", [
    ("", (32, 4, 1)),  # the default
    (".reqntid 64, 2", (64, 2, 1)),  # required: as declared
    (".maxntid 64", (32, 2, 1)),  # at most 64 threads: two rows of 32
    (".maxntid 16", (16, 1, 1)),
])
def test_the_default_launch(directive: str, block: tuple[int, int, int]):
    launch, invented, buffers = launch_of(directive)
    assert launch.block == block and launch.grid == DEFAULT_GRID
    data = launch.args["data"]
    assert isinstance(data, Buffer) and data.fill == "zeros"  # a pointer: it reaches a cvta
    # count is 64-bit too, but compared with an offset, never an address: an integer
    assert launch.args["count"] == 1024 and launch.args["scale"] == 1.0 and launch.args["box"] == 0
    assert invented == {"count", "scale", "box"}  # a made-up buffer shapes no address...
    assert buffers == {"data"}  # ...but its zeros are no data to gather with


def test_the_configured_launch_gives_shape_and_arguments_by_name_or_position():
    configured = Launch((2, 1, 1), (128, 1, 1), 0, {"count": 4096, "2": 0.5})
    launch, invented, buffers = launch_of("", configured)
    assert (launch.grid, launch.block) == ((2, 1, 1), (128, 1, 1))
    assert launch.args["count"] == 4096 and launch.args["scale"] == 0.5
    assert invented == {"box"} and buffers == {"data"}


def test_only_the_sampled_warps_of_cta_zero_are_kept():
    module, _ = kernel()
    config = Config(launch=Launch((2, 1, 1), (256, 1, 1), 0, {"count": 1 << 20}))
    found = sample_module(module, config)
    (run,) = found.runs
    assert run.stopped is None and run.from_config
    (store,) = [ins for ins in module.function("k").instructions if ins.opcode.startswith("st.")]
    requests = found.requests("k", store, "global").requests
    # one store per warp: warps 0..3 of the 8 of CTA 0, each with its 32 lanes 4 bytes apart
    assert len(requests) == MEMORY_RULES_SAMPLE_WARPS == 4
    for warp, (lanes, addresses) in enumerate(requests):
        assert lanes.tolist() == list(range(32))
        assert (addresses - addresses[0]).tolist() == [4 * lane for lane in range(32)]
        assert int(addresses[0] - requests[0][1][0]) == 128 * warp
    assert found.requests("k", store, "global").warps == {0, 1, 2, 3}
    assert run.method({0, 1, 2, 3}).endswith("warps 0..3 of CTA (0, 0, 0) (the configured launch, block 256x1x1)")
    assert "emulation of warp 2 of" in run.method({2}) and "warps 0, 2 of" in run.method({0, 2})


LOOPS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 data, .param .u32 n, .param .u32 m)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [data];
    ld.param.u32 %r2, [n];
    ld.param.u32 %r6, [m];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r3, 0;
    mov.u32 %r5, 0;
MEMORY:
    ld.global.u32 %r4, [%rd4];
    add.s32 %r5, %r5, %r4;
    add.s32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r2;
    @%p1 bra MEMORY;
    mov.u32 %r3, 0;
ARITHMETIC:
    mad.lo.s32 %r5, %r5, 3, 1;
    add.s32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r6;
    @%p2 bra ARITHMETIC;
    st.global.u32 [%rd4], %r5;
    ret;
}
"""


@pytest.mark.parametrize("n, m, loads_per_warp, stopped", [
    (1 << 20, 1, MEMORY_RULES_SAMPLE_REQUESTS, SATURATED),  # ends in the memory loop, every load sampled
    (4, 1 << 20, 4, SATURATED),  # ends in the arithmetic loop, which has no memory instruction
    (4, 4, 4, None),  # runs to the end
])
def test_an_emulation_that_samples_nothing_new_ends_early(n: int, m: int, loads_per_warp: int, stopped: str | None):
    module = parse_text(LOOPS, "loops.ptx")
    found = sample_module(module, Config(launch=Launch((1, 1, 1), (256, 1, 1), 0, {"n": n, "m": m})))
    (run,) = found.runs
    assert run.stopped == stopped
    load, store = [i for i in module.function("k").instructions if i.opcode.startswith(("ld.global", "st."))]
    loads = found.requests("k", load, "global")
    # each sampled warp made its share of the loads (the first ones), whichever warp ran first
    assert loads.per_warp == dict.fromkeys(range(MEMORY_RULES_SAMPLE_WARPS), loads_per_warp)
    stores = found.requests("k", store, "global")
    assert (stores is None) == (stopped is not None)


def test_a_long_stretch_before_the_first_access_does_not_end_the_emulation():
    # every warp computes for about 300 warp instructions (several turns each) before its only store, as a
    # kernel does that sets up indices and registers first: the emulation waits for the warps' first requests
    text = LOOPS.replace("    mov.u32 %r5, 0;\nMEMORY:", "    mov.u32 %r5, 0;\n    bra.uni AFTER;\nMEMORY:")
    text = text.replace("    mov.u32 %r3, 0;\nARITHMETIC:", "AFTER:\n    mov.u32 %r3, 0;\nARITHMETIC:")
    module = parse_text(text, "prelude.ptx")
    found = sample_module(module, Config(launch=Launch((1, 1, 1), (128, 1, 1), 0, {"n": 1, "m": 75})))
    (run,) = found.runs
    assert run.stopped is None
    (store,) = [i for i in module.function("k").instructions if i.opcode.startswith("st.")]
    assert found.requests("k", store, "global").per_warp == dict.fromkeys(range(4), 1)
