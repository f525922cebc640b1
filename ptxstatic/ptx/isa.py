"""The PTX instruction-set table: every opcode up to PTX ISA 9.0, its group, and what its modifiers mean.

This is the one place in the code that knows opcodes. Everything else asks :func:`op_info` for an
:class:`OpInfo`, which is computed once per distinct opcode token (``ld.global.nc.v4.f32``) and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# ---------------------------------------------------------------------------------------------- groups
INT = "int"
FP16 = "fp16"  # f16, bf16, f16x2, bf16x2, tf32 and the 8/6/4-bit float formats
FP32 = "fp32"
FP64 = "fp64"
SPECIAL = "special"  # rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, floating-point div
LOGIC = "logic"  # bitwise logic, shifts, bit-field operations
COMPARE = "compare"  # set, setp, selp, slct, testp
MOVE = "move"  # mov, cvt, cvta, prmt, address-space conversion
CONTROL = "control"
SYNC = "sync"  # barriers, memory fences
MEM_GLOBAL = "mem.global"
MEM_SHARED = "mem.shared"
MEM_LOCAL = "mem.local"
MEM_CONST = "mem.const"
MEM_PARAM = "mem.param"
MEM_GENERIC = "mem.generic"
MEM_TEXTURE = "mem.texture"  # texture and surface instructions
ATOMIC = "atomic"  # atom, red, multimem reductions
WARP = "warp"  # shfl, vote, match, redux, activemask, elect
TENSOR = "tensor"  # mma, wmma, wgmma, tcgen05, ldmatrix, stmatrix, movmatrix
ASYNC = "async"  # cp.async, bulk copies, tensor maps, mbarrier
MISC = "misc"  # hints and queries with no data-path work

MEMORY_GROUPS = (MEM_GLOBAL, MEM_SHARED, MEM_LOCAL, MEM_CONST, MEM_PARAM, MEM_GENERIC, MEM_TEXTURE)
GROUPS = (
    INT, FP16, FP32, FP64, SPECIAL, LOGIC, COMPARE, MOVE, CONTROL, SYNC,
    *MEMORY_GROUPS, ATOMIC, WARP, TENSOR, ASYNC, MISC,
)

# ------------------------------------------------------------------------------------- modifier words
TYPE_BITS: dict[str, int] = {
    "pred": 1, "b1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4,
    "b8": 8, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "e2m1": 4, "e2m3": 6, "e3m2": 6, "ue8m0": 8,
    "b16": 16, "s16": 16, "u16": 16, "f16": 16, "bf16": 16,
    "e4m3x2": 16, "e5m2x2": 16, "e2m1x2": 8, "e2m3x2": 16, "e3m2x2": 16, "ue8m0x2": 16,
    "b32": 32, "s32": 32, "u32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "tf32": 32,
    "s16x2": 32, "u16x2": 32, "e4m3x4": 32, "e5m2x4": 32, "e2m1x4": 16, "e2m3x4": 32, "e3m2x4": 32,
    "b64": 64, "s64": 64, "u64": 64, "f64": 64, "f32x2": 64,
    "b128": 128, "b1024": 1024,
}
TYPES = frozenset(TYPE_BITS)
#: the types a variable or register may be declared with (a register may also be .pred, a parameter not .f16x2)
VARIABLE_TYPES = frozenset({"b8", "b16", "b32", "b64", "b128", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                            "f16", "f16x2", "f32", "f64"})
_HALF_TYPES = frozenset({
    "f16", "bf16", "f16x2", "bf16x2", "tf32", "e4m3", "e5m2", "e2m1", "e2m3", "e3m2", "ue8m0",
    "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "e4m3x4", "e5m2x4", "e2m1x4", "e2m3x4",
    "e3m2x4",
})
_INT_TYPES = frozenset(t for t in TYPES if t[0] in "bsu" and not t.startswith(("bf", "ue"))) | {"pred"}

#: state-space words as they appear in opcodes, mapped to the space they name
SPACES: dict[str, str] = {
    "global": "global", "shared": "shared", "shared::cta": "shared", "shared::cluster": "shared",
    "local": "local", "const": "const", "param": "param", "param::entry": "param", "param::func": "param",
    "tex": "tex", "surf": "surf", "reg": "reg", "sreg": "sreg",
}
ROUNDINGS = frozenset({"rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "rs"})
COMPARISONS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
    "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
})
ORDERS = frozenset({"weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "mmio", "sc"})
SCOPES = frozenset({"cta", "cluster", "gpu", "sys"})
_CACHE_OPS = frozenset({"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"})
_CACHE_PREFIXES = ("L1::", "L2::", "level::")

# ------------------------------------------------------------------------------------- opcode tables
_TYPED_ARITH = frozenset({
    "add", "sub", "mul", "mad", "fma", "min", "max", "abs", "neg", "mul24", "mad24", "sad", "rem",
    "copysign", "add.cc", "addc", "sub.cc", "subc", "mad.cc", "madc", "dp4a", "dp2a",
})
_SPECIAL_OPS = frozenset({"rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"})
_VIDEO_OPS = frozenset({
    "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
    "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
    "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
})
_MEMORY_OPS = frozenset({"ld", "ldu", "st", "prefetch", "prefetchu"})
_TEXTURE_OPS = frozenset({"tex", "tld4", "txq", "suld", "sust", "sured", "suq"})

#: canonical opcode -> fixed group (type- or space-dependent opcodes are resolved in :func:`_group`)
FIXED_GROUP: dict[str, str] = {
    **{op: INT for op in (*_VIDEO_OPS, "bmsk", "szext")},
    **{op: LOGIC for op in (
        "and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr",
        "bfe", "bfi", "brev", "bfind", "clz", "popc", "fns",
    )},
    **{op: COMPARE for op in ("set", "setp", "selp", "slct", "testp")},
    **{op: MOVE for op in ("mov", "cvt", "cvt.pack", "cvta", "prmt", "mapa", "getctarank")},
    **{op: CONTROL for op in ("bra", "brx.idx", "call", "ret", "exit", "trap", "brkpt")},
    **{op: SYNC for op in (
        "bar", "barrier", "bar.warp.sync", "barrier.cluster", "membar", "fence", "griddepcontrol",
    )},
    **{op: ATOMIC for op in ("atom", "red", "multimem.ld_reduce", "multimem.st", "multimem.red")},
    **{op: WARP for op in ("shfl", "vote", "match", "redux", "activemask", "elect")},
    **{op: TENSOR for op in (
        "mma", "mma.sp", "wmma.load", "wmma.store", "wmma.mma", "ldmatrix", "stmatrix", "movmatrix",
        "wgmma.mma_async", "wgmma.mma_async.sp", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
        "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.ld", "tcgen05.st",
        "tcgen05.wait", "tcgen05.cp", "tcgen05.shift", "tcgen05.mma", "tcgen05.mma.sp", "tcgen05.mma.ws",
        "tcgen05.mma.ws.sp", "tcgen05.commit", "tcgen05.fence",
    )},
    **{op: ASYNC for op in (
        "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
        "cp.async.mbarrier.arrive", "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.bulk.tensor",
        "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor",
        "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "tensormap.replace",
        "tensormap.cp_fenceproxy", "mbarrier.init", "mbarrier.inval", "mbarrier.arrive",
        "mbarrier.arrive_drop", "mbarrier.expect_tx", "mbarrier.complete_tx", "mbarrier.test_wait",
        "mbarrier.try_wait", "mbarrier.pending_count", "st.async", "red.async", "st.bulk",
        "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel",
    )},
    **{op: MISC for op in (
        "isspacep", "istypep", "nanosleep", "pmevent", "createpolicy", "applypriority", "discard",
        "setmaxnreg", "alloca", "stacksave", "stackrestore",
    )},
}

#: every opcode the table knows (the base words the parser sees first in an instruction token)
OPCODES = frozenset(
    FIXED_GROUP.keys() | _TYPED_ARITH | _SPECIAL_OPS | _MEMORY_OPS | _TEXTURE_OPS | {"div"}
)
_COMPOUND = {tuple(op.split(".")) for op in OPCODES if "." in op}
_MAX_COMPOUND = max(len(c) for c in _COMPOUND)
BASE_WORDS = frozenset(op.split(".")[0] for op in OPCODES)

#: opcodes whose first operand is read, never written, even when it is a register
_FIRST_OPERAND_READ = frozenset({
    "nanosleep", "pmevent", "bar.warp.sync", "brx.idx", "griddepcontrol", "setmaxnreg",
    "bra", "call", "trap", "brkpt", "membar", "fence", "prefetch", "prefetchu",
})


@dataclass(frozen=True, slots=True)
class OpInfo:
    """The meaning of one opcode token, e.g. ``ld.global.nc.v4.f32``."""

    opcode: str  # canonical opcode: "ld", "cp.async.bulk.tensor", "add.cc"
    group: str  # one of GROUPS
    space: str  # state space accessed: "global", "shared", ..., "generic" for space-less memory ops, "" if none
    spaces: tuple[str, ...]  # every state space named, in order (a copy names destination then source)
    types: tuple[str, ...]  # data types in order of appearance (cvt and mma have several)
    vec: int  # vector width (.v2/.v4/.v8), 1 when scalar
    rounding: str
    cmp: str  # comparison of set/setp
    order: str  # memory-ordering semantics
    scope: str
    cache: tuple[str, ...]  # cache operators and eviction hints
    sync: bool
    aligned: bool
    other: tuple[str, ...]  # every other modifier, in order

    @property
    def dtype(self) -> str:
        """The primary data type: the first one written."""
        return self.types[0] if self.types else ""

    @property
    def width_bytes(self) -> int:
        """Bytes moved per thread by a memory access (0 for non-memory instructions)."""
        if not self.is_memory_access or not self.types:
            return 0
        return max(1, TYPE_BITS.get(self.types[-1], 0) * self.vec // 8)

    @property
    def is_memory_access(self) -> bool:
        return self.group in MEMORY_GROUPS or self.group == ATOMIC or self.opcode in _ASYNC_COPIES

    @property
    def is_load(self) -> bool:
        """Whether the instruction writes a register with a value read from memory."""
        return self.opcode in _LOADS or (self.group == ATOMIC and self.opcode == "atom")

    @property
    def is_store(self) -> bool:
        return self.opcode in _STORES or self.opcode in ("red", "multimem.red", "multimem.st")

    @property
    def first_operand_read(self) -> bool:
        """True when the first operand is a source even though it may be a register."""
        if self.opcode in ("bar", "barrier"):
            return "red" not in self.other
        return self.opcode in _FIRST_OPERAND_READ


_LOADS = frozenset({"ld", "ldu", "tex", "tld4", "suld", "wmma.load", "ldmatrix", "tcgen05.ld"})
_STORES = frozenset({"st", "sust", "sured", "wmma.store", "stmatrix", "tcgen05.st", "st.async", "st.bulk"})
_ASYNC_COPIES = frozenset({
    "cp.async", "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.bulk.tensor",
    "cp.reduce.async.bulk.tensor", "st.async", "red.async", "st.bulk",
})


def bit_width(ty: str) -> int:
    """Bits of PTX type ``ty`` (32 for a type the ISA table does not know)."""
    return TYPE_BITS.get(ty, 32)


def split_opcode(token: str) -> tuple[str, tuple[str, ...]]:
    """Split an instruction token into its canonical opcode and the remaining modifier words."""
    parts = token.split(".")
    for n in range(min(_MAX_COMPOUND, len(parts)), 1, -1):
        head, colons, qualifier = parts[n - 1].partition("::")  # tcgen05.wait::ld: opcode tcgen05.wait, word ld
        if (*parts[:n - 1], head) in _COMPOUND:
            return ".".join((*parts[:n - 1], head)), (*((qualifier,) if colons else ()), *parts[n:])
    base, mods = parts[0], tuple(parts[1:])
    if "cc" in mods and base in ("add", "sub", "mad"):
        return base + ".cc", tuple(m for m in mods if m != "cc")
    return base, mods


def _group(opcode: str, space: str, dtype: str) -> str:
    fixed = FIXED_GROUP.get(opcode)
    if fixed is not None:
        return fixed
    if opcode in _MEMORY_OPS:
        return "mem." + {"tex": "texture", "surf": "texture"}.get(space, space or "generic")
    if opcode in _TEXTURE_OPS:
        return MEM_TEXTURE
    if opcode in _SPECIAL_OPS or (opcode == "div" and dtype and dtype not in _INT_TYPES):
        return SPECIAL
    if opcode in _TYPED_ARITH or opcode == "div":
        if dtype in _HALF_TYPES:
            return FP16
        if dtype in ("f32", "f32x2"):
            return FP32
        if dtype == "f64":
            return FP64
        return INT
    return MISC


@lru_cache(maxsize=8192)
def op_info(token: str) -> OpInfo:
    """Classify an instruction token such as ``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32``."""
    opcode, mods = split_opcode(token)
    rounding = cmp = order = scope = ""
    types: list[str] = []
    spaces: list[str] = []
    cache: list[str] = []
    other: list[str] = []
    vec = 1
    sync = aligned = False
    for m in mods:
        if m in TYPE_BITS:
            types.append(m)
        elif m in SPACES:
            spaces.append(SPACES[m])
        elif len(m) == 2 and m[0] == "v" and m[1] in "248":
            vec = int(m[1])
        elif m in ROUNDINGS and not rounding:
            rounding = m
        elif m in COMPARISONS and not cmp and opcode in ("set", "setp", "vset", "vset2", "vset4"):
            cmp = m
        elif m in ORDERS and not order:
            order = m
        elif m in SCOPES and not scope:
            scope = m
        elif m in _CACHE_OPS or m.startswith(_CACHE_PREFIXES):
            cache.append(m)
        elif m == "sync":
            sync = True
        elif m == "aligned":
            aligned = True
        else:
            other.append(m)
    space = spaces[0] if spaces else ""
    if not space and (opcode in _MEMORY_OPS or opcode in ("atom", "red")):
        space = "generic"
    group = _group(opcode, space, types[0] if types else "")
    return OpInfo(
        opcode=opcode, group=group, space=space, spaces=tuple(spaces), types=tuple(types), vec=vec,
        rounding=rounding, cmp=cmp, order=order, scope=scope, cache=tuple(cache), sync=sync, aligned=aligned,
        other=tuple(other),
    )


def is_known(token: str) -> bool:
    """Whether the token's opcode is in the table (unknown opcodes still parse; they classify as misc)."""
    return split_opcode(token)[0] in OPCODES


# ------------------------------------------------------------------------ versions, targets, requirements
#: the newest PTX ISA version this table knows (that of CUDA 13.0's ptxas)
NEWEST_VERSION = (9, 0)

#: every .target architecture ptxas knows, with the first PTX ISA version that accepts it (as CUDA 13.0's
#: ptxas reports: a .target older than the assembler's own architectures is still accepted)
TARGET_MIN_VERSION: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("sm_10", "sm_11", "sm_12", "sm_13", "sm_20", "sm_21"), (2, 3)),
    "sm_30": (3, 0), "sm_32": (4, 0), "sm_35": (3, 1), "sm_37": (4, 1), "sm_50": (4, 0), "sm_52": (4, 1),
    "sm_53": (4, 2), "sm_60": (5, 0), "sm_61": (5, 0), "sm_62": (5, 0), "sm_70": (5, 1), "sm_72": (6, 1),
    "sm_75": (6, 3), "sm_80": (7, 0), "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (7, 3), "sm_89": (7, 8),
    "sm_90": (7, 8), "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8),
    "sm_101": (8, 6), "sm_101a": (8, 6), "sm_103": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8),
    "sm_110": (9, 0), "sm_110a": (9, 0), "sm_110f": (9, 0), "sm_120": (8, 7), "sm_120a": (8, 7),
    "sm_120f": (8, 8), "sm_121": (8, 8), "sm_121a": (8, 8), "sm_121f": (8, 8),
}
#: .target options other than the architecture
TARGET_OPTIONS = frozenset({"texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"})

#: the targets of the architecture-specific features that not every later "a" or "f" target has (as CUDA 13.0's
#: ptxas takes them): wgmma only on sm_90a; tcgen05 on the sm_100 family; .f32 redux on sm_100 and sm_103;
#: stochastic rounding (cvt.rs) on sm_100a and sm_103a
SM90A_ONLY = frozenset({"sm_90a"})
SM100_FAMILY = frozenset({"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"})
SM100_SM103 = frozenset({"sm_100a", "sm_100f", "sm_103a", "sm_103f"})
SM100A_SM103A = frozenset({"sm_100a", "sm_103a"})

#: what a feature needs of the target: "sm_80" (sm_80 or any later target), "sm_90a" (an architecture- or
#: family-specific target, "a" or "f", from sm_90 on) or the set of targets that have it
Arch = str | frozenset[str]

#: opcode -> (oldest architecture, first PTX ISA version) it needs
REQUIRES: dict[str, tuple[Arch, tuple[int, int]]] = {
    "cvta": ("sm_20", (2, 0)),
    **dict.fromkeys(("shfl", "vote", "bar.warp.sync", "barrier", "fns"), ("sm_30", (6, 0))),
    "activemask": ("sm_30", (6, 2)), "dp4a": ("sm_61", (5, 0)), "dp2a": ("sm_61", (5, 0)),
    **dict.fromkeys(("match", "wmma.load", "wmma.store", "wmma.mma"), ("sm_70", (6, 0))),
    "nanosleep": ("sm_70", (6, 3)), "mma": ("sm_70", (6, 4)), "cvt.pack": ("sm_72", (6, 5)),
    "ldmatrix": ("sm_75", (6, 5)), "movmatrix": ("sm_75", (7, 8)),
    **dict.fromkeys(("bmsk", "szext"), ("sm_70", (7, 6))),
    **dict.fromkeys(("alloca", "stacksave", "stackrestore"), ("sm_52", (7, 3))),
    **dict.fromkeys(("redux", "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
                     "cp.async.mbarrier.arrive", "mbarrier.init", "mbarrier.inval", "mbarrier.arrive",
                     "mbarrier.arrive_drop", "mbarrier.test_wait", "mbarrier.pending_count"),
                    ("sm_80", (7, 0))),
    "mbarrier.try_wait": ("sm_90", (7, 8)),
    **dict.fromkeys(("createpolicy", "applypriority", "discard"), ("sm_80", (7, 4))),
    **dict.fromkeys(("stmatrix", "getctarank", "mapa", "barrier.cluster", "griddepcontrol", "elect",
                     "mbarrier.expect_tx", "mbarrier.complete_tx", "cp.async.bulk", "cp.reduce.async.bulk",
                     "cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch",
                     "cp.async.bulk.prefetch.tensor", "cp.async.bulk.commit_group",
                     "cp.async.bulk.wait_group"), ("sm_90", (7, 8))),
    **dict.fromkeys(("multimem.ld_reduce", "multimem.st", "multimem.red", "st.async", "red.async"),
                    ("sm_90", (8, 1))),
    **dict.fromkeys(("wgmma.mma_async", "wgmma.mma_async.sp", "wgmma.fence", "wgmma.commit_group",
                     "wgmma.wait_group"), (SM90A_ONLY, (8, 0))),
    "setmaxnreg": ("sm_90a", (8, 0)), "tensormap.replace": ("sm_90a", (8, 3)),
    "tensormap.cp_fenceproxy": ("sm_90", (8, 3)),
    **dict.fromkeys((op for op in FIXED_GROUP if op.startswith("tcgen05.")), (SM100_FAMILY, (8, 6))),
    **dict.fromkeys(("clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel", "st.bulk"),
                    ("sm_100", (8, 6))),
}


#: types that need more of the target than their instruction does (ptxas: "Feature '.bf16' requires sm_80")
TYPE_REQUIRES: dict[str, tuple[Arch, tuple[int, int]]] = {
    **dict.fromkeys(("bf16", "bf16x2", "tf32"), ("sm_80", (7, 0))), "f32x2": ("sm_100", (8, 6)),
}
#: (opcode, type) -> what the pair needs beyond the opcode and the type
OPCODE_TYPE_REQUIRES: dict[tuple[str, str], tuple[Arch, tuple[int, int]]] = {
    **{(op, t): ("sm_90", (7, 8)) for op in ("add", "sub", "mul", "ex2") for t in ("bf16", "bf16x2")},
    ("redux", "f32"): (SM100_SM103, (8, 6)),
}
#: modifiers that need a newer target than their instruction
MODIFIER_REQUIRES: dict[str, tuple[Arch, tuple[int, int]]] = {
    "relu": ("sm_80", (7, 0)), "NaN": ("sm_80", (7, 0)), "xorsign": ("sm_86", (7, 2)), "abs": ("sm_86", (7, 2)),
    "oob": ("sm_90", (8, 1)), "async": ("sm_90", (8, 0)), "tensormap::generic": ("sm_90", (8, 3)),
    "L2::256B": ("sm_80", (7, 4)),
}
#: the packed 8-, 6- and 4-bit float formats of cvt: pairs of fp8, pairs of fp6 and fp4, quadruples
FP8X2 = ("e4m3x2", "e5m2x2")
FP6_FP4X2 = ("e2m1x2", "e2m3x2", "e3m2x2")
QUADS = ("e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "e2m1x4")
#: cvt: (destination type, source type) -> what the conversion needs, where it needs more than its types
CVT_REQUIRES: dict[tuple[str, str], tuple[Arch, tuple[int, int]]] = {
    **{(d, s): ("sm_89", (8, 1)) for d, s in (*((d, "f32") for d in FP8X2), *((d, "f16x2") for d in FP8X2),
                                              *(("f16x2", s) for s in FP8X2))},
    **{(d, s): ("sm_100a", (8, 6)) for d, s in (*((d, "f32") for d in FP6_FP4X2), *(("f16x2", s) for s in FP6_FP4X2),
                                                ("ue8m0x2", "f32"), ("ue8m0x2", "bf16x2"), ("bf16x2", "ue8m0x2"))},
    **{(d, "f32"): (SM100A_SM103A, (8, 7)) for d in QUADS},
    ("f16x2", "f32"): ("sm_80", (7, 0)), ("bf16x2", "f32"): ("sm_80", (7, 0)), ("bf16", "f32"): ("sm_80", (7, 0)),
    ("f32", "bf16"): ("sm_80", (7, 1)),
}

#: one thing an instruction needs of the module: (what, architecture, first PTX ISA version)
Requirement = tuple[str, Arch, tuple[int, int]]


@lru_cache(maxsize=8192)
def requirements(token: str) -> tuple[Requirement, ...]:
    """What the instruction ``token`` needs of the target and the PTX version: its opcode's, its types' and its
    modifiers' needs, and a conversion's (``cvt.rn.satfinite.e4m3x2.f32`` needs sm_89 and PTX 8.1)."""
    info = op_info(token)
    op = info.opcode
    found: list[Requirement] = []
    if op in REQUIRES:
        found.append((repr(op), *REQUIRES[op]))
    for t in dict.fromkeys(info.types):
        if (op, t) in OPCODE_TYPE_REQUIRES:
            found.append((f"'{op}.{t}'", *OPCODE_TYPE_REQUIRES[op, t]))
        elif t in TYPE_REQUIRES and op != "cvt":
            found.append((f"'.{t}'", *TYPE_REQUIRES[t]))
    found += [(f"'.{w}'", *MODIFIER_REQUIRES[w]) for w in (*info.other, *info.cache) if w in MODIFIER_REQUIRES]
    if op == "cvt" and len(info.types) == 2:
        found += _conversion_requirements(info)
    return tuple(found)


def _conversion_requirements(info: OpInfo) -> list[Requirement]:
    dst, src = info.types
    name = f"'cvt.{info.rounding + '.' if info.rounding else ''}{dst}.{src}'"
    need = CVT_REQUIRES.get((dst, src))
    if need is None and "bf16" in (dst, src):  # every other bf16 conversion came with sm_90
        need = ("sm_90", (7, 8))
    if need is None and "tf32" in (dst, src):
        need = TYPE_REQUIRES["tf32"]
    found = [(name, *need)] if need else []
    if info.rounding == "rs":
        found.append((name, SM100A_SM103A, (8, 7)))
    if dst == "tf32" and info.rounding in ("rn", "rz"):
        found.append((name, "sm_100", (8, 6)) if "satfinite" in info.other else (name, "sm_90", (7, 8)))
    if "satfinite" in info.other:
        found.append(("'.satfinite' on 'cvt'", "sm_0", (8, 1)))
    return found


def unmet(what: str, arch: Arch, version: tuple[int, int], target: str, have: tuple[int, int]) -> str:
    """Why a module for ``target`` and PTX ISA ``have`` cannot use ``what``, which needs ``arch`` and ``version``
    ('' when it can)."""
    if not target_supports(target, arch):
        targets = ", ".join(sorted(arch)) if isinstance(arch, frozenset) else f"{arch} or later"
        return f"{what} requires .target {targets} (the module targets {target})"
    if have < version:
        return f"{what} requires PTX ISA {version[0]}.{version[1]} or later"
    return ""


def parse_version(text: str) -> tuple[int, int] | None:
    """``"8.0"`` -> ``(8, 0)``; None for anything that is not MAJOR.MINOR."""
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit() and len(major) <= 3 and len(minor) <= 3):
        return None
    return int(major), int(minor)


def sm_number(target: str) -> tuple[int, str]:
    """``"sm_90a"`` -> ``(90, "a")``; ``(0, "")`` for what is not an ``sm_``/``compute_`` name."""
    digits = target.split("_", 1)[-1]
    number = digits.rstrip("af")
    return (int(number), digits[len(number):]) if number.isdigit() else (0, "")


def target_supports(target: str, needed: Arch) -> bool:
    """Whether a module for ``target`` may use a feature of architecture ``needed``."""
    if isinstance(needed, frozenset):
        return target in needed
    have, have_suffix = sm_number(target)
    need, need_suffix = sm_number(needed)
    if need_suffix and not have_suffix:
        return False
    return have >= need
