"""The PTX instrumentation pass: every corpus PTX instruments and assembles with ptxas for its own target;
the counters sit exactly at the block starts of the original CFG; the map ties counters to blocks, lines and
kernels; edge cases (address size, old versions, old targets, empty blocks, sm_90a, .maxnreg, modes)."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import subprocess
import sys
from collections import Counter as Tally
from functools import cache
from pathlib import Path

import pytest
from support.paths import FIXTURES, ROOT, corpus_files, needs_ptxas

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.instrumentation.counter_map import CounterMap
from ptxstatic.counts.instrumentation.ptx_pass import (
    SYMBOL,
    Instrumented,
    InstrumentOptions,
    instrument,
    reaching_kernels,
)
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_file, parse_text
from ptxstatic.toolchain.ptxas import assemble, target_arch

FILES = corpus_files()
IDS = [str(p.relative_to(FIXTURES)) for p in FILES]


# ------------------------------------------------------------------------------------------- helpers
def _is_instrumentation(s: A.Statement) -> bool:
    """A scope inserted by the pass: every instruction in it touches a %__ps_ register."""
    if not isinstance(s, A.Block):
        return False
    fn = A.Function("x", "func", (), (), None, (), s.body)
    ins = fn.instructions
    return bool(ins) and all(any("%__ps_" in str(o) for o in i.operands) for i in ins)


def _counter_index(block: A.Block) -> int | None:
    fn = A.Function("x", "func", (), (), None, (), block.body)
    for ins in fn.instructions:
        if ins.opcode.startswith("red.global.add.u64"):
            return ins.operands[0].offset // 8
    return None


def _strip(body: tuple[A.Statement, ...], seen: list[tuple[int, int]], count: list[int]) -> tuple:
    """The body without the inserted scopes; ``seen`` gets (counter index, original instruction number)."""
    out = []
    for s in body:
        if _is_instrumentation(s):
            idx = _counter_index(s)  # type: ignore[arg-type]
            if idx is not None:
                seen.append((idx, count[0]))
        elif isinstance(s, A.Block):
            out.append(A.Block(_strip(s.body, seen, count)))
        else:
            if isinstance(s, A.Instruction):
                count[0] += 1
            out.append(s)
    return tuple(out)


def _pass_decls(fn: A.Function) -> tuple:
    return tuple(s for s in fn.body or () if isinstance(s, A.VarDecl) and s.names[0].name.startswith("%__ps_"))


def check_placement(original: A.Module, result: Instrumented) -> None:
    """Reparse the instrumented text; removing the inserted scopes and declarations gives the original
    functions back, and counter first+b.id sits right before block b's first instruction (after its labels)."""
    again = parse_text(result.text, "instrumented")
    cmap = result.counters
    decl = [g for g in again.globals if g.names[0].name == SYMBOL]
    assert len(decl) == 1 and decl[0].names[0].dims == (cmap.size,)
    originals = {f.name: f for f in original.functions if f.body is not None}
    for fn in again.functions:
        if fn.body is None:
            continue
        orig = originals[fn.name]
        blocks = build_cfg(orig).blocks
        seen: list[tuple[int, int]] = []
        body = tuple(s for s in fn.body if s not in _pass_decls(fn))
        stripped = _strip(body, seen, [0])
        assert A.Function(fn.name, fn.kind, fn.linkage, fn.returns, fn.params, fn.directives, stripped) == orig
        mine = cmap.of(fn.name)
        assert [c.block for c in mine] == [b.id for b in blocks]
        first = mine[0].index if mine else 0
        expected = sorted((first + b.id, b.start) for b in blocks)
        assert sorted(seen) == expected
        if blocks:
            assert len(_pass_decls(fn)) == 3
            # the instrumented CFG has the same shape: the counters add no branch and no label
            g_new, g_old = build_cfg(fn).graph, build_cfg(orig).graph
            assert sorted(g_new.nodes) == sorted(g_old.nodes)
            assert sorted(g_new.edges(data="kind")) == sorted(g_old.edges(data="kind"))


# --------------------------------------------------------------------------------- the corpus, ptxas
def _instrument_and_assemble(path: Path) -> tuple[str, str]:
    """("ok" | "skip" | "fail", detail) for one corpus file."""
    try:
        m = parse_file(path)
    except SourceError as err:
        return "skip", f"the front end does not parse this file: {err}"
    try:
        result = instrument(m)
        assemble(result.text, target_arch(m))
    except PtxstaticError as err:
        return "fail", str(err)[:2000]
    return "ok", f"{len(result.counters.counters)} counters, arch {target_arch(m)}"


@cache
def corpus_results() -> dict[Path, tuple[str, str]]:
    """Instrument and assemble the whole corpus once, in parallel (ptxas runs in its own processes)."""
    with cf.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as ex:
        return dict(zip(FILES, ex.map(_instrument_and_assemble, FILES), strict=True))


def test_corpus_is_there():
    assert len(FILES) >= 100
    archs = Tally(p.relative_to(FIXTURES).parts[1] for p in FILES if p.relative_to(FIXTURES).parts[0] == "nvcc")
    assert {"sm_75", "sm_80", "sm_90"} <= set(archs)


@needs_ptxas
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_instruments_and_assembles(path: Path):
    status, detail = corpus_results()[path]
    if status == "skip":
        pytest.skip(detail)
    assert status == "ok", detail


@needs_ptxas
def test_every_non_debug_nvcc_file_assembles_for_each_arch():
    """The acceptance count: every nvcc plain/lineinfo file, per architecture, instruments and assembles."""
    results = corpus_results()
    per_arch: dict[str, int] = {}
    for p, (status, _) in results.items():
        parts = p.relative_to(FIXTURES).parts
        if parts[0] == "nvcc" and parts[2] != "G":
            assert status == "ok", f"{p}: {results[p][1]}"
            per_arch[parts[1]] = per_arch.get(parts[1], 0) + 1
    assert set(per_arch) == {"sm_75", "sm_80", "sm_90"}
    assert len(set(per_arch.values())) == 1, per_arch  # the same sources for every arch


PLACEMENT = [p for p in FILES if "/G/" not in str(p) and "/sm_75/" not in str(p)]


@pytest.mark.parametrize("path", PLACEMENT, ids=[str(p.relative_to(FIXTURES)) for p in PLACEMENT])
def test_counters_sit_at_block_starts(path: Path):
    try:
        m = parse_file(path)
    except SourceError as err:
        pytest.skip(f"the front end does not parse this file: {err}")
    check_placement(m, instrument(m))


# ---------------------------------------------------------------------------------------- the map
def test_map_lines_sources_and_kernels():
    path = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / "calls.ptx"
    m = parse_file(path)
    cmap = instrument(m, source_text=path.read_text()).counters
    lines = path.read_text().splitlines()
    n_blocks = sum(len(build_cfg(f).blocks) for f in m.functions if f.body is not None)
    assert len(cmap.counters) == n_blocks
    reach = reaching_kernels(m)
    blocks = {(f.name, b.id): b for f in m.functions if f.body is not None for b in build_cfg(f).blocks}
    for c in cmap.counters:
        first, last = c.lines
        assert 0 < first <= last
        text = lines[first - 1].strip()
        assert text.startswith(c.label + ":") if c.label != f"bb{c.block}" else not text.endswith(":")
        locs = [i.loc for i in blocks[(c.function, c.block)].instructions if i.loc is not None]
        if locs:  # the first instruction with a .cu line (".loc 1 0 5" means none)
            assert c.source == {"file": locs[0].file, "line": locs[0].line, "column": locs[0].column}
            assert c.source["file"].endswith("calls.cu") and c.source["line"] > 0
        else:
            assert c.source is None
        assert c.kernels == sorted(reach.get(c.function, []))
    assert sum(c.source is not None for c in cmap.counters) > 0.8 * len(cmap.counters)
    device = [c for c in cmap.counters if c.function not in {k.name for k in m.kernels}]
    assert device, "calls.cu has device functions"
    shared = [c for c in device if len(c.kernels) > 1]
    assert shared, "some device function is called from two kernels"
    import hashlib

    assert cmap.module_hash == hashlib.sha256(path.read_bytes()).hexdigest()


def test_map_round_trip_and_fold(tmp_path: Path):
    m = parse_file(FIXTURES / "llvm" / "loop_sum.ptx")
    cmap = instrument(m, InstrumentOptions(banks=4)).counters
    out = tmp_path / "map.json"
    cmap.save(out)
    again = CounterMap.load(out)
    assert again == cmap
    n = len(cmap.counters)
    raw = [0] * cmap.size
    for bank in range(4):
        for c in cmap.counters:
            raw[bank * n + c.index] = (c.index + 1) * 10 ** bank
    folded = again.fold(raw)
    assert folded["loop_sum"] == {c.block: (c.index + 1) * 1111 for c in cmap.counters}
    with pytest.raises(PtxstaticError):
        again.fold(raw[:-1])
    bad = json.loads(out.read_text())
    bad["mode"] = "every"
    out.write_text(json.dumps(bad))
    with pytest.raises(PtxstaticError, match="bad counter map"):
        CounterMap.load(out)


# ------------------------------------------------------------------------------------- edge cases
KERNEL = """
.version {version}
.target {target}
.address_size {bits}

.visible .entry k(.param .u{bits} out, .param .u32 n)
{maxnreg}{{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.reg .b{bits} %rd<4>;
	ld.param.u{bits} %rd1, [out];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %tid.x;
	setp.ge.u32 %p1, %r3, %r2;
	@%p1 bra $L_end;
	mul.wide.u32 %rd2, %r3, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r3;
$L_end:
}}
"""


def kernel(version="8.0", target="sm_80", bits=64, maxnreg="") -> str:
    return KERNEL.format(version=version, target=target, bits=bits, maxnreg=maxnreg)


@needs_ptxas
def test_empty_block_at_function_end_is_counted():
    m = parse_text(kernel(), "empty.ptx")
    result = instrument(m)
    blocks = build_cfg(m.functions[0]).blocks
    assert not blocks[-1].instructions and blocks[-1].labels == ("$L_end",)
    check_placement(m, result)
    text = result.text
    assert text.index("$L_end:") < text.index(f"[%__ps_base+{8 * blocks[-1].id}]")
    assemble(text, "sm_80")


@needs_ptxas
def test_sm_90a_and_maxnreg():
    m = parse_text(kernel(target="sm_90a", maxnreg=".maxnreg 16\n"), "a.ptx")
    result = instrument(m)
    assert target_arch(m) == "sm_90a"
    assert result.module.functions[0].directive("maxnreg").values == (16,)
    assemble(result.text, "sm_90a")


def test_address_size_32_uses_32_bit_addresses():
    # ptxas 13 no longer assembles 32-bit PTX at all, so only the text is checked here
    src = kernel(bits=32).replace("mul.wide.u32 %rd2, %r3, 4", "mul.lo.u32 %rd2, %r3, 4").replace(
        "add.s64", "add.s32")
    m = parse_text(src, "a32.ptx")
    result = instrument(m)
    again = parse_text(result.text)
    decls = {d.names[0].name: d.attrs for d in again.functions[0].body if isinstance(d, A.VarDecl)}
    assert decls["%__ps_base"] == ("b32",)
    assert "mov.u32 %__ps_base, __ptxstatic_counters;" in result.text
    assert "mad.lo.u32 %__ps_base" in result.text


def test_old_version_is_raised_for_activemask():
    m = parse_text(kernel(version="6.0", target="sm_70"), "v60.ptx")
    result = instrument(m)
    assert result.module.version == "6.2"
    assert any("6.0" in n and "6.2" in n for n in result.counters.notes)
    assert instrument(parse_text(kernel(version="7.8"), "v78.ptx")).module.version == "7.8"


def test_targets_below_sm_70_are_refused():
    with pytest.raises(PtxstaticError, match="sm_70"):
        instrument(parse_text(kernel(version="6.0", target="sm_61"), "old.ptx"))
    with pytest.raises(PtxstaticError, match="no sm_XX"):
        instrument(parse_text(kernel().replace(".target sm_80\n", ""), "none.ptx"))


def test_already_instrumented_is_refused():
    once = instrument(parse_text(kernel(), "k.ptx")).text
    with pytest.raises(PtxstaticError, match="already instrumented"):
        instrument(parse_text(once, "k2.ptx"))


def test_bad_options():
    for kwargs in ({"mode": "most"}, {"banks": 3}, {"banks": 0}, {"stride": 0}, {"stride": 4},
                   {"symbol": "1x"}):
        with pytest.raises(PtxstaticError):
            InstrumentOptions(**kwargs)


@needs_ptxas
@pytest.mark.parametrize("mode,stride", [("all", 1), ("sample", 7), ("warp", 1)])
def test_modes_assemble_and_gate(mode: str, stride: int):
    path = FIXTURES / "nvcc" / "sm_90" / "lineinfo" / "calls.ptx"
    m = parse_file(path)
    result = instrument(m, InstrumentOptions(mode, stride, banks=8))
    assert result.counters.mode == mode and result.counters.stride == stride and result.counters.banks == 8
    text = result.text
    assert ("rem.u32 %__ps_s, %__ps_s, 7;" in text) == (mode == "sample")
    assert ("setp.lt.and.u32 %__ps_gate, %__ps_s, 32, %__ps_gate;" in text) == (mode == "warp")
    assert "and.b32 %__ps_s, %__ps_s, 7;" in text  # bank = %smid & (banks - 1)
    n = len(result.counters.counters)
    assert f"{SYMBOL}[{8 * n}]" in text
    check_placement(m, result)
    assemble(text, target_arch(m))


def test_functions_without_body_are_left_alone():
    path = FIXTURES / "manual" / "m03_linkage.ptx"
    m = parse_file(path)
    result = instrument(m)
    for before, after in zip(m.functions, result.module.functions, strict=True):
        if before.body is None:
            assert after == before
        else:
            assert result.counters.of(before.name)


# ------------------------------------------------------------------------------------------- CLI
def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT)


@needs_ptxas
def test_cli_instrument_writes_ptx_and_map(tmp_path: Path):
    src = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / "loops.ptx"
    out = tmp_path / "loops.inst.ptx"
    proc = run_cli("instrument", str(src), "-o", str(out), "--map", str(tmp_path / "m.json"), "--check",
                   "--mode", "sample", "--stride", "3")
    assert proc.returncode == 0, proc.stderr
    cmap = CounterMap.load(tmp_path / "m.json")
    assert cmap.mode == "sample" and cmap.stride == 3 and cmap.route == "ptx"
    assert cmap.counters and f"{len(cmap.counters)} block counters" in proc.stderr
    assert parse_file(out).globals[0].names[0].name == SYMBOL


def test_cli_bad_input_exits_2_without_traceback(tmp_path: Path):
    out = tmp_path / "o.ptx"
    out.write_text("keep me")
    (tmp_path / "old.ptx").write_text(kernel(version="6.0", target="sm_61"))
    (tmp_path / "broken.ptx").write_text(".version 8.0\n.target sm_80\n.entry k() { add.s32 %r1 %r2; }\n")
    for args in (["missing.ptx"], [str(tmp_path / "old.ptx")], [str(tmp_path / "broken.ptx")],
                 [str(tmp_path / "old.ptx"), "--banks", "6"]):
        proc = run_cli("instrument", *args, "-o", str(out))
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "error" in proc.stderr.lower()
    assert out.read_text() == "keep me"  # nothing written over on failure
    assert "broken.ptx:3:" in run_cli("instrument", str(tmp_path / "broken.ptx"), "-o", str(out)).stderr
