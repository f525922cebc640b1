"""Validation after parsing: refuse what ptxas refuses, with ``FILE:LINE:COL`` errors.

The grammar accepts any opcode, modifier and operand; this pass checks what the PTX ISA requires of a
module: its directives and their order (``.version`` first, then ``.target``, ``.address_size`` 64), the
target against the version, symbols declared before use and defined once, and of each instruction its
opcode, types, modifiers, operands (count, kind, register type with PTX's size rules), the registers,
labels and variables it names, and the target and version it needs.

The pass has a module part (:class:`ModuleChecker`, fed top-level items in order, so functions may arrive
one at a time) and a per-function part (:func:`check_function`); :func:`validate_module` runs both over a
parsed module and keeps each function's errors apart, so that a caller can analyse the kernels that are
valid. Errors are :class:`~ptxstatic.errors.SourceError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.errors import SourceError
from ptxstatic.limits import MAX_STATIC_SHARED_BYTES
from ptxstatic.ptx import ast as A
from ptxstatic.ptx import isa
from ptxstatic.ptx.instruction_check import FunctionScope, declaration_problem, declared_bytes

#: the tuning directives whose values ptxas requires to be positive
POSITIVE_DIRECTIVES = frozenset({"maxntid", "reqntid", "minnctapersm", "maxnreg"})


@dataclass
class Validation:
    """The errors of a module: those of the module itself, and those of each function by name."""

    module: list[SourceError] = field(default_factory=list)
    functions: dict[str, list[SourceError]] = field(default_factory=dict)

    @property
    def errors(self) -> list[SourceError]:
        """Every error, in file order."""
        every = self.module + [e for errs in self.functions.values() for e in errs]
        return sorted(every, key=lambda e: (e.line, e.column))

    def blocking(self, module: A.Module, kernel: str) -> list[SourceError]:
        """The errors that stop ``kernel`` from being analysed: the module's, its own and its callees'."""
        names = _callees(module, kernel)
        return sorted(self.module + [e for n in names for e in self.functions.get(n, [])],
                      key=lambda e: (e.line, e.column))


def _callees(module: A.Module, kernel: str) -> set[str]:
    """``kernel`` and every function it calls, directly or not (by name)."""
    bodies = {f.name: f for f in module.functions if f.body is not None}
    seen, todo = set(), [kernel]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        fn = bodies.get(name)
        for ins in fn.instructions if fn else ():
            if ins.opcode.startswith("call"):
                todo += [o.name for o in ins.operands if isinstance(o, A.Sym)]
    return seen


class _Lines:
    """Source lines for carets, read on first use."""

    def __init__(self, filename: str, source: str | None) -> None:
        self.filename = filename
        self._source = source
        self._lines: list[str] | None = None

    def error(self, line: int, column: int, message: str) -> SourceError:
        if self._lines is None:
            text = self._source
            if text is None:
                try:
                    text = Path(self.filename).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    text = ""
            self._lines = text.split("\n")
        src = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        return SourceError(self.filename, line, max(1, column), message, src)


class ModuleChecker:
    """The module part of validation, fed top-level items in file order (:meth:`item`), then :meth:`finish`."""

    def __init__(self, filename: str, source: str | None = None) -> None:
        self.lines = _Lines(filename, source)
        self.errors: list[SourceError] = []
        self.version: tuple[int, int] | None = None
        self.target = ""
        self.seen_code = False  # a statement other than the header directives came
        self.header: list[str] = []  # directive names of the header, in order
        self.variables: dict[str, A.VarDecl] = {}
        self.functions: dict[str, A.Function] = {}
        self.defined: set[str] = set()
        self.section_labels: set[str] = set()
        self.valid: set[tuple] = set()  # instruction keys found valid, shared by the functions
        self.loc_names: dict[str, int] = {}  # .loc function_name labels (first line), checked at the end
        self.shared: dict[str, _SharedUse] = {}  # what each function checked so far takes of shared memory

    def _fail(self, line: int, column: int, message: str) -> None:
        self.errors.append(self.lines.error(line, column, message))

    def item(self, item: A.TopItem) -> None:
        if isinstance(item, A.Directive):
            self._directive(item)
        elif isinstance(item, A.VarDecl):
            self._code(item.line)
            self._variable(item)
        elif isinstance(item, A.Function):
            self._code(item.line)
            self._function(item)
        elif isinstance(item, A.Section):
            self._code(item.line)
            self._section(item)

    def _code(self, line: int) -> None:
        if not self.seen_code:
            self.seen_code = True
            if not self.errors:
                self._require_header(line)

    def _require_header(self, line: int) -> None:
        if "version" not in self.header:
            self._fail(max(line, 1), 1, "missing .version directive at the start of the file")
        elif "target" not in self.header:
            self._fail(max(line, 1), 1, "missing .target directive after .version")

    def _directive(self, d: A.Directive) -> None:
        if d.name == "alias":
            self._code(d.line)
            return
        problem = self._order_problem(d.name)
        if problem:
            if not self.errors:  # one error for a broken header is enough
                self._fail(d.line, 1, problem)
            self.seen_code = True
            return
        if d.name not in self.header:
            self.header.append(d.name)
        getattr(self, "_" + d.name)(d)

    def _order_problem(self, name: str) -> str:
        """Why a header directive cannot come here ('' when it can)."""
        header = self.header
        if name == "version":
            return ".version must be the first directive (and written once)" if header or self.seen_code else ""
        if "version" not in header:
            return "missing .version directive at the start of the file"
        if name == "target":
            if header[-1] == "target" and not self.seen_code:
                return ""  # ptxas takes a repeated .target
            return ".target must be right after .version" if len(header) != 1 or self.seen_code else ""
        if "target" not in header:
            return "missing .target directive after .version"
        return ".address_size must be right after .target" if len(header) != 2 or self.seen_code else ""

    def _version(self, d: A.Directive) -> None:
        v = isa.parse_version(d.values[0])
        if v is None:
            self._fail(d.line, 1, f"invalid .version {d.values[0]!r}; expected MAJOR.MINOR")
        elif v > isa.NEWEST_VERSION:
            newest = ".".join(map(str, isa.NEWEST_VERSION))
            self._fail(d.line, 1, f"unsupported .version {d.values[0]}; the newest known is {newest}")
        else:
            self.version = v

    def _target(self, d: A.Directive) -> None:
        arch = [t for t in d.values if t not in isa.TARGET_OPTIONS]
        if len(arch) != 1:
            self._fail(d.line, 1, "expected one target architecture in .target, e.g. sm_80")
            return
        name = arch[0].replace("compute_", "sm_")
        need = isa.TARGET_MIN_VERSION.get(name)
        if need is None:
            self._fail(d.line, 1, f"unknown target architecture {arch[0]!r}")
        elif self.version is not None and self.version < need:
            have = ".".join(map(str, self.version))
            self._fail(d.line, 1, f"PTX .version {have} does not support .target {arch[0]} "
                                  f"(it needs {need[0]}.{need[1]} or later)")
        else:
            self.target = name

    def _address_size(self, d: A.Directive) -> None:
        if d.values[0] == "32":
            self._fail(d.line, 1, ".address_size 32: 32-bit addressing is not supported by ptxas any more")
        elif d.values[0] != "64":
            self._fail(d.line, 1, f"invalid .address_size {d.values[0]}; expected 64 (or 32)")

    def _variable(self, v: A.VarDecl) -> None:
        problem = declaration_problem(v)
        if problem:
            self._fail(v.line, v.column, problem)
        extern = "extern" in v.linkage
        for decl in v.names:
            if decl.name in self.variables or decl.name in self.functions:
                earlier = self.variables.get(decl.name)
                if not (extern or (earlier is not None and "extern" in earlier.linkage)):
                    self._fail(v.line, v.column, f"duplicate definition of {decl.name!r}")
                    continue
            self.variables[decl.name] = v

    def _function(self, fn: A.Function) -> None:
        earlier = self.functions.get(fn.name)
        if fn.name in self.variables:
            self._fail(fn.line, fn.column, f"duplicate definition of {fn.name!r}")
        elif fn.body is not None and fn.name in self.defined:
            self._fail(fn.line, fn.column, f"duplicate definition of function {fn.name!r}")
        elif earlier is not None and parameter_sizes(earlier) != parameter_sizes(fn):
            self._fail(fn.line, fn.column, f"inconsistent prototypes of {fn.name!r}: parameters or results differ")
        for d in fn.directives:
            if d.name in POSITIVE_DIRECTIVES and any(v == 0 for v in d.values):
                self._fail(fn.line, fn.column, f".{d.name} of {fn.name!r} takes positive values, not 0")
        if fn.body is not None:
            self.defined.add(fn.name)
        self.functions[fn.name] = fn

    def _section(self, sec: A.Section) -> None:
        problem = ""
        for entry in sec.entries:
            if entry.label:
                if entry.label in self.section_labels:
                    problem = problem or f"duplicate definition of label {entry.label!r}"
                self.section_labels.add(entry.label)
            problem = problem or _section_entry_problem(entry)
        if problem:
            self._fail(sec.line, 1, f"in .section {sec.name}: {problem}")

    def finish(self) -> None:
        """After the last item: an empty file still needs its header, and the ``.loc ... function_name``
        labels must be defined in a section."""
        if not self.seen_code:
            self._require_header(1)
        for name, line in self.loc_names.items():
            if name not in self.section_labels:
                self._fail(line, 1, f"undefined label {name!r} in .loc function_name")
                return

    def check_function(self, fn: A.Function) -> list[SourceError]:
        """The errors of one function with a body, against what the module declared before it."""
        for s in fn.statements:
            if isinstance(s, A.LocDirective) and s.function_name:
                self.loc_names.setdefault(s.function_name, s.src_line)
        version = self.version or isa.NEWEST_VERSION
        scope = FunctionScope(self.variables, self.functions, self.target, version, self.lines.error, self.valid)
        errors = scope.check(fn)
        self.shared[fn.name] = _shared_use(fn, self.variables)
        total = self._static_shared_bytes(fn.name) if fn.is_kernel and not errors else 0
        if total > MAX_STATIC_SHARED_BYTES:
            errors.append(self.lines.error(fn.line, fn.column, f"kernel {fn.name!r} uses {total} bytes of static "
                                           f"shared memory; ptxas allows {MAX_STATIC_SHARED_BYTES} (48 KiB, the "
                                           "rest of a GPU's shared memory is for dynamic shared memory)"))
        return errors

    def _static_shared_bytes(self, kernel: str) -> int:
        """Bytes of the .shared variables of ``kernel``, of the functions it calls (those checked so far) and of
        the module's .shared variables they name."""
        seen, todo, names, total = set(), [kernel], set(), 0
        while todo:
            use = self.shared.get(todo.pop())
            if use is None:
                continue
            total += use.own
            names |= use.module
            todo += [c for c in use.callees if c not in seen]
            seen.update(use.callees)
        return total + sum(declared_bytes(self.variables[n], d) for n in names for d in self.variables[n].names
                           if d.name == n)


@dataclass(frozen=True)
class _SharedUse:
    """What a function takes of static shared memory: its own .shared variables, the module's it names, the
    functions it calls."""

    own: int
    module: frozenset[str]
    callees: frozenset[str]


def _shared_use(fn: A.Function, variables: dict[str, A.VarDecl]) -> _SharedUse:
    own, names, callees = 0, set(), set()
    shared = {n for n, v in variables.items() if v.space == "shared"}
    for s in fn.statements:
        if type(s) is A.VarDecl and s.space == "shared":
            own += sum(declared_bytes(s, d) for d in s.names)
        elif type(s) is A.Instruction and (shared or s.opcode.startswith("call")):
            syms = {o.name for o in s.operands if type(o) is A.Sym}
            syms |= {o.base.name for o in s.operands if type(o) is A.Addr and type(o.base) is A.Sym}
            names |= syms & shared
            if s.opcode.startswith("call"):
                callees |= syms
    return _SharedUse(own, frozenset(names), frozenset(callees))


def parameter_sizes(fn: A.Function) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """The byte sizes of a function's results and parameters (what a declaration and a definition share)."""
    def sizes(decls: tuple[A.VarDecl, ...]) -> tuple[int, ...]:
        return tuple(declared_bytes(v, d) for v in decls for d in v.names)
    return sizes(fn.returns), None if fn.params is None else sizes(fn.params)


def _section_entry_problem(entry: A.SectionEntry) -> str:
    """A constant of a section entry that does not fit its .bN size ('' when all fit)."""
    bits = {"b8": 8, "b16": 16, "b32": 32, "b64": 64}.get(entry.directive, 0)
    limit = 1 << bits
    for item in entry.items:
        if type(item) is not A.Imm:
            continue
        text = item.text
        if text.isdigit() and (text[0] != "0" or len(text) == 1) and int(text) < limit:
            continue  # the common case: a plain decimal byte
        try:
            value = A.parse_number(item.text)
        except ValueError:
            return f"invalid constant {item.text!r}"
        if not isinstance(value, int) or not -(1 << (bits - 1)) <= value < (1 << bits):
            return f"value {item.text} out of range for .{entry.directive}"
    return ""


def validate_module(module: A.Module, source: str | None = None) -> Validation:
    """Validate a parsed module (``source``: its text, for the caret lines; read from the file if omitted)."""
    checker = ModuleChecker(module.filename, source)
    result = Validation()
    for item in module.items:
        checker.item(item)
        if isinstance(item, A.Function) and item.body is not None:
            errors = checker.check_function(item)
            if errors:
                result.functions.setdefault(item.name, []).extend(errors)
    checker.finish()
    result.module = checker.errors
    return result


def apply(module: A.Module, validation: Validation, recover: bool) -> None:
    """Raise the first error, or with ``recover`` record them all in ``module.errors`` and drop the functions
    that have errors (as the parser drops functions it cannot parse)."""
    errors = validation.errors
    if not errors:
        return
    if not recover:
        raise errors[0]
    module.errors.extend(errors)
    module.errors.sort(key=lambda e: (e.line, e.column))
    broken = set(validation.functions)
    module.items = [i for i in module.items if not (isinstance(i, A.Function) and i.name in broken
                                                    and i.body is not None)]


def check(module: A.Module, source: str | None = None, recover: bool = False) -> A.Module:
    """Validate ``module`` and :func:`apply` the result; returns the module."""
    apply(module, validate_module(module, source), recover)
    return module

