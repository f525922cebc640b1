"""PS201 barrier-under-divergence on CUDA kernels written to trigger it and on near misses that must not.

The expectations live in the sources: a line marked ``expect: PS201`` is where the rule must report, a line
marked ``expect-call: PS201`` is the call site of inlined code whose barrier is reported; kernels named
``ok_*`` must stay silent. The PTX was compiled by nvcc (sm_90) with ``-lineinfo``, without line
information and with ``-G`` (tests/data/rules/regenerate.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.paths import DATA, FIXTURES, ROOT

from ptxstatic.config import Config
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

RULES = DATA / "rules"
SOURCES = sorted((RULES / "cuda").glob("ps201_*"))
SOURCE_DIR = (RULES / "cuda").relative_to(ROOT)  # as the PTX's .file directives name it
PTX = {v: RULES / "ptx" / v / "ps201_barrier.ptx" for v in ("lineinfo", "plain", "G")}
PS201 = [get_rule("PS201")]


def marked(kind: str) -> set[tuple[str, int]]:
    """(repository-relative file, line) of every line carrying ``// <kind>: PS201``."""
    out = set()
    for src in SOURCES:
        for n, line in enumerate(src.read_text().splitlines(), 1):
            if re.search(rf"//\s*{kind}:\s*PS201\b", line):
                out.add((src.relative_to(ROOT).as_posix(), n))
    return out


def kernels(src: Path, prefix: str) -> set[str]:
    return set(re.findall(rf'__global__ void ({prefix}\w*)\(', src.read_text()))


def findings(variant: str):
    return lint_module(parse_file(PTX[variant]), Config(), rules=PS201, source_root=ROOT)


def test_reports_exactly_the_marked_lines():
    found = findings("lineinfo")
    assert {(Path(f.source.file).relative_to(ROOT).as_posix(), f.source.line) for f in found} == marked("expect")
    sites = {(loc.file, loc.line) for f in found for loc in f.inlined_at}
    assert {(str(ROOT / file), line) for file, line in marked("expect-call")} == sites
    assert all(f.code == "PS201" and str(f.severity) == "warning" for f in found)


def test_source_paths_are_resolved_under_the_source_root():
    for f in findings("lineinfo"):
        assert Path(f.source.file).is_absolute() and Path(f.source.file).exists()


def test_positives_and_near_misses_in_every_variant():
    positives = kernels(SOURCES[0], "ps201_")
    near_misses = kernels(SOURCES[0], "ok_")
    assert len(positives) >= 9 and len(near_misses) >= 9
    for variant in PTX:
        flagged = {f.kernel for f in findings(variant)}
        assert flagged == positives, variant


def test_each_finding_says_where_the_condition_is_decided():
    for f in findings("lineinfo"):
        kind = f.properties["kind"]
        assert kind in ("condition", "loop")
        assert f.properties["depends_on"], f
        (note,) = f.notes
        assert (note.location is not None and note.location.line < f.source.line) or f.inlined_at
        if f.kernel == "ps201_tid_loop":
            assert kind == "loop" and "loop whose trip count" in f.message
        if f.kernel == "ps201_atomic_ticket":
            assert "atomic" in f.message
        if f.kernel == "ps201_noinline_call":
            assert "publish_and_wait(float*, float)" in f.message or "publish_and_wait" in f.message


def test_without_line_information_findings_point_into_the_ptx():
    found = findings("plain")
    assert found and all(f.source is None and f.ptx.file == str(PTX["plain"]) for f in found)
    ptx_lines = PTX["plain"].read_text().splitlines()
    assert all(re.match(r"\s*(bar|barrier)\.|\s*call", ptx_lines[f.ptx.line - 1]) for f in found)
    assert any("-lineinfo" in n.message for n in found[0].notes)


def test_fingerprints_are_stable_when_lines_move(tmp_path: Path):
    """The same kernels with three lines added above them: other line numbers, the same fingerprints."""
    shifted_src = tmp_path / SOURCE_DIR
    shifted_src.mkdir(parents=True)
    for src in SOURCES:
        (shifted_src / src.name).write_text("\n\n\n" + src.read_text())
    text = PTX["lineinfo"].read_text()
    def shift(m: re.Match) -> str:
        return m.group(1) + str(int(m.group(2)) + 3 * (m.group(2) != "0"))

    shifted_ptx = re.sub(r"(\.loc\s+\d+\s+)(\d+)", shift, text)
    shifted_ptx = re.sub(r"(inlined_at\s+\d+\s+)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 3), shifted_ptx)
    (tmp_path / "moved.ptx").write_text(shifted_ptx)
    before = findings("lineinfo")
    after = lint_module(parse_file(tmp_path / "moved.ptx"), Config(), rules=PS201, source_root=tmp_path)
    assert [f.source.line + 3 for f in before] == [f.source.line for f in after]
    assert [f.fingerprint(ROOT) for f in before] == [f.fingerprint(tmp_path) for f in after]
    assert len({f.fingerprint(ROOT) for f in before}) == len(before)


@pytest.mark.parametrize("comment, silenced", [
    ("// ptxstatic: ignore[PS201]", True),
    ("// ptxstatic: ignore[PS2]", True),
    ("// ptxstatic: ignore", True),
    ("// ptxstatic: ignore[PS101]", False),
    ("// ignore[PS201]", False),
])
def test_suppression_comment(tmp_path: Path, comment: str, silenced: bool):
    copy = tmp_path / SOURCE_DIR
    copy.mkdir(parents=True)
    for src in SOURCES:
        text = src.read_text()
        if src.suffix == ".cu":
            text = text.replace("__syncthreads();  // expect: PS201\n        out[threadIdx.x] = tile[15",
                                f"__syncthreads();  {comment}\n        out[threadIdx.x] = tile[15", 1)
        (copy / src.name).write_text(text)
    found = lint_module(parse_file(PTX["lineinfo"]), Config(), rules=PS201, source_root=tmp_path)
    assert ("ps201_tid_if" not in {f.kernel for f in found}) == silenced
    assert len(found) == len(findings("lineinfo")) - silenced


def test_suppression_at_the_call_site_of_inlined_code(tmp_path: Path):
    copy = tmp_path / SOURCE_DIR
    copy.mkdir(parents=True)
    for src in SOURCES:
        text = src.read_text().replace("v = stage_through_shared(tile, v);  // expect-call: PS201",
                                       "v = stage_through_shared(tile, v);  // ptxstatic: ignore[PS201]")
        (copy / src.name).write_text(text)
    found = lint_module(parse_file(PTX["lineinfo"]), Config(), rules=PS201, source_root=tmp_path)
    assert not {"ps201_inlined_helper", "ps201_lane_subset_helper"} & {f.kernel for f in found}


def test_no_finding_on_the_parser_corpus():
    """Every nvcc fixture of the parser corpus (82 kernels, many with barriers after reconvergence, in
    uniform loops and in tree reductions) is free of PS201 findings."""
    corpus = sorted((FIXTURES / "nvcc").glob("sm_90/*/*.ptx"))
    assert len(corpus) >= 45
    for path in corpus:
        module = parse_file(path, recover=True)
        assert lint_module(module, Config(), rules=PS201) == [], path
