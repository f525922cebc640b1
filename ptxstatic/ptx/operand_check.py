"""Operands of one instruction against its form: count, kind, register types with PTX's size rules.

Type rules (as ptxas applies them): an instruction of a bit-size type (``.b32``) takes registers of any
type of that size; a signed or unsigned integer type takes bit, signed and unsigned registers of its size;
a floating-point type takes bit registers and floating-point registers of its size; predicates only
predicates. ``ld``, ``st`` and ``cvt`` are relaxed: an integer or bit-size operand may be held in a wider
register. Constants: integer literals for integer types, floating-point literals (``1.5``, ``0f3F800000``)
for floating-point types, either for bit-size types.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

from ptxstatic.ptx import ast as A
from ptxstatic.ptx import isa
from ptxstatic.ptx.isa_forms import (
    AT_MOST_ONE_SPACE,
    ATOM_TYPES,
    COMPARISONS_BY_KIND,
    CONVERSIONS,
    CVT_TYPES,
    FLOAT_ROUNDINGS,
    INT_ROUNDINGS,
    ONE_SPACE,
    OPERAND_COUNTS,
    SPECIAL_REQUIRES,
    TYPES_OF,
    Form,
    special_register_type,
)


class Scope(Protocol):
    """What operand checks ask of the function around an instruction (``instruction_check.FunctionScope``)."""

    target: str
    version: tuple[int, int]
    labels: set[str]
    inputs: set[str]

    def register_type(self, name: str) -> str | None: ...

    def variable(self, name: str) -> A.VarDecl | None: ...

    def symbol_known(self, name: str) -> bool: ...

_PAIRED = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64", "s64": "", "u64": "", "b16": "b32",
           "b32": "b64", "f16": "f32", "f32": "f64"}
#: groups of instructions that touch no memory: no cache operators, and a constant is never their destination
NO_CACHE_GROUPS = frozenset({isa.INT, isa.FP16, isa.FP32, isa.FP64, isa.SPECIAL, isa.LOGIC, isa.COMPARE, isa.MOVE,
                             isa.CONTROL, isa.WARP})
NEEDS_SYNC = frozenset({"wmma.load", "wmma.store", "wmma.mma", "mma", "ldmatrix", "stmatrix"})
_FLOAT_ONLY_WORDS = frozenset({"ftz", "approx", "full", "relu", "oob", "NaN", "xorsign", "abs"})


def kind(t: str) -> str:
    """``p`` for predicates, ``b``/``s``/``u`` for bit-size and integer types, ``f`` for floating point."""
    if t == "pred":
        return "p"
    return t[0] if t[0] in "bsu" and not t.startswith(("bf", "ue")) else "f"


def compatible(itype: str, rtype: str, relaxed: bool = False) -> bool:
    """Whether a register of type ``rtype`` may be an operand of an instruction of type ``itype``."""
    ik, rk = kind(itype), kind(rtype)
    if ik == "p" or rk == "p":
        return ik == rk
    ibits, rbits = isa.TYPE_BITS[itype], isa.TYPE_BITS[rtype]
    wide_ok = relaxed and rbits > ibits
    if ik == "f":
        return rtype == itype or (rk == "b" and (rbits == ibits or wide_ok))
    if ik in "su" and rk == "f":
        return False
    return rbits == ibits or wide_ok


@lru_cache(maxsize=4096)
def literal_class(text: str) -> str:
    """``int``, ``float`` or ``bad`` (not a valid PTX constant): all that validation needs of a literal."""
    try:
        value = A.parse_number(text)
    except ValueError:
        return "bad"
    body = text.lstrip("-")
    is_float = body[:2] in ("0f", "0F", "0d", "0D") or isinstance(value, float)
    return "float" if is_float else "int"


def is_integer_type(t: str) -> bool:
    """Whether a type is a signed or unsigned integer type."""
    return bool(t) and kind(t) in "su"


def literal_problem(itype: str, text: str) -> str:
    """Why a numeric literal cannot be an operand of type ``itype`` ('' when it can)."""
    try:
        A.parse_number(text)
    except A.ConstantOverflow as exc:
        return str(exc)
    except ValueError:
        return f"invalid constant {text!r}" + (" (a leading 0 means octal)" if text.lstrip("-")[:1] == "0" else "")
    is_float = literal_class(text) == "float"
    k = kind(itype) if itype else "b"
    if k == "f" and not is_float:
        return f"integer constant {text} for a .{itype} operand; write a floating-point constant (e.g. 1.0)"
    if k in "su" and is_float:
        return f"floating-point constant {text} for a .{itype} operand"
    return ""


def _cvt_rounding(dst: str, src: str, rnd: str) -> str:
    """Why the rounding of a plain cvt is wrong ('' when it is right): a float rounding to a float from an integer
    or a narrower float, an integer rounding to an integer from a float or to the same float type, none to a
    wider float or between integers."""
    fd, fs = kind(dst) == "f", kind(src) == "f"
    what = f"cvt from .{src} to .{dst}"
    if fd and fs and dst == src:
        return f"{what} takes only an integer rounding (.rni, .rzi, .rmi or .rpi)" if rnd in FLOAT_ROUNDINGS else ""
    if fd and fs and isa.TYPE_BITS[dst] > isa.TYPE_BITS[src]:
        return f"rounding .{rnd} is not allowed for {what} (it is exact)" if rnd else ""
    if fd and rnd not in FLOAT_ROUNDINGS:
        return f"{what} needs a rounding modifier (.rn, .rz, .rm or .rp)"
    if fs and not fd and rnd not in INT_ROUNDINGS:
        return f"{what} needs an integer rounding modifier (.rni, .rzi, .rmi or .rpi)"
    if not fs and not fd and rnd:
        return f"rounding .{rnd} is not allowed for an integer cvt"
    return ""


class OperandChecker:
    """Checks the operands of one instruction; each method returns an error message or ''."""

    def __init__(self, ins: A.Instruction, scope: Scope) -> None:
        self.ins = ins
        self.scope = scope
        self.info = ins.info

    # ------------------------------------------------------------------------------ names and literals
    def names(self) -> str:
        """Every register declared, every symbol known, every literal well formed."""
        for op in self.ins.operands:
            problem = self._names_in(op)
            if problem:
                return problem
        return ""

    def _names_in(self, op: object) -> str:
        if isinstance(op, A.Reg):
            return self._register_name(op.name)
        if isinstance(op, A.Sym):
            what = "label" if self.info.opcode in ("bra", "brx.idx") else "symbol"
            return "" if self.scope.symbol_known(op.name) else f"undefined {what} {op.name!r}"
        if isinstance(op, A.Imm):
            try:
                A.parse_number(op.text)
            except ValueError:
                return literal_problem("", op.text)
            return ""
        parts: tuple[object, ...] = ()
        if isinstance(op, A.Neg):
            parts = (op.reg,)
        elif isinstance(op, A.Pair):
            parts = (op.first, op.second)
        elif isinstance(op, (A.Vec, A.Tup)):
            parts = op.items
        elif isinstance(op, A.Addr):
            parts = (op.base, *op.extra) if op.base is not None else op.extra
        return next((p for p in map(self._names_in, parts) if p), "")

    def _register_name(self, name: str) -> str:
        """A register operand is declared or a special register the target has."""
        rtype = self.scope.register_type(name)
        base, dot, _ = name.partition(".")
        if rtype is None:
            if dot and special_register_type(name) is not None:
                return f"{base} is declared as a register, so {name} is not the special register"
            return f"undefined register {name}"
        need = SPECIAL_REQUIRES.get(base)
        if need and rtype == special_register_type(name) and self.scope.target:
            return isa.unmet(f"special register {name}", *need, self.scope.target, self.scope.version)
        return ""

    # --------------------------------------------------------------------------- every instruction
    def common(self, opcode: str) -> str:
        """What every instruction is checked for beyond its names: types, operand count, destination,
        modifiers that go together, and the addresses it names."""
        return (self._known_types(opcode) or self._spaces(opcode) or self._count(opcode) or self._destination()
                or self._ordering(opcode) or self._sync(opcode) or self._words() or self.addresses())

    def _known_types(self, opcode: str) -> str:
        allowed = TYPES_OF.get(opcode)
        if opcode in ("atom", "red"):
            op = next((w for w in self.info.other if w in ATOM_TYPES), "")
            if not op:
                return f"{opcode!r} needs an operation (.add, .cas, .exch, ...)"
            allowed = ATOM_TYPES.get(op)
            if allowed is not None and op != "cas" and len(self.info.types) == 1 and self.info.types[0] == "b128":
                return f"atom.{op} does not take .b128"
        if allowed is None:
            return ""
        types = self.info.types
        if len(types) != 1 or types[0] not in allowed:
            found = ", ".join("." + t for t in types) or "none"
            return f"{self.ins.opcode!r}: expected one of {', '.join('.' + t for t in sorted(allowed))}, found {found}"
        return ""

    def _spaces(self, opcode: str) -> str:
        spaces = self.info.spaces
        if opcode in ONE_SPACE and len(spaces) != 1:
            return f"{opcode!r} needs one state space (.global, .shared, ...)"
        if opcode in AT_MOST_ONE_SPACE and len(spaces) > 1:
            return f"{opcode!r} takes one state space, found {len(spaces)}"
        if "nc" in self.info.cache and self.info.space != "global":
            return ".nc is only for .global loads"
        if opcode in ("st", "atom", "red") and self.info.space == "const":
            return f"'{opcode}' cannot write the read-only .const state space"
        return ""

    def _count(self, opcode: str) -> str:
        first = self.info.other[0] if self.info.other else ("sync" if self.info.sync else "")
        counts = OPERAND_COUNTS.get((opcode, first)) or OPERAND_COUNTS.get((opcode, ""))
        n = len(self.ins.operands) - ("L2::cache_hint" in self.info.cache)
        if counts and n not in counts:
            want = " or ".join(map(str, counts))
            return f"{opcode}.{first} takes {want} operand(s), found {len(self.ins.operands)}".replace(".,", ",")
        return ""

    def _destination(self) -> str:
        ops = self.ins.operands
        if not ops or self.info.first_operand_read or self.info.is_store:
            return ""
        first = ops[0].first if isinstance(ops[0], A.Pair) else ops[0]
        if isinstance(first, A.Reg) and special_register_type(first.name) is not None and \
                self.scope.register_type(first.name) == special_register_type(first.name):
            return f"special register {first.name} is read-only"
        return ""

    def _ordering(self, opcode: str) -> str:
        order, scope = self.info.order, self.info.scope
        if opcode in ("bar", "barrier", "bar.warp.sync") and (order or scope not in ("", "cta")):
            return f"modifier .{order or scope} is not allowed for {opcode!r}"
        if opcode == "membar" and order:
            return f"modifier .{order} is not allowed for 'membar'"
        if opcode not in ("ld", "st"):
            return ""
        if order and order != "weak" and self.info.space in ("param", "const", "local"):
            return f".{order} is not allowed with .{self.info.space}"
        if order in ("relaxed", "acquire", "release") and not scope:
            return f".{order} needs a scope (.cta, .cluster, .gpu or .sys)"
        if scope and not order:
            return f".{scope} needs .relaxed, .acquire or .release"
        if scope and order in ("weak", "volatile"):
            return f".{order} cannot be combined with .{scope}"
        return ""

    def _sync(self, opcode: str) -> str:
        info = self.info
        if opcode in ("shfl", "vote") and not info.sync and isa.target_supports(self.scope.target or "sm_0", "sm_70"):
            return f"{opcode!r} without .sync is not supported on sm_70 and later"
        if opcode in NEEDS_SYNC and not info.sync:
            return f"{opcode!r} needs .sync"
        if opcode in ("bar", "barrier") and not (info.sync or {"arrive", "red"} & set(info.other)):
            return f"{opcode!r} needs .sync, .arrive or .red"
        return ""

    def _words(self) -> str:
        """Cache operators only on memory instructions; control flow takes only .uni."""
        info = self.info
        if info.cache and info.group in NO_CACHE_GROUPS:
            return f"cache operator .{info.cache[0]} is not allowed for {info.opcode!r}"
        if "nc" in info.cache and info.opcode != "ld":
            return ".nc is only for ld.global"
        if info.group == isa.CONTROL:
            words = [*info.spaces, *info.cache, *info.other, *([info.order] if info.order else []),
                     *([info.scope] if info.scope else []), *info.types]
            bad = next((w for w in words if w != "uni"), None)
            if bad and info.opcode in ("bra", "call", "ret", "exit", "brx.idx"):
                return f"modifier .{bad} is not allowed for {info.opcode!r}"
        ops = self.ins.operands
        if ops and isinstance(ops[0], (A.Imm, A.BinOp, A.Unary)) and info.group in NO_CACHE_GROUPS and \
                not info.first_operand_read:
            return "the destination must be a register, not a constant"
        return ""

    def addresses(self) -> str:
        """The register or variable of an address: an integer register, not a 32-bit one for global and
        generic addresses (that is 32-bit code, which ptxas no longer compiles); a variable of the
        instruction's state space (and a kernel or function input parameter is never written)."""
        addrs = [o for o in self.ins.operands if isinstance(o, A.Addr)]
        if len(addrs) != 1 or len(self.info.spaces) > 1:
            return ""
        base, space = addrs[0].base, self.info.space
        if isinstance(base, A.Reg):
            rtype = self.scope.register_type(base.name) or ""
            if rtype and "." not in rtype and kind(rtype) in "fp":
                return f"register {base.name} of type .{rtype} cannot hold an address"
            if rtype and "." not in rtype and space in ("global", "generic") and isa.TYPE_BITS[rtype] == 32:
                return f"a {space} address needs a 64-bit register, {base.name} is .{rtype}"
        elif isinstance(base, A.Sym) and space:
            return self._symbol_address(self.info.opcode, base.name, space)
        return ""

    # ------------------------------------------------------------------------------------- the form
    def form(self, opcode: str, form: Form) -> str:
        if opcode == "cvt" and tuple(self.info.types) in CONVERSIONS:
            form = self._conversion_form(form)
        return (self._types(opcode, form) or self._modifiers(opcode, form) or self._rules(opcode)
                or self._operands(opcode, form))

    def _conversion_form(self, form: Form) -> Form:
        """The form of a conversion to or from a packed or narrow format: that of its rounding."""
        variants = CONVERSIONS[self.info.types[0], self.info.types[1]]
        conv = next((c for c in variants if self.info.rounding in c.roundings), variants[0])
        return Form((conv.signature,), form.types, conv.words, conv.roundings, ntypes=2)

    def _types(self, opcode: str, form: Form) -> str:
        types = self.info.types
        want = form.ntypes if form.types else 0
        if len(types) != want:
            return f"{opcode!r} takes {want} type suffix(es), found {len(types)} in {self.ins.opcode!r}"
        bad = next((t for t in types if t not in form.types), None)
        return f"type .{bad} is not allowed for {opcode!r}" if bad else ""

    def _modifiers(self, opcode: str, form: Form) -> str:
        info = self.info
        extra = [w for w in info.other if w not in form.words]
        if info.cmp and opcode != "setp":
            extra.append(info.cmp)
        if not form.spaces:
            extra += info.spaces
        if not form.memory:
            extra += [*info.cache, *([info.order] if info.order else []),
                      *([info.scope] if info.scope else []), *([f"v{info.vec}"] if info.vec > 1 else [])]
        extra += ["sync"] * info.sync + ["aligned"] * info.aligned
        if extra:
            return f"modifier .{extra[0]} is not allowed for {opcode!r}"
        if info.rounding and info.rounding not in form.roundings:
            return f"rounding .{info.rounding} is not allowed for {opcode!r}"
        dtype = info.dtype
        if opcode != "cvt" and dtype and kind(dtype) != "f":
            if info.rounding:
                return f"rounding .{info.rounding} is only for floating-point types"
            bad = next((w for w in info.other if w in _FLOAT_ONLY_WORDS), None)
            if bad:
                return f"modifier .{bad} is only for floating-point types"
        if opcode == "cvt":
            return ""  # its modifiers go with both its types: _cvt
        if "sat" in info.other and is_integer_type(dtype) and (dtype != "s32" or "wide" in info.other):
            return ".sat with an integer type is only for .s32 (and not .wide)"
        if "ftz" in info.other and dtype == "f64" and "approx" not in info.other:
            return "modifier .ftz is not allowed with .f64"
        return ""

    def _rules(self, opcode: str) -> str:
        info, dtype = self.info, self.info.dtype
        k = kind(dtype) if dtype else ""
        width = [w for w in info.other if w in ("lo", "hi", "wide")]
        if opcode in ("mul", "mad") and k in "su" and len(width) != 1:
            return f"integer {opcode!r} needs exactly one of .lo, .hi, .wide"
        if opcode in ("mul", "mad") and k == "f" and width:
            return f".{width[0]} is only for integer {opcode!r}"
        if width == ["wide"] and dtype not in ("s16", "u16", "s32", "u32"):
            return f".wide is not allowed with .{dtype}"
        if opcode in ("fma", "mad") and k == "f" and dtype in ("f32", "f64") and not info.rounding:
            return f"{opcode!r} needs a rounding modifier (.rn, .rz, .rm or .rp)"
        if opcode in ("div", "rcp", "sqrt") and dtype == "f32" and not (
                info.rounding or {"approx", "full"} & set(info.other)):
            return f"{opcode}.f32 needs a rounding modifier or .approx"
        if opcode in ("div", "rcp", "sqrt") and dtype == "f64" and not info.rounding and "approx" not in info.other:
            return f"{opcode}.f64 needs a rounding modifier"
        if opcode in ("rsqrt", "sin", "cos", "lg2", "ex2") and "approx" not in info.other:
            return f"{opcode!r} needs .approx"
        if opcode in ("abs", "neg") and k == "u":
            return f"{opcode!r} takes only signed or floating-point types"
        if opcode == "setp":
            return self._setp(dtype)
        if opcode == "cvt":
            return self._cvt()
        return ""

    def _setp(self, dtype: str) -> str:
        cmp = self.info.cmp
        if not cmp:
            return "setp needs a comparison (.eq, .lt, ...)"
        if cmp not in COMPARISONS_BY_KIND[kind(dtype)]:
            return f"comparison .{cmp} is not allowed with .{dtype}"
        return ""

    def _cvt(self) -> str:
        dst, src = self.info.types
        rnd, words = self.info.rounding, set(self.info.other)
        variants = CONVERSIONS.get((dst, src))
        if variants is not None:
            if not rnd:
                roundings = sorted({r for c in variants for r in c.roundings})
                return f"cvt from .{src} to .{dst} needs a rounding modifier ({', '.join('.' + r for r in roundings)})"
            need = next(c for c in variants if rnd in c.roundings).needs - words
            return f"cvt from .{src} to .{dst} needs .{min(need)}" if need else ""
        if dst not in CVT_TYPES or src not in CVT_TYPES:
            return f"cvt does not convert .{src} to .{dst}"
        saturation = next((w for w in ("relu", "satfinite") if w in words), "")
        if saturation and not (dst in ("f16", "bf16") and src == "f32"):
            return f"modifier .{saturation} is only for cvt from .f32 to .f16 or .bf16"
        if "ftz" in words and "f32" not in (dst, src):
            return "modifier .ftz is only for cvt from or to .f32"
        return _cvt_rounding(dst, src, rnd)

    # ------------------------------------------------------------------------------------- operands
    def _operands(self, opcode: str, form: Form) -> str:
        ops = self.ins.operands
        if "L2::cache_hint" in self.info.cache and ops:
            ops = ops[:-1]  # the cache policy, a 64-bit register
        signature = next((s for s in form.signatures if len(s) == len(ops)), None)
        if signature is None:
            counts = " or ".join(str(len(s)) for s in form.signatures)
            return f"{opcode!r} takes {counts} operand(s), found {len(ops)}"
        if opcode == "setp" and len(ops) == 4 and not {"and", "or", "xor"} & set(self.info.other):
            return "setp with a fourth operand needs .and, .or or .xor"
        if "wide" in self.info.other:  # the destination (and mad's addend) is twice as wide
            signature = "D" + signature[1:3] + "A" * (len(signature) == 4)
        types = self.info.types
        for i, (role, op) in enumerate(zip(signature, ops, strict=True)):
            problem = self._operand(opcode, role, op, types, i)
            if problem:
                return f"operand {i + 1}: {problem}"
        return ""

    def _operand(self, opcode: str, role: str, op: object, types: tuple[str, ...], index: int) -> str:
        itype = types[0] if types else ""
        if opcode == "mov" and isinstance(op, A.Vec):
            return self._packed(op, itype)
        if role in "dDU":
            want = {"d": itype, "D": _PAIRED.get(itype, ""), "U": "u32"}[role]
            return self._register(op, want, relaxed=False, what="destination")
        if role in "aAu":
            want = {"a": itype, "A": _PAIRED.get(itype, ""), "u": "u32"}[role]
            return self._source(opcode, op, want)
        if role in "pP":
            return self._predicate(op, role == "P", index)
        if role == "m":
            return self._address(opcode, op)
        if role == "l":
            ok = isinstance(op, A.Sym) and op.name in self.scope.labels
            return "" if ok else "expected a label"
        if role in "vw":
            return self._data(op, itype, role == "w")
        if role == "V":
            if not isinstance(op, A.Vec) or len(op.items) != 4:
                return "expected a vector of 4 sources"
            return next(filter(None, (self._operand(opcode, "E", x, types, index) for x in op.items)), "")
        if role == "r":
            return self._register(op, "b32", relaxed=False, what="random-bits")
        return self._register(op, types[0] if role in "cC" else types[1], relaxed=role in "ce",
                              what="destination" if role in "cC" else "source", imm=role in "eE")

    def _packed(self, op: A.Vec, itype: str) -> str:
        """mov packing or unpacking: the parts together are as wide as the type."""
        bits = isa.TYPE_BITS[itype] // max(1, len(op.items))
        for item in op.items:
            rtype = self.scope.register_type(item.name) if isinstance(item, A.Reg) else ""
            if rtype and "." not in rtype and isa.TYPE_BITS[rtype] != bits:
                return f"register {item.name} is .{rtype}; each part of this .{itype} is {bits} bits"
        return ""

    def _register(self, op: object, want: str, relaxed: bool, what: str, imm: bool = False) -> str:
        if imm and isinstance(op, A.Imm):
            return literal_problem(want, op.text)
        if not isinstance(op, A.Reg):
            return f"expected a {what} register"
        rtype = self.scope.register_type(op.name)
        if rtype and want and "." not in rtype and not compatible(want, rtype, relaxed):
            return f"register {op.name} is .{rtype}, not compatible with .{want}"
        return ""

    def _source(self, opcode: str, op: object, want: str) -> str:
        if isinstance(op, A.Imm):
            return literal_problem(want, op.text)
        if isinstance(op, (A.BinOp, A.Unary)):
            return ""  # a constant expression
        if opcode == "mov" and isinstance(op, (A.Sym, A.Vec)):
            return ""
        return self._register(op, want, relaxed=False, what="source")

    def _predicate(self, op: object, destination: bool, index: int) -> str:
        if isinstance(op, A.Pair) and destination:
            return self._predicate(op.first, True, index) or self._predicate(op.second, True, index)
        if isinstance(op, A.Neg) and not destination:
            op = op.reg
        if not isinstance(op, A.Reg):
            return "expected a predicate register"
        rtype = self.scope.register_type(op.name)
        return "" if rtype in ("pred", "") else f"register {op.name} is .{rtype}, expected a predicate"

    def _data(self, op: object, itype: str, source: bool) -> str:
        vec = self.info.vec
        if vec > 1:
            if not isinstance(op, A.Vec) or len(op.items) != vec:
                return f"expected a vector of {vec} registers"
            items = [i for i in op.items if not (isinstance(i, A.Sym) and i.name == "_")]
        elif isinstance(op, A.Vec) and len(op.items) != 1:
            return "a vector operand needs .v2, .v4 or .v8"
        elif isinstance(op, A.Vec):
            items = list(op.items)
        else:
            items = [op]
        sizes = set()
        for item in items:
            if source and isinstance(item, A.Imm):
                problem = literal_problem(itype, item.text)
            else:
                problem = self._register(item, itype, relaxed=True, what="source" if source else "destination")
                rtype = self.scope.register_type(item.name) if isinstance(item, A.Reg) else ""
                if rtype and "." not in rtype:
                    sizes.add(isa.TYPE_BITS[rtype])
            if problem:
                return problem
        return "the registers of a vector must all be of one size" if len(sizes) > 1 else ""

    def _address(self, opcode: str, op: object) -> str:
        if not isinstance(op, A.Addr) or op.extra:
            return "expected a memory operand [address]"
        return ""  # what it names is checked for every instruction, in addresses()

    def _symbol_address(self, opcode: str, name: str, space: str) -> str:
        var = self.scope.variable(name)
        if var is None:
            return f"{name!r} is not a variable"
        if var.space == "param" and space == "generic" and opcode in ("ld", "st"):
            return f"state space mismatch: {name!r} is a .param variable; use {opcode}.param"
        if space not in ("generic", var.space) and var.space != "reg":
            return f"state space mismatch: .{space} access to {name!r}, a .{var.space} variable"
        if opcode == "st" and var.space == "param" and name in self.scope.inputs:
            return f"{name!r} is a function input parameter and cannot be written"
        return ""
