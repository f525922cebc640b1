"""Mutated PTX never makes the parser fail with anything but the documented SourceError."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import FRONTEND_DATA

from ptxstatic.errors import SourceError
from ptxstatic.ptx import parse_text
from ptxstatic.ptx.ast import Module

BASE = (FRONTEND_DATA / "small_sm80_lineinfo.ptx").read_text()
PIECES = [";", "{", "}", "[", "]", ",", "%r1", "@%p1", "@!", ".reg", ".b32", "<", ">", "0f3F80", "-", "+",
          "\n", " ", '"', "//", "/*", ":", "::", ".loc 1 2", ".section", "$L__BB0_3", "0x", "|", "!", "(", ")",
          ".entry", ".func", "_", "9999999999999999999999", "\t", "ret;", "bra", "=", ".align", "\x00", "é"]

mutation = st.tuples(
    st.sampled_from(["delete", "insert", "replace", "duplicate_line", "drop_line", "truncate"]),
    st.floats(min_value=0, max_value=1, allow_nan=False),
    st.integers(min_value=1, max_value=40),
    st.sampled_from(PIECES),
)


def mutate(text: str, ops: list) -> str:
    for kind, where, size, piece in ops:
        i = int(where * len(text))
        if kind == "delete":
            text = text[:i] + text[i + size:]
        elif kind == "insert":
            text = text[:i] + piece + text[i:]
        elif kind == "replace":
            text = text[:i] + piece + text[i + len(piece):]
        elif kind == "truncate":
            text = text[:i]
        else:
            lines = text.split("\n")
            j = min(int(where * len(lines)), len(lines) - 1)
            if kind == "duplicate_line":
                lines.insert(j, lines[j])
            else:
                del lines[j]
            text = "\n".join(lines)
    return text


def check_error(err: SourceError, text: str) -> None:
    assert err.file == "fuzz.ptx"
    assert 1 <= err.line <= text.count("\n") + 2
    assert err.column >= 1
    assert err.message and "\n" not in err.message.strip()
    assert err.render().startswith(f"fuzz.ptx:{err.line}:{err.column}: error: ")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation, min_size=1, max_size=4))
def test_mutated_ptx_parses_or_reports(ops):
    text = mutate(BASE, ops)
    try:
        result = parse_text(text, "fuzz.ptx")
        assert isinstance(result, Module)
    except SourceError as err:
        check_error(err, text)
    recovered = parse_text(text, "fuzz.ptx", recover=True)
    for err in recovered.errors:
        check_error(err, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map(" ".join))
def test_random_statements_inside_a_function(body):
    text = ".version 8.0\n.target sm_80\n.visible .entry k()\n{\n" + body + "\n}\n"
    try:
        parse_text(text, "fuzz.ptx")
    except SourceError as err:
        check_error(err, text)
