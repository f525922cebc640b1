"""Instruction issue rates per architecture, from the CUDA C++ Programming Guide.

Issue rates are results per clock cycle per multiprocessor from the CUDA C++ Programming Guide, section
"Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions" (the compute capability
column of the architecture). Where the guide says "multiple instructions" (32-bit integer multiply and
multiply-add on 5.x, integer division, IEEE division and square root) the rate is the native rate divided
by the length of the instruction sequence the compiler emits, stated next to the entry. Loads and stores
issue through the 32 load/store units of an SM. Matrix multiply-accumulates (``mma``, ``wmma.mma``,
``wgmma.mma_async``) run on the tensor cores at their dense multiply-add rate per SM per clock from the
architecture's whitepaper (for f16/bf16 inputs; :data:`TENSOR_TYPE_FACTOR` for the others), each
instruction doing its shape's m·n·k multiply-adds; an architecture without tensor cores runs them at its
fp32 rate. A board's SM count and architecture are its occupancy
:class:`~ptxstatic.hardware.occupancy.GpuSpec`; its memory and clocks are below, with sources.
"""

from __future__ import annotations

import re
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
    tensor: float  # dense f16 multiply-adds per clock per SM on the tensor cores (the fp32 rate without them)
    source: str


ISSUE_RATES: dict[str, IssueRates] = {r.arch: r for r in (
    IssueRates(
        "sm_52", fp32=128, fp64=4, fp16=128, special=32, int_add=128,
        int_mul=128 / 3,  # XMAD sequence of 3 instructions
        int_div=128 / 20,  # ~20-instruction subroutine
        fp_div=128 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=32, conversion=32, conversion64=4, shuffle=32, load_store=32, control=32,
        tensor=128,  # no tensor cores
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 5.x",
    ),
    IssueRates(
        "sm_80", fp32=64, fp64=32, fp16=256, special=16, int_add=64, int_mul=64,
        int_div=64 / 20,  # ~20-instruction subroutine
        fp_div=64 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=16, conversion=16, conversion64=16, shuffle=32, load_store=32, control=32,
        tensor=1024,  # NVIDIA A100 Tensor Core GPU Architecture whitepaper: 1024 dense FP16 FMA per clock per SM
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 8.0; "
               "NVIDIA A100 whitepaper (tensor cores)",
    ),
    IssueRates(
        "sm_90", fp32=128, fp64=64, fp16=256, special=16, int_add=64, int_mul=64,
        int_div=64 / 20,  # ~20-instruction subroutine
        fp_div=128 / 8,  # rcp + Newton steps
        shift_compare=64, bit_count=16, conversion=16, conversion64=16, shuffle=32, load_store=32, control=32,
        tensor=2048,  # NVIDIA H100 Tensor Core GPU Architecture whitepaper: twice the A100's per SM per clock
        source="CUDA C++ Programming Guide, Arithmetic Instructions, throughput table, compute capability 9.0; "
               "NVIDIA H100 whitepaper (tensor cores)",
    ),
)}


#: tensor-core multiply-add rate by input type relative to f16 (both whitepapers: tf32 half, int8 and fp8
#: twice, int4 four times, f64 a sixteenth)
TENSOR_TYPE_FACTOR = {"f16": 1.0, "bf16": 1.0, "tf32": 0.5, "s8": 2.0, "u8": 2.0, "e4m3": 2.0, "e5m2": 2.0,
                      "s4": 4.0, "u4": 4.0, "f64": 1 / 16}
#: the matrix multiply-accumulate opcodes, and the threads that share one instruction's m·n·k multiply-adds
MATRIX_OPS = {"mma": 32, "mma.sp": 32, "wmma.mma": 32, "wgmma.mma_async": 128, "wgmma.mma_async.sp": 128}
#: the shape an instruction names none of (``mma.m16n8k16`` is the commonest)
DEFAULT_SHAPE = (16, 8, 16)
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
    if op in MATRIX_OPS:
        return "tensor"
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
    """Results per clock per SM of one instruction (so 1 / rate SM-cycles per thread): for a matrix
    multiply-accumulate, thread instructions of the default shape and f16 inputs (:func:`tensor_work` gives
    an instruction's own)."""
    if issue_class(item) == "tensor":
        m, n, k = DEFAULT_SHAPE
        return rates.tensor / (m * n * k / 32)
    return float(getattr(rates, issue_class(item)))


def tensor_work(opcode: str, types: tuple[str, ...], modifiers: tuple[str, ...]) -> float:
    """One thread's share of a matrix multiply-accumulate, in f16 multiply-adds at the tensor cores' rate:
    the shape's m·n·k over the threads that issue it, divided by the input type's rate factor (``wmma``
    names only the accumulator types when its inputs are f16)."""
    shape = next((_shape(m) for m in modifiers if _shape(m) is not None), DEFAULT_SHAPE)
    inputs = types[1] if len(types) >= 3 else "f16"
    m, n, k = shape
    return m * n * k / MATRIX_OPS.get(opcode, 32) / TENSOR_TYPE_FACTOR.get(inputs, 1.0)


def _shape(modifier: str) -> tuple[int, int, int] | None:
    """(m, n, k) of a shape modifier such as ``m16n8k16``."""
    match = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", modifier)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None
