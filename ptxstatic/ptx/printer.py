"""Printing the AST back as PTX text (parsing the output gives an equal AST; ptxas accepts it)."""

from __future__ import annotations

from collections.abc import Iterable

from ptxstatic.ptx import ast as A


def operand(op: A.Operand) -> str:
    t = type(op)
    if t is A.Reg or t is A.Sym:
        return op.name  # type: ignore[union-attr]
    if t is A.Imm:
        return op.text  # type: ignore[union-attr]
    if t is A.Addr:
        inner = "" if op.base is None else op.base.name  # type: ignore[union-attr]
        if op.offset or op.base is None:  # type: ignore[union-attr]
            inner += f"+{op.offset}" if op.base is not None else str(op.offset)  # type: ignore[union-attr]
        extra = "".join(", " + operand(x) for x in op.extra)  # type: ignore[union-attr]
        return f"[{inner}{extra}]"
    if t is A.Vec:
        return "{" + ", ".join(operand(x) for x in op.items) + "}"  # type: ignore[union-attr]
    if t is A.Tup:
        return "(" + ", ".join(operand(x) for x in op.items) + ")"  # type: ignore[union-attr]
    if t is A.Neg:
        return "!" + op.reg.name  # type: ignore[union-attr]
    if t is A.Pair:
        return f"{op.first.name}|{op.second.name}"  # type: ignore[union-attr]
    if t is A.BinOp or t is A.Unary:
        return constant(op)  # type: ignore[arg-type]
    raise TypeError(f"not an operand: {op!r}")


def instruction(ins: A.Instruction) -> str:
    guard = ""
    if ins.guard is not None:
        guard = f"@{'!' if ins.guard_negated else ''}{ins.guard.name} "
    ops = ", ".join(operand(o) for o in ins.operands)
    return f"{guard}{ins.opcode}{' ' + ops if ops else ''};"


def constant(e: A.Expr) -> str:
    """A constant-expression operand, fully parenthesised so it reparses to the same tree."""
    if isinstance(e, A.BinOp):
        return f"({constant(e.left)} {e.op} {constant(e.right)})"
    if isinstance(e, A.Unary):
        return f"{e.op}({constant(e.operand)})"
    return operand(e)


def expr(e: A.Init) -> str:
    t = type(e)
    if t is A.Imm:
        return e.text  # type: ignore[union-attr]
    if t is A.Sym:
        return e.name  # type: ignore[union-attr]
    if t is A.Generic:
        return f"generic({e.name})"  # type: ignore[union-attr]
    if t is A.BinOp:
        right = expr(e.right)  # type: ignore[union-attr]
        if isinstance(e.right, A.BinOp):  # type: ignore[union-attr]
            right = f"({right})"
        return f"{expr(e.left)}{e.op}{right}"  # type: ignore[union-attr]
    if t is A.InitList:
        return "{" + ", ".join(expr(x) for x in e.items) + "}"  # type: ignore[union-attr]
    raise TypeError(f"not an initialiser: {e!r}")


def declarator(d: A.Declarator) -> str:
    if d.count is not None:
        return f"{d.name}<{d.count}>"
    return d.name + "".join(f"[{'' if n is None else n}]" for n in d.dims)


def var_decl(v: A.VarDecl, terminate: bool = True) -> str:
    words = [f".{w}" for w in v.linkage] + [f".{v.space}"]
    if v.attributes:
        words.append(f".attribute({', '.join(v.attributes)})")
    if v.align is not None:
        words.append(f".align {v.align}")
    words += [f".{a}" for a in v.attrs]
    if v.ptr_align is not None:
        words.append(f".align {v.ptr_align}")
    text = " ".join(words) + " " + ", ".join(declarator(d) for d in v.names)
    if v.init is not None:
        text += " = " + expr(v.init)
    return text + (";" if terminate else "")


def _params(params: Iterable[A.VarDecl]) -> str:
    return "(" + ", ".join(var_decl(p, terminate=False) for p in params) + ")"


def loc(d: A.LocDirective) -> str:
    text = f".loc {d.file} {d.line} {d.column}"
    if d.inlined_at is not None:
        f, line, col = d.inlined_at
        text += f", function_name {d.function_name}, inlined_at {f} {line} {col}"
    return text


def statement(s: A.Statement, indent: str = "\t") -> list[str]:
    t = type(s)
    if t is A.Instruction:
        return [indent + instruction(s)]  # type: ignore[arg-type]
    if t is A.Label:
        return [f"{s.name}:"]  # type: ignore[union-attr]
    if t is A.VarDecl:
        return [indent + var_decl(s)]  # type: ignore[arg-type]
    if t is A.LocDirective:
        return [indent + loc(s)]  # type: ignore[arg-type]
    if t is A.Pragma:
        return [f"{indent}.pragma {', '.join(s.values)};"]  # type: ignore[union-attr]
    if t is A.Block:
        return _block(s, indent)  # type: ignore[arg-type]
    if t is A.CallPrototype:
        ret = _params(s.returns) + " " if s.returns is not None else ""  # type: ignore[union-attr]
        params = " " + _params(s.params) if s.params is not None else ""  # type: ignore[union-attr]
        return [f"{indent}.callprototype {ret}{s.name}{params};"]  # type: ignore[union-attr]
    if t is A.BranchTargets:
        return [f"{indent}.{s.kind} {', '.join(s.targets)};"]  # type: ignore[union-attr]
    raise TypeError(f"not a statement: {s!r}")


def _block(block: A.Block, indent: str) -> list[str]:
    """A block and the blocks nested in it, without recursion (they nest up to MAX_BLOCK_NESTING deep)."""
    lines = [indent + "{"]
    stack = [(iter(block.body), indent + "\t")]
    while stack:
        items, inner = stack[-1]
        for x in items:
            if type(x) is A.Block:
                lines.append(inner + "{")
                stack.append((iter(x.body), inner + "\t"))  # type: ignore[union-attr]
                break
            lines += statement(x, inner)
        else:
            stack.pop()
            lines.append(inner[:-1] + "}")
    return lines


def function(fn: A.Function) -> list[str]:
    head = " ".join([*(f".{w}" for w in fn.linkage), f".{fn.kind}"])
    if fn.returns:
        head += " " + _params(fn.returns)
    head += " " + fn.name
    if fn.params is not None:
        head += _params(fn.params)
    lines = [head]
    for d in fn.directives:
        if d.name == "pragma":
            lines.append(f".pragma {', '.join(str(v) for v in d.values)};")
        else:
            lines.append(f".{d.name}" + (" " + ", ".join(str(v) for v in d.values) if d.values else ""))
    if fn.body is None:
        return [*lines, ";"]
    lines.append("{")
    for s in fn.body:
        lines += statement(s)
    return [*lines, "}"]


def section(sec: A.Section) -> list[str]:
    lines = [f".section .{sec.name}", "{"]
    for e in sec.entries:
        if e.label:
            lines.append(f"{e.label}:")
        else:
            lines.append(f".{e.directive} " + ", ".join(expr(x) for x in e.items))
    return [*lines, "}"]


def module(m: A.Module) -> str:
    """The whole module as PTX text."""
    lines: list[str] = []
    for item in m.items:
        t = type(item)
        if t is A.Directive:
            if item.name == "alias":  # type: ignore[union-attr]
                lines.append(f".alias {item.values[0]}, {item.values[1]};")  # type: ignore[union-attr]
            else:
                lines.append(f".{item.name} {', '.join(item.values)}")  # type: ignore[union-attr]
        elif t is A.FileDirective:
            extra = "".join(f", {x}" for x in (item.timestamp, item.size) if x is not None)  # type: ignore[union-attr]
            lines.append(f'.file {item.index} "{item.path}"{extra}')  # type: ignore[union-attr]
        elif t is A.Function:
            lines += function(item)  # type: ignore[arg-type]
        elif t is A.Section:
            lines += section(item)  # type: ignore[arg-type]
        else:
            lines += statement(item, "")  # type: ignore[arg-type]
    return "\n".join(lines) + "\n"
