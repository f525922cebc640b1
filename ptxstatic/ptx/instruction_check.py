"""Validation of one function: its declarations, labels and instructions (see :mod:`ptxstatic.ptx.validate`).

:class:`FunctionScope` walks the body with nested ``{ }`` scopes: registers (``%r<5>`` is ``%r0`` ..
``%r4``) and variables are declared before use and once per scope, labels are defined once per scope and
branched to by name, and every instruction is checked by :func:`check_instruction` against
:mod:`ptxstatic.ptx.isa_forms`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ptxstatic.errors import SourceError
from ptxstatic.ptx import ast as A
from ptxstatic.ptx import isa
from ptxstatic.ptx.isa_forms import FORMS, special_register_type
from ptxstatic.ptx.operand_check import OperandChecker, literal_class

_TYPE_LIKE = re.compile(r"(?:[bsuf]|bf|tf|e\dm|ue\dm)\d+(?:x\d+)?")
_INDEXED = re.compile(r"(.*?)(0|[1-9]\d*)")
#: ranges of registers up to this many are listed name by name; larger ones are matched by their index
EXPAND_LIMIT = 1 << 16

ErrorMaker = Callable[[int, int, str], SourceError]


@dataclass
class _Scope:
    """One ``{ }`` level: registers by name, register ranges by prefix, variables and labels."""

    registers: dict[str, str]
    ranges: dict[str, tuple[int, str]]
    big: dict[str, tuple[int, str]]  # the ranges too large to list
    variables: dict[str, A.VarDecl]
    labels: set[str]


class FunctionScope:
    """Checks one function against the module's variables and functions declared before it."""

    def __init__(self, variables: dict[str, A.VarDecl], functions: dict[str, A.Function], target: str,
                 version: tuple[int, int], error: ErrorMaker, valid: set[tuple] | None = None) -> None:
        self.module_variables = variables
        self.functions = functions
        self.target = target
        self.version = version
        self.error = error
        self.errors: list[SourceError] = []
        self.scopes: list[_Scope] = []
        self.labels: set[str] = set()
        self.prototypes: set[str] = set()
        self.params: dict[str, A.VarDecl] = {}
        self.inputs: set[str] = set()  # parameters that are not return values (read-only)
        self.valid = set() if valid is None else valid  # keys of instructions found valid (see _key)

    def fail(self, line: int, column: int, message: str) -> None:
        self.errors.append(self.error(line, column, message))

    # ----------------------------------------------------------------------------------- declarations
    def check(self, fn: A.Function) -> list[SourceError]:
        self.labels = {s.name for s in fn.statements if isinstance(s, A.Label)}
        top = _Scope({}, {}, {}, {}, set())
        self.scopes = [top]
        for decl in (*fn.returns, *(fn.params or ())):
            problem = declaration_problem(decl)
            if problem:
                self.fail(fn.line, fn.column, problem)
            if decl.space == "reg":
                self._declare_registers(decl, fn.line, fn.column)
            else:
                for d in decl.names:
                    if d.name in self.params:
                        self.fail(fn.line, fn.column, f"duplicate definition of parameter {d.name!r}")
                    self.params[d.name] = decl
        self.inputs = {d.name for decl in fn.params or () for d in decl.names}
        self._body(fn.body or (), top)
        return self.errors

    def _body(self, body: tuple[A.Statement, ...], scope: _Scope) -> None:
        stack = [(iter(body), scope)]  # the open blocks, without recursion (they nest up to MAX_BLOCK_NESTING deep)
        while stack:
            items, scope = stack[-1]
            for s in items:
                if isinstance(s, A.Instruction):
                    self._instruction(s)
                elif isinstance(s, A.VarDecl):
                    self._declaration(s)
                elif isinstance(s, A.Label):
                    if s.name in scope.labels:
                        self.fail(s.line, s.column, f"duplicate definition of label {s.name!r}")
                    scope.labels.add(s.name)
                elif isinstance(s, A.Block):
                    inner = _Scope({}, {}, {}, {}, set())
                    self.scopes.append(inner)
                    stack.append((iter(s.body), inner))
                    break
                elif isinstance(s, A.CallPrototype):
                    self.prototypes.add(s.name)
                elif isinstance(s, A.BranchTargets) and s.kind == "branchtargets":
                    for t in s.targets:
                        if t not in self.labels:
                            self.fail(s.line, 1, f"undefined label {t!r} in .branchtargets")
            else:
                stack.pop()
                if stack:
                    self.scopes.pop()

    def _declaration(self, v: A.VarDecl) -> None:
        problem = declaration_problem(v)
        if problem:
            self.fail(v.line, v.column, problem)
        if v.space == "reg":
            self._declare_registers(v, v.line, v.column)
            return
        scope = self.scopes[-1]
        for d in v.names:
            clash = d.name in scope.variables or (len(self.scopes) == 1 and d.name in self.params)
            if clash:
                self.fail(v.line, v.column, f"duplicate definition of {d.name!r}")
            scope.variables[d.name] = v

    def _declare_registers(self, v: A.VarDecl, line: int, column: int) -> None:
        scope = self.scopes[-1]
        vector = any(a in ("v2", "v4", "v8") for a in v.attrs)
        rtype = v.dtype if not vector and v.dtype in isa.TYPE_BITS else ""  # an unknown type is refused already
        for d in v.names:
            names = [d.name] if d.count is None else [f"{d.name}{i}" for i in range(min(d.count, EXPAND_LIMIT))]
            taken = (d.name in scope.ranges or not scope.registers.keys().isdisjoint(names)
                     or (scope.big and any(self._in_range(scope, n) for n in names))
                     or (len(self.scopes) == 1 and d.name in self.params))
            if taken:
                self.fail(line, column, f"duplicate definition of register {d.name!r}")
            if d.count is not None:
                scope.ranges[d.name] = (d.count, rtype)
                if d.count > EXPAND_LIMIT:
                    scope.big[d.name] = (d.count, rtype)
            scope.registers.update(dict.fromkeys(names, rtype))

    @staticmethod
    def _in_range(scope: _Scope, name: str) -> str | None:
        """The type of a register of a range too large to list (``%r<100000>``), if ``name`` is one."""
        m = _INDEXED.fullmatch(name) if scope.big else None
        if m and m[1] in scope.big:
            count, rtype = scope.big[m[1]]
            if EXPAND_LIMIT <= int(m[2]) < count:
                return rtype
        return None

    def register_type(self, name: str) -> str | None:
        """The declared type of a register ('' when unknown, e.g. a vector register), None if undeclared (a
        component of a special register whose name is declared as a register, ``%tid.x`` after ``.reg .b32 %tid``,
        is undeclared: ptxas reads ``.x`` as a video selector of that register)."""
        rtype = self._declared_type(name)
        if rtype is not None:
            return rtype
        base, dot, _ = name.partition(".")
        return None if dot and self._declared_type(base) is not None else special_register_type(name)

    def _declared_type(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            rtype = scope.registers.get(name)
            if rtype is not None:
                return rtype
        for scope in reversed(self.scopes):
            rtype = self._in_range(scope, name)
            if rtype is not None:
                return rtype
        return None

    def variable(self, name: str) -> A.VarDecl | None:
        for scope in reversed(self.scopes):
            if name in scope.variables:
                return scope.variables[name]
        return self.params.get(name) or self.module_variables.get(name)

    def symbol_known(self, name: str) -> bool:
        return (name in ("_", "WARP_SZ") or name in self.labels or name in self.functions or name in self.prototypes
                or self.variable(name) is not None)

    # ----------------------------------------------------------------------------------- instructions
    def _instruction(self, ins: A.Instruction) -> None:
        key = self._key(ins)
        if key in self.valid:
            return
        message = check_instruction(ins, self)
        if message:
            self.fail(ins.line, ins.column, message)
        else:
            self.valid.add(key)

    def _key(self, ins: A.Instruction) -> tuple:
        """What the verdict on an instruction depends on: its opcode and the kind and type of each operand,
        not the names (so that the many instructions that differ only in register numbers are checked once)."""
        guard = None if ins.guard is None else self.register_type(ins.guard.name)
        if len(self.scopes) > 1:
            return ins.opcode, guard, tuple([self._operand_key(o) for o in ins.operands])
        registers, parts = self.scopes[0].registers, []
        for o in ins.operands:  # the common cases inline: a register of the function's scope, or [register]
            t = type(o)
            if t is A.Reg:
                rtype = registers.get(o.name)  # type: ignore[attr-defined]
                parts.append(self._operand_key(o) if rtype is None else rtype)
            elif t is A.Addr and type(o.base) is A.Reg and not o.extra:  # type: ignore[attr-defined]
                rtype = registers.get(o.base.name)  # type: ignore[attr-defined]
                parts.append(self._operand_key(o) if rtype is None else (t, rtype))
            else:
                parts.append(self._operand_key(o))
        return ins.opcode, guard, tuple(parts)

    def _operand_key(self, op: object) -> object:
        t = type(op)
        if t is A.Reg:
            name = op.name  # type: ignore[attr-defined]
            for scope in reversed(self.scopes):
                rtype = scope.registers.get(name)
                if rtype is not None:
                    return rtype
            return ("?", self.register_type(name), special_register_type(name))
        if t is A.Imm:
            return literal_class(op.text)  # type: ignore[attr-defined]
        if t is A.Sym:
            return self._symbol_key(op.name)  # type: ignore[attr-defined]
        if t is A.Addr:
            return (t, self._operand_key(op.base), tuple([self._operand_key(x) for x in op.extra]))  # type: ignore
        if t is A.Neg:
            return (t, self._operand_key(op.reg))  # type: ignore[attr-defined]
        if t is A.Pair:
            return (t, self._operand_key(op.first), self._operand_key(op.second))  # type: ignore[attr-defined]
        if t is A.Vec or t is A.Tup:
            return (t, tuple([self._operand_key(x) for x in op.items]))  # type: ignore[attr-defined]
        return t

    def _symbol_key(self, name: str) -> tuple:
        var = self.variable(name)
        return (name in self.labels, name if name in self.functions else "", name in self.prototypes,
                name in ("_", "WARP_SZ"), var.space if var else "", name in self.inputs)


def check_instruction(ins: A.Instruction, scope: FunctionScope) -> str:
    """The first problem of one instruction, as a message ('' when there is none)."""
    opcode, words = isa.split_opcode(ins.opcode)
    if opcode not in isa.OPCODES:
        return f"unknown instruction {opcode!r}"
    for w in words:
        if _TYPE_LIKE.fullmatch(w) and w not in isa.TYPE_BITS:
            return f"unknown type .{w} in {ins.opcode!r}"
    for what, arch, version in isa.requirements(ins.opcode) if scope.target else ():
        problem = isa.unmet(what, arch, version, scope.target, scope.version)
        if problem:
            return problem
    if ins.guard is not None:
        gtype = scope.register_type(ins.guard.name)
        if gtype != "pred":
            what = "undefined register" if gtype is None else "a non-predicate register"
            return f"guard {ins.guard.name} is {what}; expected a predicate"
    if opcode == "call":
        problem = _call_problem(ins, scope)
        if problem:
            return problem
    checker = OperandChecker(ins, scope)
    form = FORMS.get(opcode)
    return checker.names() or checker.common(opcode) or (form and checker.form(opcode, form)) or ""


def declared_bytes(v: A.VarDecl, d: A.Declarator) -> int:
    """Bytes of one declared name (arrays of unknown size count as 0)."""
    elems = 1
    for dim in d.dims:
        elems *= dim or 0
    vec = next((int(a[1]) for a in v.attrs if a in ("v2", "v4", "v8")), 1)
    return isa.TYPE_BITS.get(v.dtype, 0) * vec * elems // 8


def declaration_problem(v: A.VarDecl) -> str:
    """What ptxas refuses in a declaration ('' when nothing): a type no variable may have (``.reg .q64``,
    ``.global .bf16``), an alignment that is not a power of two, a register range of 2^32 or more, an integer
    constant of the initialiser over 64 bits."""
    allowed = isa.VARIABLE_TYPES | {"pred"} if v.space == "reg" else isa.VARIABLE_TYPES
    if v.space == "param":
        allowed -= {"f16x2"}
    what = ", ".join(d.name for d in v.names)
    if v.dtype not in isa.TYPE_BITS:
        return f"unknown type .{v.dtype} in the declaration of {what}" if v.dtype else f"{what} is declared untyped"
    if v.dtype not in allowed:
        return f"a .{v.space} variable cannot be of type .{v.dtype} ({what})"
    for align in (v.align, v.ptr_align):
        if align is not None and (align < 1 or align & (align - 1)):
            return f"alignment {align} of {what} is not a power of two"
    big = next((d for d in v.names if d.count is not None and d.count >= 1 << 32), None)
    if big is not None:
        return f"register range {big.name}<{big.count}> is too large (fewer than 2^32 registers)"
    return constants_problem(v.init)


def constants_problem(init: A.Init | None) -> str:
    """An integer constant of an initialiser that does not fit 64 bits ('' when there is none)."""
    todo: list = [] if init is None else [init]
    while todo:
        x = todo.pop()
        t = type(x)
        if t is A.Imm:
            try:
                A.parse_number(x.text)
            except A.ConstantOverflow as exc:
                return str(exc)
            except ValueError:
                return f"invalid constant {x.text!r}"
        elif t is A.InitList:
            todo += x.items
        elif t is A.BinOp:
            todo += (x.left, x.right)
        elif t is A.Unary:
            todo.append(x.operand)
    return ""


def _call_problem(ins: A.Instruction, scope: FunctionScope) -> str:
    """A direct call whose results or arguments do not match the callee's declaration ('' when they do)."""
    ops = ins.operands
    rets: tuple = ()
    if ops and isinstance(ops[0], A.Tup):
        rets, ops = ops[0].items, ops[1:]
    if not ops or not isinstance(ops[0], A.Sym) or ops[0].name not in scope.functions:
        return ""
    fn = scope.functions[ops[0].name]
    args = next((o.items for o in ops[1:] if isinstance(o, A.Tup)), ())
    for kind, given, formal in (("result", rets, fn.returns), ("argument", args, fn.params)):
        if formal is None:
            continue
        sizes = [declared_bytes(v, d) for v in formal for d in v.names]
        if len(given) != len(sizes):
            return f"call of {fn.name!r}: {len(sizes)} {kind}(s) expected, {len(given)} given"
        for item, size in zip(given, sizes, strict=True):
            var = scope.variable(item.name) if isinstance(item, A.Sym) else None
            if var is not None and var.space == "param":
                got = declared_bytes(var, next(d for d in var.names if d.name == item.name))
                if got != size:
                    return f"call of {fn.name!r}: {kind} {item.name!r} has {got} bytes, the parameter {size}"
    return ""
