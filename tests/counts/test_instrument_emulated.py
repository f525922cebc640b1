"""The instrumented kernels really count: run original and instrumented PTX through the project's PTX
emulator and check that the counters, folded over banks (and extrapolated in sample mode), equal the
emulator's own block-entry counts, and that the instrumented kernel writes the same buffers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.paths import FIXTURES

from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, counter_declaration, instrument
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_file

emulator = pytest.importorskip("ptxstatic.emulator", reason="the PTX emulator is not available")
from ptxstatic.counts.measured import block_counts  # noqa: E402
from ptxstatic.emulator import EmulationError  # noqa: E402

SOURCES = ["branches", "calls", "loops", "switches", "warp", "atomics", "shared", "templates", "memory"]
FILES = [FIXTURES / "nvcc" / "sm_80" / "lineinfo" / f"{s}.ptx" for s in SOURCES]
FILES += sorted((FIXTURES / "llvm").glob("*.ptx")) + sorted((FIXTURES / "manual").glob("m0[12]*.ptx"))
FILES = [f for f in FILES if f.exists()]


def generic_launch(fn: A.Function, grid: int = 3, block: int = 96) -> Launch | None:
    """Every 64-bit parameter a zero-filled buffer, every other scalar 16 (aggregates: no launch)."""
    args: dict[str, int | float | Buffer] = {}
    for i, p in enumerate(fn.params or ()):
        if p.names[0].dims:
            return None
        args[str(i)] = Buffer("u32", 1 << 14, "zeros") if p.dtype in ("u64", "b64", "s64") else 16
    return Launch((grid, 1, 1), (block, 1, 1), 0, args)


def with_counter_array(module: A.Module, decl: A.VarDecl) -> A.Module:
    """The original code with the (unused) counter array declared where the pass puts it, so that both runs
    see the same memory layout (kernels here get buffer addresses as u64 scalars too)."""
    items = list(module.items)
    first_fn = next((i for i, x in enumerate(items) if isinstance(x, A.Function)), len(items))
    items.insert(first_fn, decl)
    return A.Module(module.filename, items)


def check_module(path: Path, options: InstrumentOptions) -> int:
    m = parse_file(path)
    result = instrument(m, options)
    reference = with_counter_array(m, counter_declaration(options, len(result.counters.counters)))
    checked = 0
    for k in m.kernels:
        launch = generic_launch(k)
        if launch is None:
            continue
        try:
            want = emulator.emulate(reference, k.name, launch, max_steps=100_000)
        except (EmulationError, RecursionError):
            continue  # the emulator does not run this kernel (instruction not modelled, fault on zero data)
        got = emulator.emulate(result.module, k.name, launch, max_steps=400_000)
        raw = got.globals[result.counters.symbol].astype(np.uint64).tolist()
        counts = block_counts(result.counters, raw, k.name, launch)
        expected = want.counts.counts
        if options.mode != "all":
            # sampled CTAs / the first warp stand for the grid only where every CTA / warp does the same
            # work: check those kernels, whose full counts are a multiple of one CTA's / one warp's
            part = (1, 96) if options.mode == "sample" else (1, 32)
            one = emulator.emulate(reference, k.name, Launch((part[0], 1, 1), (part[1], 1, 1), 0, launch.args),
                                   max_steps=100_000).counts.counts
            scale = launch.threads / (part[0] * part[1])
            if {f: {b: n * scale for b, n in bl.items()} for f, bl in one.items()} != expected:
                continue
            if options.mode == "warp":
                expected = one
        for fn, blocks in counts.counts.items():
            for b, n in blocks.items():
                assert n == expected.get(fn, {}).get(b, 0.0), f"{k.name}: {fn} block {b}"
        for fn, blocks in expected.items():
            assert all(n == 0 or counts.counts[fn][b] == n for b, n in blocks.items())
        for name, data in want.buffers.items():
            assert np.array_equal(data, got.buffers[name]), f"{k.name}: buffer {name} differs"
        checked += 1
    return checked


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_counters_equal_emulated_block_entries(path: Path):
    if check_module(path, InstrumentOptions(banks=4)) == 0:
        pytest.skip("the emulator runs none of this file's kernels on a generic launch")


@pytest.mark.parametrize("name", ["branches", "loops"])
def test_sampled_and_one_warp_modes(name: str):
    path = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / f"{name}.ptx"
    # grid 3, stride 3: only CTA 0 counts, and its counts are extrapolated by 3
    assert check_module(path, InstrumentOptions("sample", 3, banks=2)) > 0
    assert check_module(path, InstrumentOptions("warp")) > 0
