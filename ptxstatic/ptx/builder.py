"""Turns Lark parse trees of the PTX grammar into AST nodes.

The builder also runs in *template mode*: given which tokens are variable values (registers, symbols,
numbers, strings), it builds the AST with those values replaced by expressions ``v[i]`` and compiles it to
a function. The fast parser (``ptxstatic.ptx.parser``) reuses such a function for every statement of the same
shape, so the grammar decides the structure of each statement shape once.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer, v_args

from ptxstatic.errors import SourceError
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.templates import S, to_int


class _Tag:
    """A tagged intermediate value (linkage word, declaration attribute, parameter list, guard)."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any) -> None:
        self.kind = kind
        self.value = value


class Builder(Transformer):
    """Lark tree -> AST. ``slots`` maps token start offsets to template value indices (template mode)."""

    def __init__(self, filename: str, text: str, line0: int = 1, col0: int = 1,
                 slots: dict[int, int] | None = None) -> None:
        super().__init__(visit_tokens=False)
        self.filename = filename
        self.text = text
        self.line0 = line0
        self.col0 = col0
        self.slots = slots
        self.used: set[int] = set()

    # ---------------------------------------------------------------------------- values and positions
    def _v(self, tok: Token) -> Any:
        """A token's text, or in template mode the expression for its value slot."""
        if self.slots is not None:
            i = self.slots.get(tok.start_pos)
            if i is not None:
                self.used.add(i)
                return S("v", i)
        return str(tok)

    def _int(self, value: Any, tok: Token | None = None) -> Any:
        if isinstance(value, S):
            return S("int", value)
        try:
            return to_int(value)
        except ValueError as exc:
            line, col = self._tok_pos(tok) if tok is not None else (self.line0, self.col0)
            raise SourceError(self.filename, line, col, str(exc), self._source_line(line)) from None

    def _tok_pos(self, tok: Token) -> tuple[int, int]:
        line = self.line0 + tok.line - 1
        col = self.col0 + tok.column - 1 if tok.line == 1 else tok.column
        return line, col

    def _pos(self, meta: Any) -> tuple[Any, Any]:
        if self.slots is not None:
            return S("line"), S("col")
        if getattr(meta, "empty", True):
            return self.line0, self.col0
        line = self.line0 + meta.line - 1
        col = self.col0 + meta.column - 1 if meta.line == 1 else meta.column
        return line, col

    def _source_line(self, line: int) -> str:
        lines = self.text.splitlines()
        rel = line - self.line0
        return lines[rel] if 0 <= rel < len(lines) else ""

    # ------------------------------------------------------------------------------------ top level
    def module(self, items: list) -> list:
        return items

    def top_stmt(self, c: list) -> Any:
        return c[0]

    @v_args(meta=True)
    def version(self, meta: Any, c: list) -> A.Directive:
        return A.Directive("version", (self._v(c[0]),), self._pos(meta)[0])

    @v_args(meta=True)
    def target(self, meta: Any, c: list) -> A.Directive:
        return A.Directive("target", tuple(self._v(t) for t in c), self._pos(meta)[0])

    @v_args(meta=True)
    def address_size(self, meta: Any, c: list) -> A.Directive:
        return A.Directive("address_size", (self._v(c[0]),), self._pos(meta)[0])

    @v_args(meta=True)
    def alias(self, meta: Any, c: list) -> A.Directive:
        return A.Directive("alias", (self._v(c[0]), self._v(c[1])), self._pos(meta)[0])

    def file_dir(self, c: list) -> A.FileDirective:
        nums = [self._int(self._v(t), t) for t in c[2:]]
        return A.FileDirective(self._int(self._v(c[0]), c[0]), _unquote(self._v(c[1])), *nums)

    @v_args(meta=True)
    def loc(self, meta: Any, c: list) -> A.LocDirective:
        n = [self._int(self._v(t), t) for t in (c[0], c[1], c[2])]
        fn, at = "", None
        if len(c) > 3:
            fn = self._v(c[3])
            at = tuple(self._int(self._v(t), t) for t in c[4:7])
        return A.LocDirective(n[0], n[1], n[2], fn, at, self._pos(meta)[0])

    @v_args(meta=True)
    def pragma(self, meta: Any, c: list) -> A.Pragma:
        return A.Pragma(tuple(self._v(t) for t in c), self._pos(meta)[0])

    @v_args(meta=True)
    def section(self, meta: Any, c: list) -> A.Section:
        return A.Section(str(c[0])[1:], tuple(c[1:]), self._pos(meta)[0])

    def section_item(self, c: list) -> A.SectionEntry:
        if isinstance(c[0], A.Label):
            return A.SectionEntry("", (), c[0].name)
        return A.SectionEntry(str(c[0])[1:], tuple(c[1:]))

    # ------------------------------------------------------------------------------------ variables
    @v_args(meta=True)
    def var_stmt(self, meta: Any, c: list) -> A.VarDecl:
        return c[0]

    @v_args(meta=True)
    def var_decl(self, meta: Any, c: list) -> A.VarDecl:
        linkage = tuple(x.value for x in c if isinstance(x, _Tag) and x.kind == "linkage")
        rest = [x for x in c if not (isinstance(x, _Tag) and x.kind == "linkage")]
        space = str(rest[0])[1:]
        decl = self._decl(space, rest[1:])
        decl.linkage = linkage
        decl.line, decl.column = self._pos(meta)
        return decl

    def _decl(self, space: str, items: list) -> A.VarDecl:
        attrs, attributes, names = [], [], []
        align = init = ptr_align = None
        for x in items:
            if isinstance(x, _Tag):
                if x.kind == "attr":
                    attrs.append(x.value)
                elif x.kind == "align" and "ptr" in attrs:
                    ptr_align = x.value
                elif x.kind == "align":
                    align = x.value
                else:
                    attributes.extend(x.value)
            elif isinstance(x, A.Declarator):
                names.append(x)
            else:
                init = x
        return A.VarDecl(space, tuple(attrs), tuple(names), (), align, tuple(attributes), init, ptr_align)

    def linkage(self, c: list) -> _Tag:
        return _Tag("linkage", str(c[0])[1:])

    def decl_attr(self, c: list) -> _Tag:
        if not c:
            raise AssertionError("empty declaration attribute")
        if isinstance(c[0], str) and not isinstance(c[0], Token):
            return _Tag("attribute", tuple(c))
        tok = c[0]
        if tok.type == "DOTWORD":
            return _Tag("attr", str(tok)[1:])
        if tok.type == "NUMBER":
            return _Tag("align", self._int(self._v(tok), tok))
        return _Tag("attribute", tuple(c))

    def attr_item(self, c: list) -> str:
        word = str(c[0])
        return word + (f"({', '.join(str(t) for t in c[1:])})" if len(c) > 1 else "")

    def declarator(self, c: list) -> A.Declarator:
        return A.Declarator(self._v(c[0]), None, c[1] if len(c) > 1 else ())

    def reg_range(self, c: list) -> A.Declarator:
        return A.Declarator(self._v(c[0]), self._int(self._v(c[1]), c[1]))

    def dims(self, c: list) -> tuple:
        return tuple(None if t is None else self._int(self._v(t), t) for t in c)

    def init_list(self, c: list) -> A.InitList:
        return A.InitList(tuple(c))

    def add(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "+", c[1])

    def sub(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "-", c[1])

    def mul(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "*", c[1])

    def div(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "/", c[1])

    def mod(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "%", c[1])

    def shl(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "<<", c[1])

    def shr(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], ">>", c[1])

    def band(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "&", c[1])

    def bxor(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "^", c[1])

    def bor(self, c: list) -> A.BinOp:
        return A.BinOp(c[0], "|", c[1])

    def bnot(self, c: list) -> A.Unary:
        return A.Unary("~", c[0])

    def cneg(self, c: list) -> A.Unary:
        return A.Unary("-", c[0])

    def sym(self, c: list) -> A.Sym:
        return A.Sym(self._v(c[0]))

    def generic(self, c: list) -> A.Generic:
        return A.Generic(self._v(c[0]))

    def num(self, c: list) -> A.Imm:
        return A.Imm(self._v(c[0]))

    def neg_num(self, c: list) -> A.Imm:
        return A.Imm("-" + self._v(c[0]))

    # ------------------------------------------------------------------------------------ functions
    def function(self, c: list) -> A.Function:
        head, body = c
        head.body = body
        return head

    def func_decl(self, c: list) -> A.Function:
        return c[0]

    @v_args(meta=True)
    def func_head(self, meta: Any, c: list) -> A.Function:
        linkage = tuple(x.value for x in c if isinstance(x, _Tag) and x.kind == "linkage")
        kind = next(str(x)[1:] for x in c if isinstance(x, Token) and x.type == "FUNC_KIND")
        name = self._v(next(x for x in c if isinstance(x, Token) and x.type == "WORD"))
        returns = next((x.value for x in c if isinstance(x, _Tag) and x.kind == "ret"), ())
        params = next((x.value for x in c if isinstance(x, _Tag) and x.kind == "params"), None)
        perf = tuple(x for x in c if isinstance(x, A.PerfDirective))
        line, col = self._pos(meta)
        return A.Function(name, kind, linkage, returns, params, perf, None, line, col)

    def ret_params(self, c: list) -> _Tag:
        return _Tag("ret", tuple(c))

    def proto_ret(self, c: list) -> _Tag:
        return _Tag("ret", tuple(x for x in c if x is not None))

    def params(self, c: list) -> _Tag:
        return _Tag("params", tuple(x for x in c if x is not None))

    def param(self, c: list) -> A.VarDecl:
        return self._decl(str(c[0])[1:], c[1:])

    def perf_dir(self, c: list) -> A.PerfDirective:
        values = tuple(self._int(self._v(t), t) for t in c[1:] if t is not None)
        return A.PerfDirective(str(c[0])[1:], values)

    def perf_pragma(self, c: list) -> A.PerfDirective:
        return A.PerfDirective("pragma", tuple(self._v(t) for t in c))

    def body(self, c: list) -> tuple:
        return tuple(c)

    # ----------------------------------------------------------------------------------- statements
    def stmt(self, c: list) -> Any:
        return c[0]

    @v_args(meta=True)
    def block(self, meta: Any, c: list) -> A.Block:
        return A.Block(tuple(c), self._pos(meta)[0])

    @v_args(meta=True)
    def label(self, meta: Any, c: list) -> A.Label:
        line, col = self._pos(meta)
        return A.Label(self._v(c[0]), line, col)

    @v_args(meta=True)
    def prototype(self, meta: Any, c: list) -> A.CallPrototype:
        returns = next((x.value for x in c if isinstance(x, _Tag) and x.kind == "ret"), None)
        params = next((x.value for x in c if isinstance(x, _Tag) and x.kind == "params"), None)
        name = self._v(next(x for x in c if isinstance(x, Token)))
        return A.CallPrototype(returns, name, params, self._pos(meta)[0])

    @v_args(meta=True)
    def branchtargets(self, meta: Any, c: list) -> A.BranchTargets:
        return A.BranchTargets("branchtargets", tuple(self._v(t) for t in c), self._pos(meta)[0])

    @v_args(meta=True)
    def calltargets(self, meta: Any, c: list) -> A.BranchTargets:
        return A.BranchTargets("calltargets", tuple(self._v(t) for t in c), self._pos(meta)[0])

    @v_args(meta=True)
    def instruction(self, meta: Any, c: list) -> A.Instruction:
        guard, neg = None, False
        if isinstance(c[0], _Tag):
            guard, neg = c[0].value
            c = c[1:]
        operands = tuple(x for x in c[1:] if x is not None)
        if str(c[0]).startswith("call"):  # "(5)" parses as a parenthesised constant: it is an argument list
            operands = tuple(A.Tup((x,)) if isinstance(x, (A.Imm, A.BinOp, A.Unary)) else x for x in operands)
        line, col = self._pos(meta)
        return A.Instruction(str(c[0]), operands, guard, neg, line, col)

    def guard(self, c: list) -> _Tag:
        return _Tag("guard", (A.Reg(self._v(c[0])), False))

    def neg_guard(self, c: list) -> _Tag:
        return _Tag("guard", (A.Reg(self._v(c[0])), True))

    def reg(self, c: list) -> A.Reg:
        return A.Reg(self._v(c[0]))

    def not_reg(self, c: list) -> A.Neg:
        return A.Neg(A.Reg(self._v(c[0])))

    def pair(self, c: list) -> A.Pair:
        return A.Pair(A.Reg(self._v(c[0])), A.Reg(self._v(c[1])))

    def vec(self, c: list) -> A.Vec:
        return A.Vec(tuple(x for x in c if x is not None))

    def tup(self, c: list) -> A.Tup:
        return A.Tup(tuple(x for x in c if x is not None))

    def addr(self, c: list) -> A.Addr:
        base, offset = c[0]
        return A.Addr(base, offset, tuple(c[1:]))

    def _base(self, tok: Token) -> A.Reg | A.Sym:
        return A.Reg(self._v(tok)) if tok.type == "REG" else A.Sym(self._v(tok))

    def base(self, c: list) -> tuple:
        return self._base(c[0]), 0

    def base_off(self, c: list) -> tuple:
        return self._base(c[0]), self._imm_int(c[1])

    def base_neg(self, c: list) -> tuple:
        return self._base(c[0]), self._imm_int(A.Imm("-" + self._v(c[1])))

    def abs_addr(self, c: list) -> tuple:
        return None, self._imm_int(c[0])

    def _imm_int(self, imm: A.Imm) -> Any:
        if isinstance(imm.text, S):
            return S("int", imm.text)
        return self._int(imm.text)


def _unquote(s: Any) -> Any:
    if isinstance(s, S):
        return S("unquote", s)
    return s[1:-1]
