"""The LLVM IR route: counters inserted into NVPTX IR (named and numbered blocks), lowered with llvmlite,
assembled with ptxas, every IR block mapped to the PTX blocks holding its counter, the IR control flow found
again in the PTX, and the IR route's counters tied to the PTX route's on the same lowered kernel."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.kernels import UNNAMED
from support.paths import DATA, needs_ptxas

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.instrumentation.counter_map import CounterMap
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.ptx.parser import parse_text
from ptxstatic.toolchain.llvm import parse_ir
from ptxstatic.toolchain.ptxas import assemble, target_arch

llvm_ir = pytest.importorskip("ptxstatic.counts.instrumentation.llvm_ir")
pytest.importorskip("llvmlite", reason="the LLVM IR route needs llvmlite")

LL_FILES = sorted((DATA / "llvm").glob("*.ll"))

_LABEL_REF = re.compile(r'label\s+(%(?:"[^"]*"|[-\w$.]+))')


def ir_edges(text: str, blocks: list) -> set[tuple[int, int]]:
    """IR control-flow edges (counter index -> counter index) from the ``label %x`` operands of each block."""
    lines = text.splitlines()
    index = {(b.function, b.name): i for i, b in enumerate(blocks)}
    edges = set()
    for i, b in enumerate(blocks):
        same_fn_next = i + 1 < len(blocks) and blocks[i + 1].function == b.function
        end = blocks[i + 1].label_line - 1 if same_fn_next else len(lines)
        for line in lines[b.label_line:end]:
            if line.strip() == "}":
                break
            edges.update((i, index[(b.function, m.group(1))]) for m in _LABEL_REF.finditer(line))
    return edges


def ptx_edges(result) -> set[tuple[int, int]]:
    """The same edges seen in the lowered PTX: counters in one PTX block follow each other; a block's last
    counter leads to the first counter of each counted block reached through blocks without counters."""
    edges = set()
    for fn in result.module.functions:
        if fn.body is None:
            continue
        graph = build_cfg(fn).graph
        found = result.ptx_blocks[fn.name]
        for p, ids in found.items():
            edges.update(itertools.pairwise(ids))
            if not ids:
                continue
            stack, seen = list(graph.successors(p)), set()
            while stack:
                q = stack.pop()
                if q not in seen:
                    seen.add(q)
                    if found[q]:
                        edges.add((ids[-1], found[q][0]))
                    else:
                        stack.extend(graph.successors(q))
    return edges


def blocks_of(text: str, name: str) -> list:
    return llvm_ir.ir_blocks(text, parse_ir(text, name), name)


CASES = [(p.name, p.read_text()) for p in LL_FILES] + [("unnamed.ll", UNNAMED)]


@needs_ptxas
@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_ir_route_maps_every_block_and_keeps_the_control_flow(name: str, text: str):
    result = llvm_ir.instrument_ir(text, name)
    assemble(result.text, target_arch(result.module))
    blocks = blocks_of(text, name)
    cmap = result.counters
    assert cmap.route == "llvm-ir" and len(cmap.counters) == len(blocks)
    n_ptx = {f.name: len(build_cfg(f).blocks) for f in result.module.functions if f.body is not None}
    for c, b in zip(cmap.counters, blocks, strict=True):
        assert (c.function, c.block, c.label) == (b.function, b.position, b.name)
        assert c.ptx_blocks, f"IR block {b.name} lost"
        assert all(0 <= p < n_ptx[c.function] for p in c.ptx_blocks)
    assert ptx_edges(result) == ir_edges(text, blocks)


def test_numbered_blocks_keep_their_llvm_names():
    result = llvm_ir.instrument_ir(UNNAMED, "unnamed.ll")
    assert [c.label for c in result.counters.counters] == ["%2", "%5", "%10", "%11", "%12", "%18", "%19"]
    # the loop block holds its counter after both phi nodes
    loop = result.counters.counters[4]
    lines = UNNAMED.splitlines()
    assert lines[loop.lines[0] - 1].startswith("12:")
    assert "phi" in lines[loop.lines[1] - 2] and "phi" not in lines[loop.lines[1] - 1]


@needs_ptxas
@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_ir_counters_count_what_the_ptx_route_counts(name: str, text: str):
    """Instrument the IR route's PTX again with the PTX route (its own counter array). Every IR counter then
    sits in one basic block with the PTX route's counter of that block, so on any launch an IR block's count
    equals the sum of the PTX-route counts of the PTX blocks holding its counter (the GPU test measures it)."""
    ir = llvm_ir.instrument_ir(text, name)
    both = instrument(ir.module, InstrumentOptions(symbol="__ptxstatic_ptx_counters"))
    assemble(both.text, target_arch(ir.module))
    again = parse_text(both.text, "both")
    final_ir = llvm_ir.counters_in_blocks(again)
    final_ptx = llvm_ir.counters_in_blocks(again, base="%__ps_base")
    for fn, per in ir.ptx_blocks.items():
        ptx_route = {c.block: c.index for c in both.counters.of(fn)}
        assert sorted(ptx_route) == sorted(per)  # neither route added or removed a block
        for p, ir_counters in per.items():
            # block p holds the PTX route's counter of p and the IR counters lowered into it
            assert final_ptx[fn][p] == [ptx_route[p]]
            assert final_ir[fn][p] == ir_counters
    for c in ir.counters.counters:
        assert all(c.index in ir.ptx_blocks[c.function][p] for p in c.ptx_blocks)


def test_bad_ir_is_a_clear_error(tmp_path: Path):
    with pytest.raises(SourceError) as err:
        llvm_ir.instrument_ir(UNNAMED.replace("%4 = icmp", "%4 = icmpp"), "bad.ll")
    assert err.value.line == 8 and "icmpp" in err.value.source_line
    x86 = UNNAMED.replace("nvptx64-nvidia-cuda", "x86_64-pc-linux-gnu")
    with pytest.raises(PtxstaticError, match="not NVPTX"):
        llvm_ir.instrument_ir(x86, "x86.ll")
    with pytest.raises(PtxstaticError, match="already instrumented"):
        llvm_ir.instrument_ir(UNNAMED + "@__ptxstatic_counters = global i32 0\n", "twice.ll")


@needs_ptxas
def test_cli_instruments_ir(tmp_path: Path):
    src = tmp_path / "unnamed.ll"
    src.write_text(UNNAMED)
    out = tmp_path / "out.ptx"
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "instrument", str(src), "-o", str(out), "--check",
                           "--mode", "warp", "--cpu", "sm_90"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    cmap = CounterMap.load(tmp_path / "out.json")
    assert cmap.route == "llvm-ir" and cmap.mode == "warp" and len(cmap.counters) == 7
    assert ".target sm_90" in out.read_text()
