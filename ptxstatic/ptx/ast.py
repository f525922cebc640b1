"""Typed AST of a PTX module.

Positions (``line``, ``column``) and the mapped source location never take part in equality, so a module
printed back to PTX and reparsed compares equal to the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ptxstatic.ptx.isa import OpInfo, op_info

# ------------------------------------------------------------------------------------------ operands


@dataclass(slots=True)
class Reg:
    """A register or special register: ``%r1``, ``%tid.x``, ``%SP``."""

    name: str


@dataclass(slots=True)
class Imm:
    """A numeric literal exactly as written: ``-128``, ``0x1F``, ``0f3F800000``, ``1.5``."""

    text: str

    @property
    def value(self) -> int | float:
        return parse_number(self.text)


@dataclass(slots=True)
class Sym:
    """A symbol: label, variable, function, parameter or the sink ``_``."""

    name: str


@dataclass(slots=True)
class Neg:
    """Logical negation of a predicate source: ``!%p``."""

    reg: Reg


@dataclass(slots=True)
class Pair:
    """Two destinations written by one instruction: ``%r1|%p1``."""

    first: Reg
    second: Reg


@dataclass(slots=True)
class Vec:
    """A vector operand: ``{%f1, %f2, _}``."""

    items: tuple[Operand, ...]


@dataclass(slots=True)
class Tup:
    """A parenthesised list in ``call``: ``(retval0)``, ``(param0, param1)``."""

    items: tuple[Operand, ...]


@dataclass(slots=True)
class Addr:
    """A memory operand ``[base+offset]``; ``extra`` holds texture/surface coordinates after the base."""

    base: Reg | Sym | None
    offset: int = 0
    extra: tuple[Operand, ...] = ()



# ------------------------------------------------------------------------------------ initialisers


@dataclass(slots=True)
class BinOp:
    """``left + right`` or ``left - right`` in an initialiser or a debug-section entry."""

    left: Expr
    op: str
    right: Expr


@dataclass(slots=True)
class Unary:
    """``-(x)`` or ``~x`` in a constant expression."""

    op: str
    operand: Expr


@dataclass(slots=True)
class Generic:
    """``generic(sym)``: the generic address of a global variable."""

    name: str


@dataclass(slots=True)
class InitList:
    items: tuple[Init, ...]


Expr = Imm | Sym | BinOp | Unary | Generic
Operand = Reg | Imm | Sym | Neg | Pair | Vec | Tup | Addr | BinOp | Unary
Init = Expr | InitList

# --------------------------------------------------------------------------------------- statements


@dataclass(slots=True)
class SourceLoc:
    """A ``.cu`` position from ``.loc``: file path, line, column, and the caller it was inlined into."""

    file: str
    line: int
    column: int
    inlined_at: SourceLoc | None = None
    function: str = ""


@dataclass(slots=True)
class Instruction:
    opcode: str  # the whole opcode token, modifiers included: "ld.global.nc.v4.f32"
    operands: tuple[Operand, ...]
    guard: Reg | None = None
    guard_negated: bool = False
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    loc: SourceLoc | None = field(default=None, compare=False)

    @property
    def info(self) -> OpInfo:
        """Opcode and modifiers split into meaning (canonical opcode, group, space, types, ...)."""
        return op_info(self.opcode)


@dataclass(slots=True)
class Label:
    name: str
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(slots=True)
class Declarator:
    """One declared name: ``%r<6>`` (count), ``buf[16][4]`` (dims, ``None`` for ``[]``) or plain ``x``."""

    name: str
    count: int | None = None
    dims: tuple[int | None, ...] = ()


@dataclass(slots=True)
class VarDecl:
    """A variable or register declaration: ``.shared .align 4 .b8 buf[1024];``, ``.reg .b32 %r<6>;``."""

    space: str  # "reg", "shared", "global", ...
    attrs: tuple[str, ...]  # type, vector, .ptr, pointer space words, in order, without dots
    names: tuple[Declarator, ...]
    linkage: tuple[str, ...] = ()
    align: int | None = None
    attributes: tuple[str, ...] = ()  # .attribute(...) items as written
    init: Init | None = None
    ptr_align: int | None = None  # ".ptr .global .align N": alignment of what a pointer parameter points to
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def dtype(self) -> str:
        types = [a for a in self.attrs if a not in ("ptr", "v2", "v4", "v8") and a not in _PTR_SPACES]
        return types[-1] if types else ""


_PTR_SPACES = frozenset({"global", "shared", "local", "const"})


@dataclass(slots=True)
class LocDirective:
    file: int
    line: int
    column: int
    function_name: str = ""
    inlined_at: tuple[int, int, int] | None = None
    src_line: int = field(default=0, compare=False)


@dataclass(slots=True)
class Pragma:
    values: tuple[str, ...]  # string literals with their quotes
    line: int = field(default=0, compare=False)


@dataclass(slots=True)
class Block:
    """A nested ``{ ... }`` scope inside a function body."""

    body: tuple[Statement, ...]
    line: int = field(default=0, compare=False)


@dataclass(slots=True)
class CallPrototype:
    returns: tuple[VarDecl, ...] | None  # None: no return list written; () for "()"
    name: str
    params: tuple[VarDecl, ...] | None
    line: int = field(default=0, compare=False)


@dataclass(slots=True)
class BranchTargets:
    kind: str  # "branchtargets" or "calltargets"
    targets: tuple[str, ...]
    line: int = field(default=0, compare=False)


Statement = Instruction | Label | VarDecl | LocDirective | Pragma | Block | CallPrototype | BranchTargets

# ----------------------------------------------------------------------------------- module level


@dataclass(slots=True)
class PerfDirective:
    """A tuning directive on a function: ``.maxntid 256, 1, 1``, ``.explicitcluster``, ``.pragma``."""

    name: str
    values: tuple[int, ...] | tuple[str, ...] = ()


@dataclass
class Function:
    name: str
    kind: str  # "entry" or "func"
    linkage: tuple[str, ...]
    returns: tuple[VarDecl, ...]
    params: tuple[VarDecl, ...] | None  # None: no parameter list written
    directives: tuple[PerfDirective, ...]
    body: tuple[Statement, ...] | None  # None for a declaration without a body
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def is_kernel(self) -> bool:
        return self.kind == "entry"

    @cached_property
    def instructions(self) -> list[Instruction]:
        """Instructions in program order, nested scopes flattened."""
        return [s for s in self.statements if isinstance(s, Instruction)]

    @cached_property
    def statements(self) -> list[Statement]:
        """Statements in program order, nested scopes flattened (blocks themselves omitted)."""
        out: list[Statement] = []
        _flatten(self.body or (), out)
        return out

    def directive(self, name: str) -> PerfDirective | None:
        return next((d for d in self.directives if d.name == name), None)


def _flatten(body: tuple[Statement, ...], out: list[Statement]) -> None:
    stack = [iter(body)]  # iterators of the open blocks (no recursion: blocks nest up to MAX_BLOCK_NESTING deep)
    while stack:
        for s in stack[-1]:
            if isinstance(s, Block):
                stack.append(iter(s.body))
                break
            out.append(s)
        else:
            stack.pop()


@dataclass(slots=True)
class FileDirective:
    index: int
    path: str
    timestamp: int | None = None
    size: int | None = None


@dataclass(slots=True)
class SectionEntry:
    """One entry of a ``.section`` block: a label, or a data directive with its items."""

    directive: str  # "b8", "b16", "b32", "b64", or "" for a label
    items: tuple[Expr, ...] = ()
    label: str = ""


@dataclass(slots=True)
class Section:
    name: str
    entries: tuple[SectionEntry, ...]
    line: int = field(default=0, compare=False)


@dataclass(slots=True)
class Directive:
    """``.version``, ``.target``, ``.address_size`` or ``.alias`` with its words."""

    name: str
    values: tuple[str, ...]
    line: int = field(default=0, compare=False)


TopItem = Directive | FileDirective | LocDirective | Pragma | VarDecl | Function | Section


@dataclass(slots=True, eq=False)
class Module:
    """A parsed PTX file. ``items`` keeps every top-level item in order; the rest are views on it.

    The views (functions, kernels, globals, files, directives) are built once, on first use, in one pass
    over ``items``: a module's items are not changed after it is made.
    """

    filename: str
    items: list[TopItem]
    errors: list = field(default_factory=list)  # SourceErrors recovered from (functions skipped)
    _views: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Module) and self.items == other.items

    def _view(self, name: str) -> Any:
        views = self._views
        if not views:
            functions = tuple(i for i in self.items if isinstance(i, Function))
            directives: dict[str, tuple[str, ...]] = {}
            for i in self.items:
                if isinstance(i, Directive):
                    directives.setdefault(i.name, i.values)
            views.update(
                functions=functions,
                kernels=tuple(f for f in functions if f.is_kernel and f.body is not None),
                defined={f.name: f for f in reversed(functions) if f.body is not None},
                globals=tuple(i for i in self.items if isinstance(i, VarDecl)),
                files={i.index: i for i in self.items if isinstance(i, FileDirective)},
                directives=directives,
            )
        return views[name]

    def _directive(self, name: str) -> tuple[str, ...]:
        return self._view("directives").get(name, ())

    @property
    def version(self) -> str:
        return next(iter(self._directive("version")), "")

    @property
    def target(self) -> tuple[str, ...]:
        return self._directive("target")

    @property
    def sm(self) -> str:
        """The target architecture, e.g. ``sm_90a``."""
        return next((t for t in self.target if t.startswith(("sm_", "compute_"))), "")

    @property
    def address_size(self) -> int:
        """Bits of an address: the ``.address_size`` directive's, else 64. The ISA text names 32 as the default,
        but ptxas assembles a module without the directive for its ``--machine``, 64 on every host it runs on
        (CUDA 12 and later no longer compile 32-bit PTX at all), and nvcc's 64-bit PTX may omit it. A value that
        is not a decimal number (``1e400``) gives 0: no valid size (only 32 and 64 are)."""
        value = next(iter(self._directive("address_size")), "64")
        return int(value) if value.isdecimal() and len(value) < 6 else 0

    @property
    def functions(self) -> tuple[Function, ...]:
        return self._view("functions")

    @property
    def kernels(self) -> tuple[Function, ...]:
        return self._view("kernels")

    @property
    def files(self) -> dict[int, FileDirective]:
        return dict(self._view("files"))

    @property
    def globals(self) -> tuple[VarDecl, ...]:
        return self._view("globals")

    def function(self, name: str) -> Function:
        """The first function of that name with a body."""
        try:
            return self._view("defined")[name]
        except KeyError:
            raise KeyError(name) from None


def parse_number(text: str) -> int | float:
    """Value of a PTX numeric literal (``0f`` / ``0d`` are IEEE bit patterns)."""
    import struct

    neg = text.startswith("-")
    t = text[1:] if neg else text
    if t[:2] in ("0f", "0F"):
        v: int | float = struct.unpack(">f", bytes.fromhex(t[2:]))[0]
    elif t[:2] in ("0d", "0D"):
        v = struct.unpack(">d", bytes.fromhex(t[2:]))[0]
    else:
        t = t.rstrip("U")
        if t[:2] in ("0x", "0X"):
            v = _integer(text, t[2:], 16)
        elif t[:2] in ("0b", "0B"):
            v = _integer(text, t[2:], 2)
        elif any(c in t for c in ".eE"):
            v = float(t)
        elif len(t) > 1 and t[0] == "0":
            v = _integer(text, t[1:], 8)
        else:
            v = _integer(text, t, 10)
    return -v if neg else v


class ConstantOverflow(ValueError):
    """An integer literal that ptxas refuses as a "constant overflow"."""


def _integer(text: str, digits: str, base: int) -> int:
    """The digits' value as ptxas reads them: modulo 2^64, and a :class:`ConstantOverflow` when a digit follows a
    value of 2^63 or more (so 2^64 passes, as 0, and 10^20 does not)."""
    value = int(digits, base)
    if value < 1 << 63:
        return value
    value = 0
    for d in digits:
        if value >= 1 << 63:
            raise ConstantOverflow(f"integer constant {text} does not fit 64 bits")
        value = (value * base + int(d, base)) & ((1 << 64) - 1)
    return value


def _trunc_div(a: int | float, b: int | float) -> int | float:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _wrap64(v: int | float) -> int | float:
    """Integers wrap to signed 64 bits, as PTX evaluates constant expressions."""
    if isinstance(v, int):
        v &= (1 << 64) - 1
        return v - (1 << 64) if v >= 1 << 63 else v
    return v


_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _trunc_div,
    "%": lambda a, b: a - _trunc_div(a, b) * b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
}


def constant_value(e: Expr) -> int | float:
    """Value of a numeric literal or constant expression (``(1 << 4) + 3 * 2``) with C semantics: division
    truncates toward zero, integers wrap to 64 bits. Symbols raise ValueError."""
    if isinstance(e, Imm):
        return e.value
    if isinstance(e, BinOp):
        return _wrap64(_BINARY[e.op](constant_value(e.left), constant_value(e.right)))
    if isinstance(e, Unary):
        v = constant_value(e.operand)
        return _wrap64(-v) if e.op == "-" else _wrap64(~int(v))
    raise ValueError(f"not a constant: {e!r}")
