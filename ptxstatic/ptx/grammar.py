"""Loading the Lark PTX grammar (``grammars/ptx.lark``) and describing its terminals in error messages."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ptxstatic.package_data import data_path
from ptxstatic.user_cache import cache_root

if TYPE_CHECKING:
    from lark import Lark

START_RULES = ["module", "top_stmt", "func_head", "stmt", "section_item"]


def grammar_path() -> Path:
    """The grammar file (``grammars/ptx.lark``, shipped in the package)."""
    return data_path("grammars", "ptx.lark")


@cache
def lark_parser() -> Lark:
    """The LALR parser for every start rule: built once per process (about 0.1 s), or loaded in about 0.01 s
    from Lark's own cache in the user cache directory, which Lark checks against the grammar, the options
    and the Lark and Python versions."""
    from lark import Lark

    text = grammar_path().read_text()
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        start=START_RULES,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=_table_cache(text) or False,
    )


def _table_cache(grammar: str) -> str | None:
    """Where Lark caches the parse tables (None when caching is off or the directory cannot be made)."""
    import hashlib

    root = cache_root()
    if root is None:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(root / f"lark-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.cache")


_NAMED = {
    "WORD": "an opcode, label or symbol",
    "REG": "a register",
    "NUMBER": "a number",
    "STRING": "a string",
    "DOTWORD": "a directive or type such as .b32",
    "SPACE": "a state space such as .reg or .shared",
    "LINKAGE": ".visible, .extern, .weak or .common",
    "FUNC_KIND": ".entry or .func",
    "PERF_DIR": "a performance directive such as .maxntid",
    "$END": "end of input",
}


def describe_terminal(name: str) -> str:
    """A terminal name as a user reads it: ``';'`` rather than ``SEMICOLON``."""
    if name in _NAMED:
        return _NAMED[name]
    try:
        pattern = lark_parser().get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        return repr(pattern.value).replace('"', "'")
    return name.lower()


_OPERAND_START = frozenset({"REG", "WORD", "NUMBER", "LSQB", "LBRACE", "LPAR", "BANG", "MINUS"})


def describe_expected(names: set[str] | frozenset[str]) -> str:
    """The terminals a parser state accepts, in words; operand starts collapse to 'an operand'."""
    names = set(names)
    shown = []
    if {"REG", "WORD", "NUMBER", "LSQB"} <= names:
        names -= _OPERAND_START
        shown.append("an operand (register, symbol, number, [address] or {vector})")
    shown += sorted({describe_terminal(n) for n in names})
    if len(shown) > 8:
        shown = [*shown[:8], "..."]
    return ", ".join(shown)
