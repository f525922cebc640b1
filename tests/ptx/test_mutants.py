"""The mutant generator: deterministic, every kind reachable, each mutant one edit away from its fixture."""

from __future__ import annotations

import difflib

import pytest
from support.mutants import KINDS, mutants
from support.paths import FIXTURES

from ptxstatic.errors import SourceError
from ptxstatic.ptx import parse_text

FIXTURE = FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx"


def test_same_seed_same_mutants_other_seed_others():
    text = FIXTURE.read_text()
    first = mutants(text, 7, 40)
    assert len(first) == 40
    assert first == mutants(text, 7, 40)
    assert [m.text for m in first] != [m.text for m in mutants(text, 8, 40)]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_edits_one_place(kind):
    text = FIXTURE.read_text()
    found = mutants(text, 3, 10, kinds=(kind,))
    assert len(found) == 10
    for m in found:
        assert m.kind == kind and m.text != text
        changed = [op for op in difflib.SequenceMatcher(None, text.split("\n"), m.text.split("\n")).get_opcodes()
                   if op[0] != "equal"]
        assert len(changed) == 1, (m.detail, changed)
        assert changed[0][1] in (m.line - 1, m.line), m.detail  # a duplicate may be seen after the line


def test_mutants_parse_or_raise_the_documented_error():
    text = FIXTURE.read_text()
    for m in mutants(text, 11, 60):
        try:
            parse_text(m.text, "mutant.ptx")
        except SourceError as err:
            assert err.file == "mutant.ptx" and err.message


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown mutant kinds"):
        mutants("", 0, 1, kinds=("nonsense",))
