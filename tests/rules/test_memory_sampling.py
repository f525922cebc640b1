"""The launch the memory rules emulate a kernel with, and what the sampling keeps, on hand-written PTX."""

from __future__ import annotations

import pytest

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.memory_access import pointer_params
from ptxstatic.config import Config
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import MEMORY_RULES_SAMPLE_WARPS
from ptxstatic.ptx.parser import parse_text
from ptxstatic.rules.memory_sampling import DEFAULT_GRID, kernel_launch, sample_module

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
    _, fn = kernel(directive)
    return kernel_launch(fn, pointer_params(fn, def_use(build_cfg(fn))), configured)


@pytest.mark.parametrize("directive, block", [
    ("", (32, 4, 1)),  # the default
    (".reqntid 64, 2", (64, 2, 1)),  # required: as declared
    (".maxntid 64", (32, 2, 1)),  # at most 64 threads: two rows of 32
    (".maxntid 16", (16, 1, 1)),
])
def test_the_default_launch(directive: str, block: tuple[int, int, int]):
    launch, invented = launch_of(directive)
    assert launch.block == block and launch.grid == DEFAULT_GRID
    data = launch.args["data"]
    assert isinstance(data, Buffer) and data.fill == "zeros"  # a pointer: it reaches a cvta
    # count is 64-bit too, but compared with an offset, never an address: an integer
    assert launch.args["count"] == 1024 and launch.args["scale"] == 1.0 and launch.args["box"] == 0
    assert invented == {"count", "scale", "box"}  # a made-up buffer shapes no address


def test_the_configured_launch_gives_shape_and_arguments_by_name_or_position():
    configured = Launch((2, 1, 1), (128, 1, 1), 0, {"count": 4096, "2": 0.5})
    launch, invented = launch_of("", configured)
    assert (launch.grid, launch.block) == ((2, 1, 1), (128, 1, 1))
    assert launch.args["count"] == 4096 and launch.args["scale"] == 0.5
    assert invented == {"box"}


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
