"""Parsing PTX text into a :class:`~ptxstatic.ptx.ast.Module`.

Two paths give the same AST:

* :func:`parse_reference` runs the Lark LALR grammar over the whole file.
* :func:`parse_text` (the default) splits the file into statements with one regular expression, and parses
  each statement with the same grammar, but only once per *statement shape*: the statement with its values
  (registers, symbols, numbers, strings) taken out. The builder compiles each shape's AST into a function
  of those values, so a file of 25,000 lines with a few hundred shapes costs a few hundred Lark parses.

Errors are :class:`~ptxstatic.errors.SourceError` (``FILE:LINE:COL: error: ...``). With ``recover=True``
a function containing an error is skipped, the error is kept in ``Module.errors``, and parsing goes on at
the next function.
"""

from __future__ import annotations

import atexit
import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptxstatic.errors import SourceError
from ptxstatic.limits import MAX_BLOCK_NESTING, SHAPE_CACHE_ENTRIES
from ptxstatic.ptx import ast as A
from ptxstatic.ptx import shape_cache
from ptxstatic.ptx.fatbin_dump import ptx_of_dump
from ptxstatic.ptx.grammar import describe_expected, describe_terminal, lark_parser
from ptxstatic.ptx.names import resolve_registers
from ptxstatic.ptx.source_map import SourceLocator
from ptxstatic.ptx.templates import compile_template, interpret_template, template_from_data, template_to_data

if TYPE_CHECKING:
    from lark import Tree
    from lark.exceptions import UnexpectedInput

# Lark and the builder are imported where a statement shape is new: a process whose shapes are all in the
# on-disk cache never loads them.

# ----------------------------------------------------------------------------------- lexical pieces
_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*[\s\S]*?\*/')
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
SECTION_LINE = "expected a label or a .b8/.b16/.b32/.b64 line inside a section"

def _nested_braces(depth: int) -> str:
    """A regex for a ``{...}`` group holding no ';', with up to ``depth`` levels of nested braces."""
    inner = r"[^{};]*"
    for _ in range(depth):
        inner = r"(?:[^{};]|\{" + inner + r"\})*"
    return r"\{" + inner + r"\}"


_STATEMENT = re.compile(
    r"""[ \t\r\n]*+(?:
      (?P<brace>[{}])
    | (?P<label>[A-Za-z_$][\w$]*+)[ \t\r\n]*:(?!:)
    | (?P<line>\.(?:loc|file|version|target|address_size|section)(?![\w$])[^\n{};]*)
    | (?P<data>\.b(?:8|16|32|64)(?![\w$])[^\n{};]*)
    | (?P<stmt>(?:[^;{}"]++|"(?:\\.|[^"\\\n])*"|BRACES)+;)
    | (?P<head>[^;{}"]+)(?=\{)
    )""".replace("BRACES", r"(?=\{\s*[^\s}])" + _nested_braces(5)),  # an empty {} is a function body
    re.X,
)
_TRAILING_SPACE = re.compile(r"[ \t\r\n]*\Z")


def _terminal(name: str) -> str:
    """A terminal's regex from the grammar, its groups made non-capturing."""
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", lark_parser().get_terminal(name).pattern.to_regexp())


def _value_pattern() -> re.Pattern[str]:
    """Regexes that find the *values* of a statement: the grammar's STRING, NUMBER, REG and WORD tokens.

    WORD-shaped keywords of the grammar (``generic``, ``function_name``, ...) are not values: they stay in
    the shape.
    """
    word = re.compile(_terminal("WORD"))
    keywords = sorted(
        t.pattern.value for t in lark_parser().terminals
        if t.pattern.type == "str" and word.fullmatch(t.pattern.value)
    )
    kw = "|".join(re.escape(k) for k in keywords)
    body = (  # each alternative guarded by its first character, which is cheaper than trying them all
        f"(?=%){_terminal('REG')}|(?=[A-Za-z_$])(?!(?:{kw})(?![\\w$.])){_terminal('WORD')}"
        f"|(?=\\d){_terminal('NUMBER')}|(?=\"){_terminal('STRING')}"
    )
    return re.compile(r"(?<![\w$.%])(" + body + ")")


@dataclass
class _Shape:
    """What is known about one statement shape: which values are fixed, and one function per fixed set."""

    fixed: tuple[int, ...] = ()
    builders: dict[tuple[str, ...], Callable[..., Any]] = field(default_factory=dict)
    cacheable: bool = True


class StatementParser:
    """Parses single statements through the grammar, caching one compiled builder per statement shape.

    With ``use_cache`` the shapes compiled by earlier processes are read from the on-disk shape cache
    (:mod:`ptxstatic.ptx.shape_cache`) and new ones are added to it by :meth:`flush`.
    """

    def __init__(self, use_cache: bool = True) -> None:
        regex, stored = shape_cache.load() if use_cache else (None, {})
        self._value_re = re.compile(regex) if regex else _value_pattern()
        self._shapes: dict[tuple[str, str, str], _Shape] = {}
        self._stored = stored  # shapes on disk not yet used by this process, by shape_cache.shape_key
        self._new: list[list[Any]] = []

    def _from_disk(self, shape_key: tuple[str, str, str]) -> _Shape | None:
        """The shape as the disk cache knows it (its templates decoded when first used), if it does."""
        entries = self._stored.pop(shape_cache.shape_key(*shape_key), None) if self._stored else None
        if not entries:
            return None
        shape: _Shape | None = None
        for entry in entries:
            try:
                fixed, values, data = shape_cache.decode_entry(entry)
            except ValueError:
                continue
            shape = shape or self._shapes.setdefault(shape_key, _Shape(fixed))
            if shape.fixed == fixed:
                shape.builders[values] = _lazy_builder(shape, values, data)
        return shape

    def parse(self, rule: str, text: str, filename: str, line: int, col: int, source: str) -> Any:
        parts = self._value_re.split(text)  # text, value, text, value, ..., text
        values = parts[1::2]
        # the shape: the text around the values, and each value's first character (its token kind)
        shape_key = (rule, "\x00".join(parts[0::2]), "".join([v[0] for v in values]))
        shape = self._shapes.get(shape_key) or self._from_disk(shape_key)
        if shape is not None and shape.cacheable:
            build = shape.builders.get(tuple([values[i] for i in shape.fixed]) if shape.fixed else ())
            if build is not None:
                try:
                    return build(values, line, col)
                except ValueError:
                    pass  # a value of the wrong kind for its place: let the grammar report it
        tree = self._lark(rule, text, filename, line, col, source)
        if len(self._shapes) > SHAPE_CACHE_ENTRIES:
            self._shapes.clear()
        shape = self._shapes.setdefault(shape_key, _Shape())
        if shape.cacheable:
            self._compile(shape, shape_key, tree, text, values, filename, line, col)
            build = shape.builders.get(tuple([values[i] for i in shape.fixed]))
            if shape.cacheable and build is not None:
                try:
                    return build(values, line, col)
                except ValueError:
                    pass
        from ptxstatic.ptx.builder import Builder

        return run_builder(Builder(filename, source, line, col), tree)

    def _lark(self, rule: str, text: str, filename: str, line: int, col: int, source: str) -> Tree:
        from lark.exceptions import UnexpectedInput

        try:
            return lark_parser().parse(text, start=rule)
        except UnexpectedInput as exc:
            raise _error(exc, filename, text, line, col, source) from None

    def _compile(self, shape: _Shape, shape_key: tuple[str, str, str], tree: Tree, text: str,
                 values: list[str], filename: str, line: int, col: int) -> None:
        from lark import Token

        from ptxstatic.ptx.builder import Builder

        spans = [m.span(1) for m in self._value_re.finditer(text)]
        tokens = {(t.start_pos, t.end_pos) for t in tree.scan_values(lambda t: isinstance(t, Token))}
        if any(s not in tokens for s in spans):
            shape.cacheable = False  # the grammar tokenises this shape differently: always parse it
            return
        builder = Builder(filename, text, line, col, slots={s[0]: i for i, s in enumerate(spans)})
        template = run_builder(builder, tree)
        fixed = tuple(i for i in range(len(spans)) if i not in builder.used)
        if shape.builders and fixed != shape.fixed:
            shape.cacheable = False
            return
        shape.fixed = fixed
        key = tuple(values[i] for i in fixed)
        shape.builders[key] = _lazy_builder(shape, key, template=template)
        self._new.append([*shape_key, list(fixed), list(key), template_to_data(template)])

    def flush(self) -> None:
        """Add the shapes compiled since the last flush to the on-disk cache."""
        if self._new:
            shape_cache.save(self._value_re.pattern, self._new)
            self._new = []


#: a cached shape is interpreted from its template until it has been used this often, then compiled
COMPILE_AFTER = 16


def _lazy_builder(shape: _Shape, key: tuple[str, ...], data: Any = None, template: Any = None) -> Callable[..., Any]:
    """A builder for a shape, from its template or from the disk cache's data (bad data raises ValueError:
    the grammar decides). It interprets the template until the shape is used often, then compiles it."""
    state: dict[str, Any] = {}
    if template is not None:
        state.update(template=template, run=interpret_template(template), uses=0)

    def build(v: list[str], line: int, col: int) -> Any:
        if "run" not in state:  # made whole in one update: threads parsing at once see all of it or none
            made = template_from_data(data)
            state.update(template=made, run=interpret_template(made), uses=0)
        state["uses"] += 1
        if state["uses"] == COMPILE_AFTER:
            shape.builders[key] = compile_template(state["template"])
        return state["run"](v, line, col)

    return build


def run_builder(builder: Any, tree: Tree) -> Any:
    """Run the builder (a :class:`~ptxstatic.ptx.builder.Builder`), unwrapping the errors it raises from
    Lark's VisitError."""
    from lark.exceptions import VisitError

    try:
        return builder.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, SourceError):
            raise exc.orig_exc from None
        raise


_statements: StatementParser | None = None


def _statement_parser() -> StatementParser:
    global _statements
    if _statements is None:
        _statements = StatementParser()
        atexit.register(_statements.flush)
    return _statements


def flush_shape_cache() -> None:
    """Write the statement shapes compiled so far (if anything was parsed) to the on-disk cache now, rather than
    at exit."""
    if _statements is not None:
        _statements.flush()


# ------------------------------------------------------------------------------------------ errors
def _error(exc: UnexpectedInput, filename: str, text: str, line0: int, col0: int, source: str) -> SourceError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    rel_line = getattr(exc, "line", 1) or 1
    rel_col = getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedEOF) or getattr(getattr(exc, "token", None), "type", "") == "$END":
        end = len(text.rstrip())
        rel_line = text.count("\n", 0, end) + 1
        rel_col = end - (text.rfind("\n", 0, end) + 1) + 1
    line = line0 + rel_line - 1
    col = col0 + rel_col - 1 if rel_line == 1 else rel_col
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            found = "end of statement"
        else:
            kind = describe_terminal(tok.type)
            found = repr(str(tok)) + ("" if kind.startswith("'") else f" ({kind})")
        msg = f"unexpected {found}; expected {describe_expected(exc.accepts or exc.expected)}"
    elif isinstance(exc, UnexpectedCharacters):
        msg = f"unexpected character {text[exc.pos_in_stream]!r}"
        if exc.allowed:
            msg += f"; expected {describe_expected(exc.allowed)}"
    elif isinstance(exc, UnexpectedEOF):
        msg = f"unexpected end of input; expected {describe_expected(set(exc.expected))}"
    else:
        msg = str(exc).splitlines()[0]
    return SourceError(filename, line, col, msg, _line_of(source, line))


def _line_of(source: str, line: int) -> str:
    start = 0
    for _ in range(line - 1):
        start = source.find("\n", start) + 1
        if start == 0:
            return ""
    end = source.find("\n", start)
    return source[start:] if end < 0 else source[start:end]


# ------------------------------------------------------------------------------------- the fast path
def _strip_comments(text: str) -> str:
    if "/" not in text:
        return text

    def blank(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] == '"':
            return s
        return re.sub(r"[^\n]", " ", s)

    return _COMMENT.sub(blank, text)


class _Frame:
    """An open ``{`` scope: a function body, a nested block or a section."""

    __slots__ = ("items", "kind", "line", "owner")

    def __init__(self, kind: str, owner: Any, line: int) -> None:
        self.kind = kind  # "function", "block" or "section"
        self.items: list[Any] = []
        self.owner = owner
        self.line = line


@dataclass
class Deferred:
    """A function whose body has not been parsed yet: its header, and where its body starts."""

    head: A.Function
    start: int  # offset just after the body's '{'
    end: int  # offset just after the matching '}'
    line: int  # line of the '{'
    line_start: int  # offset of that line's first character


class _Reader:
    """The statement loop over one PTX text, from ``pos`` to the end or to the close of a function body.

    With ``defer`` set, a function body at the top level is not parsed: the function becomes a
    :class:`Deferred` in the items, to be parsed later by :meth:`body`.
    """

    def __init__(self, text: str, filename: str, recover: bool) -> None:
        self.text = text
        self.clean = _strip_comments(text)
        self.filename = filename
        self.recover = recover
        self.errors: list[SourceError] = []
        self.sp = _statement_parser()
        if not text.isascii():  # ptxas stops at the first non-ASCII character, in a comment too
            self._non_ascii()

    def _non_ascii(self) -> None:
        at = _NON_ASCII.search(self.text).start()  # type: ignore[union-attr]
        line = self.text.count("\n", 0, at) + 1
        column = at - self.text.rfind("\n", 0, at)
        char = self.text[at]
        self._fail(SourceError(self.filename, line, column,
                               f"non-ASCII character {char!r} (U+{ord(char):04X}): PTX is ASCII text",
                               _line_of(self.text, line)))

    def _fail(self, err: SourceError) -> None:
        if not self.recover:
            raise err
        self.errors.append(err)

    def run(self, items: list, stack: list[_Frame], pos: int, line: int, line_start: int,
            defer: bool = False) -> None:
        """Parse statements into ``items`` (the top level) and ``stack`` (open scopes) from ``pos``; with a
        non-empty ``stack``, stop when its bottom frame closes."""
        clean, text, filename, sp = self.clean, self.text, self.filename, self.sp
        pending: Any = None  # a function header or section name waiting for its "{"
        n = len(clean)
        match = _STATEMENT.match
        nested = bool(stack)
        while pos < n and (stack or not nested):
            m = match(clean, pos)
            if m is None:
                if not _TRAILING_SPACE.match(clean, pos):
                    start = pos + len(clean[pos:]) - len(clean[pos:].lstrip())
                    line += clean.count("\n", pos, start)
                    col = start - clean.rfind("\n", 0, start)
                    in_section = stack and stack[-1].kind == "section"
                    what = SECTION_LINE if in_section else "unterminated statement; expected ';'"
                    self._fail(SourceError(filename, line, col, what, _line_of(text, line)))
                pos = n
                break
            kind = m.lastgroup
            start = m.start(kind)
            nl = clean.count("\n", pos, start)
            if nl:
                line += nl
                line_start = clean.rfind("\n", 0, start) + 1
            col = start - line_start + 1
            body = m.group(kind)
            end = m.end()
            try:
                if kind == "stmt" and stack and stack[-1].kind != "section":  # the common case, kept inline
                    stack[-1].items.append(sp.parse("stmt", body, filename, line, col, text))
                elif defer and kind == "brace" and body == "{" and isinstance(pending, A.Function) and not stack:
                    end = self._defer(items, pending, end, line, line_start)
                    pending = None
                else:
                    pending = _dispatch(sp, kind, body, filename, line, col, text, items, stack, pending)
            except SourceError as err:
                self._fail(err)
                end, pending = _resync(clean, m.end(), stack)
            nl = clean.count("\n", start, end)
            if nl:
                line += nl
                line_start = clean.rfind("\n", 0, end) + 1
            pos = end
        if stack or pending is not None:
            what = stack[-1].owner if stack else pending
            name = getattr(what, "name", what)
            line_open = stack[-1].line if stack else line
            self._fail(SourceError(filename, line_open, 1, f"'{{' of {name} is never closed; expected '}}'",
                                   _line_of(text, line_open)))

    def _defer(self, items: list, head: A.Function, start: int, line: int, line_start: int) -> int:
        """Record a function body as :class:`Deferred` and return the offset after it; a body whose '}' is
        missing is parsed now, so that its error is reported where the whole file is read."""
        end = _matching_brace(self.clean, start)
        if end < 0:
            stack = [_Frame("function", head, line)]
            self.run(items, stack, start, line, line_start)
            return len(self.clean)
        items.append(Deferred(head, start, end, line, line_start))
        return end

    def body(self, deferred: Deferred) -> A.Function | None:
        """Parse a deferred function's body; None where it has an error (kept in ``errors``)."""
        items: list = []
        stack = [_Frame("function", dataclasses.replace(deferred.head), deferred.line)]  # the head stays bodiless
        self.run(items, stack, deferred.start, deferred.line, deferred.line_start)
        return items[0] if items else None


_BRACE_OR_STRING = re.compile(r'[{}]|"(?:\\.|[^"\\\n])*"')


def _matching_brace(clean: str, pos: int) -> int:
    """The offset after the '}' closing the '{' just before ``pos``, or -1."""
    depth = 1
    for m in _BRACE_OR_STRING.finditer(clean, pos):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return m.end()
    return -1


def parse_text(text: str, filename: str = "<ptx>", recover: bool = False) -> A.Module:
    """Parse PTX text. Raises :class:`SourceError` on the first error unless ``recover`` is set."""
    reader = _Reader(text, filename, recover)
    items: list[A.TopItem] = []
    reader.run(items, [], 0, 1, 0)
    module = A.Module(filename, items, reader.errors)
    _finish(module)
    return module


class ModuleStream:
    """A PTX file read one function at a time, so that memory holds one function's AST, not the file's.

    ``module`` holds every top-level item but the functions with a body (directives, variables, function
    declarations, ``.file`` directives, sections), parsed when the stream is made; :meth:`functions`
    parses each function when it is reached, with its registers resolved and its source locations set, as
    :func:`parse_text` would. Errors (with ``recover``) gather in ``module.errors`` as they are met.
    """

    def __init__(self, text: str, filename: str = "<ptx>", recover: bool = False) -> None:
        self._reader = _Reader(text, filename, recover)
        items: list[Any] = []
        self._reader.run(items, [], 0, 1, 0, defer=True)
        self.deferred = [i for i in items if isinstance(i, Deferred)]
        self.module = A.Module(filename, [i for i in items if not isinstance(i, Deferred)], self._reader.errors)
        for fn in self.module.functions:
            resolve_registers(fn)
        self._locations = SourceLocator(self.module)

    def functions(self, select: Callable[[A.Function], bool] | None = None) -> Iterator[A.Function]:
        """The functions with a body, in file order; with ``select``, only those whose header it accepts
        (the others are not parsed)."""
        for d in self.deferred:
            if select is not None and not select(d.head):
                continue
            fn = self._reader.body(d)
            if fn is None:
                continue
            resolve_registers(fn)
            self._locations.attach(fn)
            self._locations.forget()  # nothing is kept from one function to the next
            yield fn


def _dispatch(sp: StatementParser, kind: str, body: str, filename: str, line: int, col: int, text: str,
              items: list, stack: list[_Frame], pending: Any) -> Any:
    """Handle one statement of the splitter; returns the new pending header/section."""
    top = stack[-1] if stack else None

    def fail(msg: str) -> SourceError:
        return SourceError(filename, line, col, msg, _line_of(text, line))

    if kind == "brace":
        if body == "{":
            if pending is not None:
                frame_kind = "section" if isinstance(pending, str) else "function"
                stack.append(_Frame(frame_kind, pending, line))
                return None
            if top is None or (top.kind != "function" and top.kind != "block"):
                raise fail("unexpected '{'")
            stack.append(_Frame("block", None, line))
            if len(stack) > MAX_BLOCK_NESTING + 1:  # the function's frame and its blocks (recovery skips them all)
                raise fail(f"blocks nested more than {MAX_BLOCK_NESTING} deep (as deep as ptxas parses)")
            return None
        if top is None:
            raise fail("unexpected '}' with no open '{'")
        stack.pop()
        _close(top, items, stack)
        return None
    if pending is not None:
        raise fail("expected '{' after " + ("the .section name" if isinstance(pending, str) else "function header"))
    if top is None:
        if kind == "head":
            return sp.parse("func_head", body.rstrip(), filename, line, col, text)
        if kind == "line" and body.startswith(".section"):
            name = body.split()
            if len(name) != 2:
                raise fail("expected one section name after .section")
            return name[1]
        if kind in ("label", "data"):
            raise fail(f"unexpected {'label' if kind == 'label' else body.split()[0]} outside a function or section")
        items.append(sp.parse("top_stmt", body, filename, line, col, text))
        return None
    if top.kind == "section":
        if kind == "label":
            top.items.append(A.SectionEntry("", (), body))
        elif kind == "data":
            top.items.append(sp.parse("section_item", body, filename, line, col, text))
        else:
            raise fail(SECTION_LINE)
        return None
    if kind == "label":
        top.items.append(A.Label(body, line, col))
    elif kind == "head":
        raise fail("expected ';' before '{'")
    elif kind == "data" or (kind == "line" and not body.startswith(".loc")):
        raise fail(f"{body.split()[0]} is not allowed inside a function")
    else:
        top.items.append(sp.parse("stmt", body, filename, line, col, text))
    return None


def _close(frame: _Frame, items: list, stack: list[_Frame]) -> None:
    if frame.kind == "section":
        items.append(A.Section(frame.owner[1:], tuple(frame.items), frame.line))
    elif frame.kind == "function":
        frame.owner.body = tuple(frame.items)
        items.append(frame.owner)
    else:
        stack[-1].items.append(A.Block(tuple(frame.items), frame.line))


def _resync(clean: str, pos: int, stack: list[_Frame]) -> tuple[int, None]:
    """After an error, skip to the end of the enclosing function (or the current top-level statement)."""
    if not stack:
        j = clean.find(";", pos)
        brace = clean.find("{", pos)
        if brace != -1 and (j == -1 or brace < j):  # a broken function header: skip its body
            stack.append(_Frame("function", None, 0))
            pos = brace + 1
        else:
            return (len(clean) if j == -1 else j + 1), None
    depth = len(stack)
    stack.clear()
    i = pos
    while depth and i < len(clean):
        c = clean[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"':
            close = clean.find('"', i + 1)
            i = close if close != -1 else len(clean)
        i += 1
    return i, None


# -------------------------------------------------------------------------------- the reference path
def parse_reference(text: str, filename: str = "<ptx>") -> A.Module:
    """Parse with the Lark grammar over the whole file (slower; the fast path must agree with it)."""
    from lark.exceptions import LarkError, UnexpectedInput

    from ptxstatic.ptx.builder import Builder

    try:
        tree = lark_parser().parse(text, start="module")
    except UnexpectedInput as exc:
        raise _error(exc, filename, text, 1, 1, text) from None
    except LarkError as exc:  # pragma: no cover - grammar bugs
        raise SourceError(filename, 1, 1, str(exc)) from None
    module = A.Module(filename, run_builder(Builder(filename, text), tree))
    _finish(module)
    return module


def _finish(module: A.Module) -> None:
    """Post-parse passes shared by both paths: register names, then source locations."""
    locations = SourceLocator(module)
    for fn in module.functions:
        resolve_registers(fn)
        locations.attach(fn)


def read_ptx(path: str | Path) -> str:
    """A PTX file's text (the highest architecture's PTX of a ``cuobjdump -ptx`` dump); bad UTF-8 or an
    unreadable file is a :class:`SourceError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = p.read_bytes()[: exc.start].count(b"\n") + 1
        raise SourceError(str(path), line, 1, "file is not UTF-8 text (is it a cubin or an object file?)") from None
    except OSError as exc:
        raise SourceError(str(path), 0, 0, exc.strerror or str(exc)) from None
    if text.startswith("\x7fELF"):
        raise SourceError(str(path), 1, 1, "file is an ELF binary (a cubin or an object file), not PTX text")
    refuse_nul(text, str(path), "file is binary (a NUL byte at offset {at}), not PTX text")
    return ptx_of_dump(text, str(path))


def refuse_nul(text: str, shown: str, message: str) -> None:
    """A one-line :class:`SourceError` at ``text``'s first NUL character, if it has one: binary, not source
    (``message`` names the offset as ``{at}``)."""
    at = text.find("\0")
    if at >= 0:
        raise SourceError(shown, text.count("\n", 0, at) + 1, 1, message.format(at=at))


def parse_file(path: str | Path, recover: bool = False) -> A.Module:
    """Read and parse a PTX file (errors as :func:`read_ptx` and :func:`parse_text` give them)."""
    return parse_text(read_ptx(path), str(path), recover=recover)
