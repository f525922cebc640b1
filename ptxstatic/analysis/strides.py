"""How addresses move from one thread to the next along ``%tid.x``: a static def-use analysis of one function
that gives every integer register the coefficient of ``%tid.x`` in its value: an integer when the value is
``c * tid.x + (something uniform along x)``, :data:`VAR` when the coefficient is uniform but not a constant
(``tid.x * n``), or :data:`UNKNOWN`. Values loaded from an address uniform along x are uniform.

A value masked with a register uniform along x (``i & mask``, the modulo of a power of two held in an argument)
keeps the coefficient of ``i``: the analysis assumes the mask keeps the bits the lanes' values differ in, and
names those ``and`` instructions (:attr:`StrideAnalysis.masked`) so that a judgement built on it can say so.
"""

from __future__ import annotations

from ptxstatic.analysis.defuse import DefUse
from ptxstatic.ptx.ast import Addr, Function, Imm, Instruction, Reg, Sym

TOP, VAR, UNKNOWN = "top", "var", "unknown"
Coef = int | str
_LANE_SPECIALS = ("%tid.x", "%laneid")
#: source operands the stride transfer reads of each opcode it models
_SOURCES = {"add": 2, "sub": 2, "neg": 1, "mul": 2, "shl": 2, "mad": 3}
#: warp-wide collectives whose result is the same in every lane, whatever each lane gave
_WARP_UNIFORM = frozenset({"vote", "activemask", "redux"})
_UNIFORM_OPS = frozenset({
    "and", "or", "xor", "not", "cnot", "shr", "div", "rem", "min", "max", "abs", "selp", "slct", "setp",
    "set", "bfe", "bfi", "popc", "clz", "brev", "bfind", "prmt", "lop3", "shf", "cvt", "testp", "sad",
})


def _meet(a: Coef, b: Coef) -> Coef:
    if a == TOP:
        return b
    if b == TOP or a == b:
        return a
    return UNKNOWN


def _add(a: Coef, b: Coef, sign: int = 1) -> Coef:
    if UNKNOWN in (a, b) or TOP in (a, b):
        return UNKNOWN if UNKNOWN in (a, b) else TOP
    if isinstance(a, int) and isinstance(b, int):
        return a + sign * b
    return VAR


def _through_mask(coefs: list[Coef], srcs: list[object]) -> Coef | None:
    """The coefficient of ``x & m`` for a mask ``m`` in a register uniform along x: x's (assuming the mask keeps
    the bits the lanes' values differ in); None when neither operand is such a mask of a lane-varying value."""
    for k in (0, 1):
        value, mask = coefs[k], coefs[1 - k]
        if mask == 0 and isinstance(srcs[1 - k], Reg) and value not in (0, UNKNOWN):
            return value
    return None


def _product(ca: Coef, a: object, cb: Coef, b: object) -> Coef:
    """Coefficient of ``a * b`` from the operands and their coefficients."""
    if TOP in (ca, cb):
        return TOP
    if ca == 0 and cb == 0:
        return 0
    if ca != 0 and cb != 0:
        return UNKNOWN
    c, factor = (ca, b) if cb == 0 else (cb, a)
    if c == UNKNOWN:
        return UNKNOWN
    if isinstance(factor, Imm) and isinstance(factor.value, int) and isinstance(c, int):
        return c * factor.value
    return VAR


class StrideAnalysis:
    """The ``%tid.x`` coefficient of every register definition of one function (a monotone fixpoint)."""

    def __init__(self, fn: Function, du: DefUse) -> None:
        self.fn = fn
        self.du = du
        self.value: dict[int, Coef] = {}
        ins = fn.instructions
        for i in range(len(ins)):
            if du.defs[i]:
                self.value[i] = TOP
        users = du.chains()
        work = list(reversed(self.value))  # popped in program order: a definition before its uses
        queued = set(work)
        while work:
            i = work.pop()
            queued.discard(i)
            new = _meet(self.value[i], self._transfer(ins[i], i))
            if new != self.value[i]:
                self.value[i] = new
                for u in users.get(i, ()):
                    if u in self.value and u not in queued:
                        queued.add(u)
                        work.append(u)
        #: the ``and`` instructions whose coefficient comes through a mask assumed to keep the varying bits
        self.masked = frozenset(
            i for i in self.value if ins[i].info.opcode == "and" and self.value[i] not in (UNKNOWN, TOP)
            and self.value[i] != 0 and len(ins[i].operands) == 3)

    def coef(self, op: object, user: int) -> Coef:
        """Coefficient of a source operand of instruction ``user``."""
        if isinstance(op, (Imm, Sym)):
            return 0
        if isinstance(op, Addr):
            return self.coef(op.base, user) if op.base is not None else 0
        if not isinstance(op, Reg):
            return UNKNOWN
        if op.name.startswith("%") and op.name.split(".")[0] in ("%tid", "%laneid", "%ntid", "%ctaid", "%nctaid"):
            return 1 if op.name in _LANE_SPECIALS else 0
        defs = self.du.reaching.get((user, op.name))
        if not defs:
            return UNKNOWN
        out: Coef = TOP
        for d in defs:
            out = _meet(out, self.value.get(d, UNKNOWN))
        return out

    def _transfer(self, ins: Instruction, i: int) -> Coef:
        info = ins.info
        op = info.opcode
        srcs = ins.operands[1:]
        if ins.guard is not None and op != "mov":
            return UNKNOWN
        if info.space == "param" and info.is_load:
            return 0
        if op in _WARP_UNIFORM:
            return 0
        if info.is_load or op in ("atom", "shfl", "match"):
            address = next((o for o in srcs if isinstance(o, Addr)), None)
            if address is None or op != "ld" or info.space not in ("global", "const", "shared"):
                return UNKNOWN
            at = self.coef(address, i)
            return at if at == TOP else 0 if at == 0 else UNKNOWN  # not yet known: no conclusion yet
        coefs = [self.coef(o, i) for o in srcs]
        if len(coefs) < _SOURCES.get(op, 0):  # malformed: too few operands
            return UNKNOWN
        integral = bool(info.types) and all(t[:1] in ("b", "s", "u") for t in (info.dtype, info.types[-1]))
        if op in ("mov", "cvta") or (op == "cvt" and integral):
            return coefs[0] if coefs else UNKNOWN
        if op == "add":
            return _add(coefs[0], coefs[1])
        if op == "sub":
            return _add(coefs[0], coefs[1], -1)
        if op == "neg":
            return _add(0, coefs[0], -1)
        if op in ("mul", "mad", "shl") and "hi" not in info.other:
            factor = srcs[1]
            if op == "shl" and isinstance(factor, Imm) and isinstance(factor.value, int):
                factor = Imm(str(1 << factor.value))
            prod = _product(coefs[0], srcs[0], coefs[1], factor)
            return _add(prod, coefs[2]) if op == "mad" else prod
        if op == "and" and len(coefs) == 2 and (through := _through_mask(coefs, srcs)) is not None:
            return through
        if op in _UNIFORM_OPS and all(c == 0 for c in coefs):
            return 0
        if any(c == TOP for c in coefs):
            return TOP
        return UNKNOWN
