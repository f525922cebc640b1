"""Published throughput figures: instruction issue rates per architecture and memory bandwidth per GPU.

Issue rates are results per clock cycle per multiprocessor from the CUDA C++ Programming Guide, section
"Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions" (compute capability 5.x
column for sm_52). Where the guide says "multiple instructions" (32-bit integer multiply and multiply-add,
integer division, IEEE division and square root) the rate is the native rate divided by the length of the
instruction sequence the compiler emits, stated next to the entry. Loads and stores issue through the 32
load/store units of a Maxwell SM. GPU figures are the vendor's published specifications (sources in
:data:`GPU_FIGURES`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.analysis.sequence import SeqItem
from ptxstatic.errors import PtxstaticError
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
)}


@dataclass(frozen=True)
class GpuFigures:
    """Published figures of one GPU: what a roofline estimate needs."""

    name: str
    arch: str
    sms: int
    fp32_lanes_per_sm: int
    memory_bus_bits: int
    transfers_per_memory_clock: int  # GDDR5: data rate / the memory clock NVML reports
    memory_mhz: int  # the highest memory clock
    core_mhz: int  # the highest core clock of the DVFS table
    l2_bytes: int
    sources: tuple[str, ...]

    def bandwidth(self, memory_mhz: float) -> float:
        """Peak DRAM bandwidth (bytes/s) at a memory clock."""
        return self.memory_bus_bits / 8 * self.transfers_per_memory_clock * memory_mhz * 1e6

    @property
    def rates(self) -> IssueRates:
        return ISSUE_RATES[self.arch]


GPU_FIGURES: dict[str, GpuFigures] = {g.name: g for g in (
    GpuFigures(
        "gtxtitanx", "sm_52", sms=24, fp32_lanes_per_sm=128, memory_bus_bits=384, transfers_per_memory_clock=2,
        memory_mhz=3505, core_mhz=1164, l2_bytes=3 * 1024 * 1024,
        sources=(
            "NVIDIA GeForce GTX TITAN X specifications: 3072 CUDA cores, 384-bit GDDR5 at 7.0 Gbps, 336.5 GB/s",
            "NVIDIA GeForce GTX 980 whitepaper (GM204 SMM: 128 cores, 32 SFU, 32 LD/ST per SM; GM200 has 24 SMs)",
            "the measured clock table (nvidia-smi): memory 3505 MHz = 7010 MT/s, core up to 1164 MHz",
        ),
    ),
)}


def gpu_figures(name: str) -> GpuFigures:
    try:
        return GPU_FIGURES[name.lower()]
    except KeyError:
        raise PtxstaticError(f"no published figures for GPU {name!r} (known: {', '.join(GPU_FIGURES)})") from None


_SHIFT_COMPARE = frozenset({"shl", "shr", "shf", "bfe", "bfi", "min", "max", "setp", "set", "selp", "slct", "sad"})
_BIT_COUNT = frozenset({"popc", "clz", "bfind", "brev", "fns"})
_WIDE = frozenset({"f64", "s64", "u64", "b64"})


def issue_rate(item: SeqItem, rates: IssueRates) -> float:
    """Results per clock per SM of one instruction (so 1 / rate SM-cycles per thread)."""
    g, op = item.group, item.opcode
    if g in isa.MEMORY_GROUPS or g == isa.ATOMIC or g == isa.ASYNC:
        return rates.load_store
    if g == isa.FP64:
        return rates.fp64
    if g == isa.FP16:
        return rates.fp16
    if g == isa.SPECIAL:
        return rates.fp_div if op in ("div", "sqrt") else rates.special
    if g == isa.FP32:
        return rates.fp32
    if g == isa.INT:
        if op in ("div", "rem"):
            return rates.int_div
        if op in ("mul", "mad", "mul24", "mad24", "mul.hi", "mad.hi"):
            return rates.int_mul
        return rates.shift_compare if op in _SHIFT_COMPARE else rates.int_add
    if op in _BIT_COUNT:
        return rates.bit_count
    if op in _SHIFT_COMPARE or g == isa.COMPARE:
        return rates.shift_compare
    if op == "cvt":
        return rates.conversion64 if item.dtype in _WIDE else rates.conversion
    if g == isa.WARP:
        return rates.shuffle
    if g in (isa.CONTROL, isa.SYNC):
        return rates.control
    return rates.int_add
