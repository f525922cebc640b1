"""Instruction issue rates per architecture, from the CUDA C++ Programming Guide.

Issue rates are results per clock cycle per multiprocessor from the CUDA C++ Programming Guide, section
"Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions" (the compute capability
column of the architecture). Where the guide says "multiple instructions" (32-bit integer multiply and
multiply-add on 5.x, integer division, IEEE division and square root) the rate is the native rate divided
by the length of the instruction sequence the compiler emits, stated next to the entry. Loads and stores
issue through the 32 load/store units of an SM. Tensor-core instructions are counted as one issue slot
(their matrix throughput is not modelled). A board's SM count and architecture are its occupancy
:class:`~ptxstatic.hardware.occupancy.GpuSpec`; its memory and clocks are below, with sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ptxstatic.ptx import isa


@dataclass(frozen=True)
class IssueRates:
    """Results per clock per SM for each instruction class of one architecture."""

    arch: str
    fp32: float
    fp64: float
    fp16: float
    special: float  # rcp, rsqrt, lg2, ex2, sin, cos (the SFU)
    int_add: float  # add, sub, logic and/or/xor, mov
    int_mul: float  # mul.lo/mad.lo 32-bit: emulated
    int_div: float  # div/rem: a subroutine
    fp_div: float  # IEEE div/sqrt on f32: a short subroutine
    shift_compare: float  # shifts, compare, min/max, bit-field extract/insert, select
    bit_count: float  # popc, clz, bfind, brev
    conversion: float  # cvt between 32-bit types
    conversion64: float  # cvt to or from a 64-bit type
    shuffle: float  # shfl and other warp operations
    load_store: float  # ld/st/atom issue through the LD/ST units
    control: float  # branches, barriers, fences
    source: str


ISSUE_RATES: dict[str, IssueRates] = {r.arch: r for r in (
    IssueRates(
        "sm_52", fp32=128, fp64=4, fp16=128, special=32, int_add=128,
        int_mul=128 / 3,  # XMAD sequence of 3 instructions
        int_div=128 / 20,  # ~20-instruction subroutine
        fp_div=128 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=32, conversion=32, conversion64=4, shuffle=32, load_store=32, control=32,
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 5.x",
    ),
    IssueRates(
        "sm_80", fp32=64, fp64=32, fp16=256, special=16, int_add=64, int_mul=64,
        int_div=64 / 20,  # ~20-instruction subroutine
        fp_div=64 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=16, conversion=16, conversion64=16, shuffle=32, load_store=32, control=32,
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 8.0",
    ),
    IssueRates(
        "sm_90", fp32=128, fp64=64, fp16=256, special=16, int_add=64, int_mul=64,
        int_div=64 / 20,  # ~20-instruction subroutine
        fp_div=128 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=16, conversion=16, conversion64=16, shuffle=32, load_store=32, control=32,
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 9.0",
    ),
)}


_SHIFT_COMPARE = frozenset({"shl", "shr", "shf", "bfe", "bfi", "min", "max", "setp", "set", "selp", "slct", "sad"})
_BIT_COUNT = frozenset({"popc", "clz", "bfind", "brev", "fns"})
_WIDE = frozenset({"f64", "s64", "u64", "b64"})


class Opcode(Protocol):
    """What the issue rate of an instruction depends on (a SeqItem or an instruction's OpInfo)."""

    @property
    def opcode(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def dtype(self) -> str: ...


def issue_class(item: Opcode) -> str:
    """The :class:`IssueRates` field (the instruction class) whose rate an instruction issues at."""
    g, op = item.group, item.opcode
    if g in isa.MEMORY_GROUPS or g == isa.ATOMIC or g == isa.ASYNC:
        return "load_store"
    simple = {isa.FP64: "fp64", isa.FP16: "fp16", isa.FP32: "fp32"}
    if g in simple:
        return simple[g]
    if g == isa.SPECIAL:
        return "fp_div" if op in ("div", "sqrt") else "special"
    if g == isa.INT:
        if op in ("div", "rem"):
            return "int_div"
        if op in ("mul", "mad", "mul24", "mad24", "mul.hi", "mad.hi"):
            return "int_mul"
        return "shift_compare" if op in _SHIFT_COMPARE else "int_add"
    if op in _BIT_COUNT:
        return "bit_count"
    if op in _SHIFT_COMPARE or g == isa.COMPARE:
        return "shift_compare"
    if op == "cvt":
        return "conversion64" if item.dtype in _WIDE else "conversion"
    if g == isa.WARP:
        return "shuffle"
    if g in (isa.CONTROL, isa.SYNC):
        return "control"
    return "int_add"


def issue_rate(item: Opcode, rates: IssueRates) -> float:
    """Results per clock per SM of one instruction (so 1 / rate SM-cycles per thread)."""
    return float(getattr(rates, issue_class(item)))
