"""The forms of the common PTX instructions: their operands, types and modifiers, for validation.

A :class:`Form` says what one opcode accepts: the instruction types, the modifier words beyond types,
roundings and comparisons, whether it names a state space, vector width or memory-ordering words, and its
operands as a signature of role letters (see :data:`ROLES`). Opcodes without a form are checked only for
what every instruction shares (known opcode, known type words, declared operands, target).
The words come from :mod:`ptxstatic.ptx.isa`; this module only groups them per opcode.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.ptx.isa import FP6_FP4X2, FP8X2, QUADS, TYPE_BITS

#: operand roles of a signature
ROLES = {
    "d": "destination register of the instruction type",
    "D": "destination register of twice the instruction type's width (.wide)",
    "a": "source of the instruction type: register or constant",
    "A": "source of twice the instruction type's width (mad.wide's addend)",
    "p": "predicate register (a source may be negated)",
    "P": "predicate destination, or a pair of them (p|q)",
    "u": "32-bit integer source: register or constant",
    "U": "32-bit integer destination register",
    "m": "memory address [...]",
    "l": "label",
    "v": "load destination: register (or {vector}) at least as wide as an integer type",
    "w": "store source: register, constant or {vector}, at least as wide as an integer type",
    "c": "cvt destination of the first type (integers may be wider)",
    "e": "cvt source of the second type (integers may be wider)",
    "C": "cvt destination exactly as wide as the first type",
    "E": "cvt source exactly as wide as the second type, or a constant",
    "V": "{vector} of four cvt sources of the second type",
    "r": "32-bit register (the random bits of .rs rounding)",
}

INT_TYPES = frozenset({"s16", "u16", "s32", "u32", "s64", "u64"})
SIGNED_TYPES = frozenset({"s16", "s32", "s64"})
BIT_TYPES = frozenset({"b16", "b32", "b64"})
FLOAT_TYPES = frozenset({"f32", "f64"})
HALF_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2"})
FLOAT_ROUNDINGS = frozenset({"rn", "rz", "rm", "rp"})
INT_ROUNDINGS = frozenset({"rni", "rzi", "rmi", "rpi"})
MEMORY_TYPES = frozenset({"b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
                          "f32", "f64"})


@dataclass(frozen=True)
class Form:
    """What one opcode accepts."""

    signatures: tuple[str, ...]  # operand role strings, one per accepted operand count
    types: frozenset[str]  # accepted instruction types; exactly one is required (two for cvt)
    words: frozenset[str] = frozenset()  # other modifier words accepted
    roundings: frozenset[str] = frozenset()  # accepted roundings (only with float types unless cvt)
    memory: bool = False  # state space, vector width, cache, ordering and scope words accepted
    ntypes: int = 1
    spaces: bool = False  # a state space accepted (implied by memory)


def _form(signatures: str, types: frozenset[str], words: str = "", roundings: frozenset[str] = frozenset(),
          memory: bool = False, ntypes: int = 1, spaces: bool = False) -> Form:
    return Form(tuple(signatures.split("|")), types, frozenset(words.split()), roundings, memory, ntypes,
                spaces or memory)


_ARITH = INT_TYPES | FLOAT_TYPES | HALF_TYPES
_CONVERTIBLE = frozenset(t for t in TYPE_BITS if t != "pred")
#: the types of a plain cvt (.dtype, .atype); the packed and narrow formats convert as CONVERSIONS says
CVT_TYPES = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "bf16", "f32", "f64"})


@dataclass(frozen=True)
class Conversion:
    """One form of a conversion to or from a packed or narrow format (``cvt.rn.f16x2.f32 d, a, b``)."""

    signature: str  # operand roles
    roundings: frozenset[str]  # the roundings it takes (one is required)
    words: frozenset[str] = frozenset()  # the other modifiers it takes
    needs: frozenset[str] = frozenset()  # the modifiers it requires


def _conversion(signature: str, roundings: str, words: str = "", needs: str = "") -> Conversion:
    return Conversion(signature, frozenset(roundings.split()), frozenset(words.split()) | frozenset(needs.split()),
                      frozenset(needs.split()))


_PAIR_FROM_F32 = (_conversion("CEE", "rn rz", "relu satfinite"), _conversion("CEEr", "rs", "relu satfinite"))
#: cvt to or from a packed or narrow format: (destination type, source type) -> its forms (PTX ISA 9.0, "cvt")
CONVERSIONS: dict[tuple[str, str], tuple[Conversion, ...]] = {
    ("f16x2", "f32"): _PAIR_FROM_F32, ("bf16x2", "f32"): _PAIR_FROM_F32,
    ("tf32", "f32"): (_conversion("CE", "rna", "satfinite"), _conversion("CE", "rn rz", "relu satfinite")),
    **{(d, "f32"): (_conversion("CEE", "rn", "relu", "satfinite"),) for d in (*FP8X2, *FP6_FP4X2)},
    **{(d, "f16x2"): (_conversion("CE", "rn", "relu", "satfinite"),) for d in FP8X2},
    **{("f16x2", s): (_conversion("CE", "rn", "relu"),) for s in (*FP8X2, *FP6_FP4X2)},
    **{(d, "f32"): (_conversion("CVr", "rs", "relu", "satfinite"),) for d in QUADS},
    ("ue8m0x2", "f32"): (_conversion("CEE", "rz rp", "satfinite"),),
    ("ue8m0x2", "bf16x2"): (_conversion("CE", "rz rp", "satfinite"),),
    ("bf16x2", "ue8m0x2"): (_conversion("CE", "rn"),),
}

FORMS: dict[str, Form] = {
    "add": _form("daa", _ARITH | {"s16x2", "u16x2", "f32x2"}, "sat ftz", FLOAT_ROUNDINGS),
    "sub": _form("daa", _ARITH | {"s16x2", "u16x2", "f32x2"}, "sat ftz", FLOAT_ROUNDINGS),
    "mul": _form("daa", _ARITH | {"f32x2"}, "lo hi wide sat ftz", FLOAT_ROUNDINGS),
    "mad": _form("daaa", INT_TYPES | FLOAT_TYPES, "lo hi wide sat ftz", FLOAT_ROUNDINGS),
    "fma": _form("daaa", FLOAT_TYPES | HALF_TYPES | {"f32x2"}, "sat ftz relu oob", FLOAT_ROUNDINGS),
    "div": _form("daa", INT_TYPES | FLOAT_TYPES, "approx full ftz", FLOAT_ROUNDINGS),
    "rem": _form("daa", INT_TYPES),
    "min": _form("daa|daaa", _ARITH | {"s16x2", "u16x2"}, "ftz NaN xorsign abs relu"),
    "max": _form("daa|daaa", _ARITH | {"s16x2", "u16x2"}, "ftz NaN xorsign abs relu"),
    "abs": _form("da", SIGNED_TYPES | FLOAT_TYPES | HALF_TYPES, "ftz"),
    "neg": _form("da", SIGNED_TYPES | FLOAT_TYPES | HALF_TYPES, "ftz"),
    "and": _form("daa", BIT_TYPES | {"pred"}),
    "or": _form("daa", BIT_TYPES | {"pred"}),
    "xor": _form("daa", BIT_TYPES | {"pred"}),
    "not": _form("da", BIT_TYPES | {"pred"}),
    "cnot": _form("da", BIT_TYPES),
    "shl": _form("dau", BIT_TYPES),
    "shr": _form("dau", BIT_TYPES | INT_TYPES),
    "popc": _form("Ua", frozenset({"b32", "b64"})),
    "clz": _form("Ua", frozenset({"b32", "b64"})),
    "brev": _form("da", frozenset({"b32", "b64"})),
    "bfind": _form("Ua", frozenset({"u32", "s32", "u64", "s64"}), "shiftamt"),
    "selp": _form("daap", BIT_TYPES | INT_TYPES | FLOAT_TYPES),
    "setp": _form("Paa|Paap", BIT_TYPES | INT_TYPES | FLOAT_TYPES | HALF_TYPES, "and or xor ftz"),
    "rcp": _form("da", FLOAT_TYPES, "approx ftz", FLOAT_ROUNDINGS),
    "sqrt": _form("da", FLOAT_TYPES, "approx ftz", FLOAT_ROUNDINGS),
    "rsqrt": _form("da", FLOAT_TYPES, "approx ftz"),
    "sin": _form("da", frozenset({"f32"}), "approx ftz"),
    "cos": _form("da", frozenset({"f32"}), "approx ftz"),
    "lg2": _form("da", frozenset({"f32"}), "approx ftz"),
    "ex2": _form("da", frozenset({"f32"}) | HALF_TYPES, "approx ftz"),
    "ld": _form("vm", MEMORY_TYPES, "unified relaxed", memory=True),
    "ldu": _form("vm", MEMORY_TYPES, memory=True),
    "st": _form("mw", MEMORY_TYPES, "relaxed", memory=True),
    "mov": _form("da", _CONVERTIBLE | {"pred"}),
    "cvta": _form("da", frozenset({"u32", "u64"}), "to", spaces=True),
    "cvt": _form("ce", CVT_TYPES | {t for pair in CONVERSIONS for t in pair}, "ftz sat relu satfinite",
                 FLOAT_ROUNDINGS | INT_ROUNDINGS, ntypes=2),
    "bra": _form("l", frozenset(), "uni"),
    "ret": _form("", frozenset(), "uni"),
    "exit": _form("", frozenset()),
}



_ATOM_TYPES = {
    **dict.fromkeys(("and", "or", "xor"), frozenset({"b32", "b64"})),
    "add": frozenset({"u32", "s32", "u64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2"}),
    **dict.fromkeys(("inc", "dec"), frozenset({"u32"})),
    **dict.fromkeys(("min", "max"), frozenset({"u32", "s32", "u64", "s64", "f32", "f64", "f16", "f16x2", "bf16",
                                              "bf16x2"})),
    "exch": frozenset({"b32", "b64", "b128"}),
    "cas": frozenset({"b16", "b32", "b64", "b128"}),
}

#: opcodes without a form whose type is still known: opcode -> accepted types (exactly one is required);
#: atom and red by operation
TYPES_OF: dict[str, frozenset[str]] = {
    "shfl": frozenset({"b32"}),
    "vote": frozenset({"b32", "pred"}),
    "match": frozenset({"b32", "b64"}),
    "redux": frozenset({"b32", "u32", "s32", "f32"}),
    "wmma.load": frozenset({"f16", "bf16", "tf32", "s8", "u8", "s4", "u4", "b1", "f64", "f32", "s32"}),
    "wmma.store": frozenset({"f16", "f32", "s32", "f64"}),
    **dict.fromkeys(("add.cc", "addc", "sub.cc", "subc", "mad.cc", "madc"), frozenset({"u32", "s32", "u64", "s64"})),
    **{op: frozenset({"b64"}) for op in (
        "mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.test_wait",
        "mbarrier.try_wait", "mbarrier.pending_count", "mbarrier.expect_tx", "mbarrier.complete_tx")},
}
ATOM_TYPES: dict[str, frozenset[str]] = _ATOM_TYPES

#: opcodes that name exactly one state space
ONE_SPACE = frozenset({"cvta", "isspacep"})
#: opcodes that name at most one state space
AT_MOST_ONE_SPACE = frozenset({"ld", "ldu", "st", "atom", "red", "cvta", "isspacep", "prefetch", "prefetchu"})

#: operand counts of opcodes without a form, by their first modifier word (a cache policy operand aside)
OPERAND_COUNTS: dict[tuple[str, str], tuple[int, ...]] = {
    ("bar", "sync"): (1, 2), ("barrier", "sync"): (1, 2), ("bar", "arrive"): (2,), ("barrier", "arrive"): (2,),
    ("bar", "red"): (3, 4), ("barrier", "red"): (3, 4), ("bar.warp.sync", ""): (1,),
    ("atom", ""): (3,), ("atom", "cas"): (4,), ("red", ""): (2,),
}

#: comparisons accepted by setp per kind of type
COMPARISONS_BY_KIND = {
    "f": frozenset({"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}),
    "s": frozenset({"eq", "ne", "lt", "le", "gt", "ge"}),
    "u": frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}),
    "b": frozenset({"eq", "ne"}),
}

#: special registers and their types; those in SPECIAL_VECTORS take a .x/.y/.z component
SPECIAL_REGISTERS: dict[str, str] = {
    **dict.fromkeys((
        "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
        "%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi", "%total_smem_size", "%aggr_smem_size",
        "%dynamic_smem_size", "%reserved_smem_offset_begin", "%reserved_smem_offset_end",
        "%reserved_smem_offset_cap", "%reserved_smem_offset_0", "%reserved_smem_offset_1",
        "%globaltimer_lo", "%globaltimer_hi", "%cluster_ctarank", "%cluster_nctarank",
        *(f"%pm{i}" for i in range(8)), *(f"%envreg{i}" for i in range(32)),
    ), "u32"),
    **dict.fromkeys(("%clock64", "%gridid", "%globaltimer", "%current_graph_exec",
                     *(f"%pm{i}_64" for i in range(8))), "u64"),
    "%is_explicit_cluster": "pred",
}
SPECIAL_VECTORS = frozenset({
    "%tid", "%ntid", "%ctaid", "%nctaid", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
})


#: special registers that need a newer target than sm_75 (the clusters of sm_90)
SPECIAL_REQUIRES: dict[str, tuple[str, tuple[int, int]]] = {
    **dict.fromkeys(("%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
                     "%cluster_nctarank", "%is_explicit_cluster"), ("sm_90", (7, 8))),
    "%aggr_smem_size": ("sm_90", (8, 1)),
}


def special_register_type(name: str) -> str | None:
    """The type of a special register (``%tid.x`` -> ``u32``), or None when the name is not one."""
    base, dot, comp = name.partition(".")
    if dot:
        return "u32" if base in SPECIAL_VECTORS and comp in ("x", "y", "z", "w") else None
    if name in SPECIAL_VECTORS:
        return "v4.u32"
    return SPECIAL_REGISTERS.get(name)
