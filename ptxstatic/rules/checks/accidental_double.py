"""PS401 accidental-double: float values widened to double for arithmetic and rounded back to float."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.findings import Finding, Severity
from ptxstatic.ptx import isa
from ptxstatic.ptx.ast import Imm, Instruction
from ptxstatic.ptx.dtypes import literal
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.places import by_line, is_library_function, loop_depth
from ptxstatic.rules.registry import rule
from ptxstatic.rules.target import is_debug

#: fp64 instructions in one chain, from which a chain that also works on a double's bits (as the math
#: library's argument reduction and scaling do) is reported as a double-precision math function
FUNCTION_SIZE = 12


@dataclass
class Chain:
    """What one widened float flows through before it is rounded back."""

    widen: int
    arithmetic: set[int] = field(default_factory=set)  # fp64 arithmetic instructions
    narrows: set[int] = field(default_factory=set)  # cvt.f32.f64 reached
    bits: bool = False  # a double of the chain is taken apart or made from 32-bit halves (a math function's work)


def is_widen(ins: Instruction) -> bool:
    return ins.info.opcode == "cvt" and ins.info.types == ("f64", "f32")


def is_narrow(ins: Instruction) -> bool:
    return ins.info.opcode == "cvt" and ins.info.types == ("f32", "f64")


def is_fp64_arithmetic(ins: Instruction) -> bool:
    info = ins.info
    return info.dtype == "f64" and (info.group == isa.FP64 or info.group == isa.SPECIAL)


def _carries_double(ins: Instruction) -> bool:
    """Whether the instruction's result is a double that the chain goes on through."""
    info = ins.info
    return info.dtype == "f64" and info.opcode not in ("setp", "st", "cvt") and not info.is_memory_access


def follow(ctx: RuleContext, widen: int, users: dict[int, list[int]]) -> Chain:
    """The double values computed from the float widened at ``widen``, through register def-use chains."""
    chain = Chain(widen)
    seen, todo = {widen}, [widen]
    while todo:
        d = todo.pop()
        for u in users.get(d, ()):
            ins = ctx.instructions[u]
            if is_narrow(ins):
                chain.narrows.add(u)
            elif ins.info.opcode == "mov" and ins.info.dtype != "f64":
                chain.bits = True  # mov.b64 {lo, hi}, %fd: argument reduction, scaling by a power of two
            elif _carries_double(ins):
                if is_fp64_arithmetic(ins):
                    chain.arithmetic.add(u)
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
    return chain


def _reaches_itself(users: dict[int, list[int]], start: int, within: set[int]) -> bool:
    """Whether the value ``start`` computes feeds back into ``start`` through instructions of ``within``."""
    stack, seen = list(users.get(start, ())), set()
    while stack:
        u = stack.pop()
        if u == start:
            return True
        if u in within and u not in seen:
            seen.add(u)
            stack.extend(users.get(u, ()))
    return False


@rule("PS401", "accidental-double", Severity.WARNING,
      "float values widened to double for arithmetic and rounded back to float (a double literal or function)")
def accidental_double(ctx: RuleContext) -> Iterator[Finding]:
    widens = [i for i, ins in enumerate(ctx.instructions) if is_widen(ins)]
    if not widens or is_debug(ctx.module) or is_library_function(ctx):
        return
    users = ctx.du.chains()
    chains = []
    for w in widens:
        chain = follow(ctx, w, users)
        if not chain.arithmetic or not chain.narrows:
            continue
        inside = chain.arithmetic | {w}
        if any(_reaches_itself(users, a, inside) for a in chain.arithmetic):
            continue  # a double recurrence: the double is wanted
        chains.append(chain)
    if not chains:
        return
    if not ctx.mc.has_line_info:  # one finding per function: the PTX lines of one expression are many
        yield _finding(ctx, chains, min(n for c in chains for n in c.narrows))
        return
    # where the double is rounded back is the statement that holds its cause (the literal, the call): the
    # compiler may move the widening up to where the float was computed, never the rounding
    for narrows in by_line(ctx, {n for c in chains for n in c.narrows}).values():
        yield _finding(ctx, [c for c in chains if c.narrows & set(narrows)], narrows[0])


def _finding(ctx: RuleContext, chains: list[Chain], at: int) -> Finding:
    arithmetic = sorted(set().union(*(c.arithmetic for c in chains)))
    ops = sorted({ctx.instructions[i].info.opcode + ".f64" for i in arithmetic})
    constants = _constants(ctx, arithmetic)
    per_chain = max(len(c.arithmetic) for c in chains)
    function = any(c.bits and len(c.arithmetic) >= FUNCTION_SIZE for c in chains)
    if function:
        cause = f"a double-precision math function ({per_chain} fp64 instructions per call)"
    elif constants:
        cause = "double constants in the expression: " + ", ".join(constants[:3])
    else:
        cause = "a double operand"
    message = f"float widened to double for {', '.join(ops)} and rounded back to float, because of {cause}"
    if loop_depth(ctx, at):
        message += " (inside a loop)"
    return ctx.finding(at, message, properties={
        "conversions": len(chains), "fp64_instructions": len(arithmetic), "fp64_ops": ops,
        "constants": constants, "math_function": function})


def _constants(ctx: RuleContext, indexes: list[int]) -> list[str]:
    """The double immediates the instructions use, as C literals (``2.5``), in order of first use; an
    ``add.f64 d, x, x`` is the ``2.0 * x`` the compiler made an addition of."""
    out: list[str] = []
    for i in indexes:
        ins = ctx.instructions[i]
        values = [float(literal(op.text, op.value, np.dtype(np.float64))) for op in ins.operands if isinstance(op, Imm)]
        if ins.info.opcode == "add" and len(ins.operands) == 3 and ins.operands[1] == ins.operands[2]:
            values.append(2.0)
        for text in map(repr, values):
            if text not in out:
                out.append(text)
    return out
