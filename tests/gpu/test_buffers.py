"""Buffers of a launch as the GPU runner packs them: the same values as the emulator's for every type and fill
(made without wide intermediate copies), and a buffer packed again taken from the recent fills (``collect``
packs each launch for its instrumented run, then its measured run), within a bound on their bytes."""

from __future__ import annotations

import numpy as np
import pytest
from support.kernels import HAND, hand_launch

from ptxstatic.gpu.args import FillCache, KernelArgs, host_fill
from ptxstatic.launch import FILLS, Buffer
from ptxstatic.ptx.dtypes import NP
from ptxstatic.ptx.parser import parse_text


class Memory:
    """Device memory with addresses only."""

    def __init__(self) -> None:
        self.top = 1 << 32

    def alloc(self, nbytes: int) -> int:
        self.top += nbytes
        return self.top - nbytes

    def free(self, ptr: int) -> None:
        pass

    def upload(self, ptr: int, data: bytes) -> None:
        pass

    def download(self, ptr: int, nbytes: int) -> bytes:
        return bytes(nbytes)


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64", "s8", "u8", "s16", "u32", "s64", "u64", "bf16"])
def test_fills_are_the_documented_values(dtype):
    wide = {"zeros": np.zeros, "ones": np.ones, "iota": np.arange, "const": lambda k: np.full(k, 2.5)}
    for fill in FILLS:
        buf = Buffer(dtype, 1000, fill, 2.5, seed=3)
        np_type = np.dtype(np.float32 if dtype == "bf16" else NP[dtype])
        rng = np.random.default_rng(3)
        v = (rng.random(1000) if np_type.kind == "f" else rng.integers(0, 1000, 1000)) if fill == "random" \
            else wide[fill](1000)
        expected = v.astype(np.int64).astype(np_type) if np_type.kind in "iu" else v.astype(np_type)
        got = buf.values(np_type)
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), fill
        assert buf.values_at(np_type, 10, 20).tobytes() == expected[10:20].tobytes(), fill


def test_packing_the_same_launch_again_fills_its_buffers_once():
    fn = parse_text(HAND).function("hand")
    first, again = (KernelArgs(Memory(), fn, hand_launch(2, 64, 128)) for _ in range(2))
    assert again.buffers["out"][1] is first.buffers["out"][1]
    other = KernelArgs(Memory(), fn, hand_launch(4, 64, 256))
    assert other.buffers["out"][1] == host_fill(Buffer("u32", 256, output=True)).tobytes()


def test_recent_fills_are_kept_within_their_bound():
    made: list[int] = []

    def make(buf: Buffer) -> bytes:
        made.append(buf.count)
        return bytes(buf.count)

    cache = FillCache(limit=100)
    for count in (40, 50, 40, 30, 50, 200, 200):
        cache.get(Buffer("u8", count, "random"), make)
    # 40 and 50 kept, 40 used again; 30 pushes the least recently used (50) out; 200 is never kept
    assert made == [40, 50, 30, 50, 200, 200] and cache.held <= 100
    assert [key[1] for key in cache.entries] == [30, 50]
