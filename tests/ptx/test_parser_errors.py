"""Malformed PTX: FILE:LINE:COL errors with the offending line and a caret, and recovery at the next function."""

from __future__ import annotations

import pytest

from ptxstatic.errors import SourceError
from ptxstatic.ptx import parse_text

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
GOOD = """
.visible .entry good(.param .u64 p)
{
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [p];
\tret;
}
"""


def error_of(text: str) -> SourceError:
    with pytest.raises(SourceError) as info:
        parse_text(text, "bad.ptx")
    return info.value


def test_missing_operand_position_and_caret():
    err = error_of(HEADER + ".visible .entry k()\n{\n\tmov.u32 %r1, ;\n}\n")
    assert (err.file, err.line, err.column) == ("bad.ptx", 6, 15)
    assert "unexpected ';'" in err.message and "an operand" in err.message
    rendered = err.render().splitlines()
    assert rendered[0].startswith("bad.ptx:6:15: error: ")
    assert rendered[1].strip() == "mov.u32 %r1, ;"
    assert rendered[2].index("^") == 2 + 14  # two spaces of indent, then the column (the tab shows as one)


def test_unclosed_bracket():
    err = error_of(HEADER + ".visible .entry k()\n{\n  ld.global.u32 %r1, [%rd1;\n}\n")
    assert (err.line, err.column) == (6, 27)
    assert "']'" in err.message


def test_unclosed_function():
    err = error_of(HEADER + ".visible .entry k()\n{\n  ret;\n")
    assert err.line == 5 and "never closed" in err.message


def test_unterminated_statement_at_end():
    err = error_of(HEADER + GOOD + ".global .u32 x")
    assert err.line == 11 and "expected ';'" in err.message


def test_bad_directive_inside_function():
    err = error_of(HEADER + ".visible .entry k()\n{\n.version 8.0\n}\n")
    assert err.line == 6 and ".version" in err.message


def test_non_integer_where_integer_expected():
    err = error_of(HEADER + ".visible .entry k()\n{\n.reg .b32 %r<1.5>;\n}\n")
    assert err.line == 6


def test_unexpected_character():
    err = error_of(HEADER + ".visible .entry k()\n{\n  add.s32 %r1, %r2, #3;\n}\n")
    assert (err.line, err.column) == (6, 21) and "'#'" in err.message


def test_recovery_keeps_the_other_kernels():
    bad = ".visible .entry broken()\n{\n\tadd.s32 %r1 %r2;\n\t{\n\tret;\n\t}\n}\n"
    m = parse_text(HEADER + GOOD + bad + GOOD.replace("good", "after"), "bad.ptx", recover=True)
    assert [k.name for k in m.kernels] == ["good", "after"]
    assert len(m.errors) == 1 and m.errors[0].line == 13


def test_recovery_after_broken_header():
    bad = ".visible .entry broken(.param .u64)\n{\n\tret;\n}\n"
    m = parse_text(HEADER + bad + GOOD, "bad.ptx", recover=True)
    assert [k.name for k in m.kernels] == ["good"]
    assert len(m.errors) == 1 and m.errors[0].line == 4


def test_reference_parser_reports_the_same_position():
    from ptxstatic.ptx import parse_reference

    text = HEADER + ".visible .entry k()\n{\n\tmov.u32 %r1, ;\n}\n"
    with pytest.raises(SourceError) as info:
        parse_reference(text, "bad.ptx")
    assert (info.value.line, info.value.column) == (6, 15)


def test_shape_cache_round_trip_and_tampering(tmp_path, monkeypatch):
    """Shapes read back from the disk cache build the same AST; a tampered cache is ignored, never run."""
    import json

    from support.paths import FRONTEND_DATA

    from ptxstatic.ptx import parser as P
    from ptxstatic.ptx import shape_cache

    monkeypatch.setenv("PTXSTATIC_CACHE_DIR", str(tmp_path))
    text = (FRONTEND_DATA / "small_sm80_lineinfo.ptx").read_text()
    (tmp_path / "shapes-0123456789abcdef0123.json").write_text("{}")  # a cache of an earlier version
    first = P.StatementParser(use_cache=True)
    monkeypatch.setattr(P, "_statements", first)
    expected = parse_text(text, "a.ptx")
    first.flush()
    assert [p.name for p in tmp_path.iterdir()] == [shape_cache.cache_file().name]  # the old one is removed
    path = shape_cache.cache_file()
    head, *entries = path.read_text().splitlines()
    assert len(entries) > 20

    fresh = P.StatementParser(use_cache=True)
    monkeypatch.setattr(P, "_statements", fresh)
    assert not fresh._shapes  # nothing decoded before a statement of its shape appears
    again = parse_text(text, "a.ptx")
    assert again == expected
    assert [i.line for i in again.kernels[0].instructions] == [i.line for i in expected.kernels[0].instructions]
    assert not fresh._stored and not fresh._new  # every shape came from the cache, none from the grammar
    assert sum(len(s.builders) for s in fresh._shapes.values()) == len(entries)

    bad = []
    for line in entries:  # make every cached template name a function instead of an AST node
        key, _, entry = line.partition("\t")
        fixed, values, _ = json.loads(entry)
        bad.append(f"{key}\t{json.dumps([fixed, values, {'n': '__import__', 'a': ['os']}])}")
    path.write_text("\n".join([head, *bad, entries[0][:15], "[1,\t[2"]) + "\n")  # and truncated lines
    monkeypatch.setattr(P, "_statements", P.StatementParser(use_cache=True))
    assert parse_text(text, "a.ptx") == expected  # each bad entry falls back to the grammar

    path.write_text("{not json")
    monkeypatch.setattr(P, "_statements", P.StatementParser(use_cache=True))
    assert parse_text(text, "a.ptx") == expected
