"""Name resolution: registers declared without a ``%`` (``.reg .pred p;``) are registers, not symbols.

The grammar cannot tell ``p`` the register from ``p`` the label or variable, so after parsing, every
symbol operand naming a register declared in the function (or among its ``.reg`` parameters) becomes a
:class:`~ptxstatic.ptx.ast.Reg`.
"""

from __future__ import annotations

from ptxstatic.ptx.ast import Addr, Function, Instruction, Sym, Tup, VarDecl, Vec
from ptxstatic.ptx.ast import Reg as R


def plain_register_names(fn: Function) -> set[str]:
    decls = [s for s in fn.statements if isinstance(s, VarDecl)] + list(fn.params or ()) + list(fn.returns)
    return {d.name for v in decls if v.space == "reg" for d in v.names if not d.name.startswith("%")}


def _resolve(op: object, names: set[str]) -> object:
    t = type(op)
    if t is Sym:
        return R(op.name) if op.name in names else op  # type: ignore[attr-defined]
    if t is Addr:
        return Addr(_resolve(op.base, names), op.offset, tuple(_resolve(x, names) for x in op.extra))  # type: ignore
    if t is Vec or t is Tup:
        return t(tuple(_resolve(x, names) for x in op.items))  # type: ignore[attr-defined]
    return op


def resolve_registers(fn: Function) -> None:
    """Turn symbols that name plain-named registers into registers, in place."""
    if fn.body is None:
        return
    names = plain_register_names(fn)
    if not names:
        return
    for s in fn.statements:
        if isinstance(s, Instruction):
            s.operands = tuple(_resolve(o, names) for o in s.operands)  # type: ignore[misc]
