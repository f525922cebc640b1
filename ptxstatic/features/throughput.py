"""Published figures per GPU: instruction issue rates per architecture and memory bandwidth, SM count and
clocks per board, each with its source.

Issue rates are results per clock cycle per multiprocessor from the CUDA C++ Programming Guide, section
"Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions" (the compute capability
column of the architecture). Where the guide says "multiple instructions" (32-bit integer multiply and
multiply-add on 5.x, integer division, IEEE division and square root) the rate is the native rate divided
by the length of the instruction sequence the compiler emits, stated next to the entry. Loads and stores
issue through the 32 load/store units of an SM. Tensor-core instructions are counted as one issue slot
(their matrix throughput is not modelled). A board's SM count and architecture are its occupancy
:class:`~ptxstatic.features.occupancy.GpuSpec`; its memory and clocks are below, with sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ptxstatic.analysis.sequence import SeqItem
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.occupancy import GpuSpec, gpu_spec
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


@dataclass(frozen=True)
class GpuFigures:
    """Published figures of one GPU board: what a roofline estimate needs."""

    name: str  # as the models and datasets name the GPU
    board: str  # the product, exactly
    spec: str  # its occupancy GpuSpec (SM count, architecture)
    memory_bus_bits: int
    transfers_per_memory_clock: int  # data rate / the memory clock NVML reports (2 for GDDR5 and HBM)
    memory_mhz: int  # the highest memory clock, at which the published bandwidth holds
    base_core_mhz: int
    boost_core_mhz: int  # the published boost clock
    max_core_mhz: int  # the highest core clock the board's clock table offers
    l2_bytes: int
    sources: tuple[str, ...]
    default_clocks: tuple[int, int] | None = None  # (memory, core) MHz the board runs at unless told otherwise

    @property
    def gpu(self) -> GpuSpec:
        return gpu_spec(self.spec)

    @property
    def sms(self) -> int:
        return self.gpu.sms

    @property
    def arch(self) -> str:
        return self.gpu.arch

    def bandwidth(self, memory_mhz: float) -> float:
        """Peak DRAM bandwidth (bytes/s) at a memory clock."""
        return self.memory_bus_bits / 8 * self.transfers_per_memory_clock * memory_mhz * 1e6

    @property
    def rates(self) -> IssueRates:
        return ISSUE_RATES[self.arch]

    def to_dict(self) -> dict:
        return {"name": self.name, "board": self.board, "sms": self.sms, "arch": self.arch,
                "peak_bandwidth_gb_s": round(self.bandwidth(self.memory_mhz) / 1e9, 1),
                "memory_mhz": self.memory_mhz, "boost_core_mhz": self.boost_core_mhz,
                "max_core_mhz": self.max_core_mhz, "sources": list(self.sources)}


GPU_FIGURES: dict[str, GpuFigures] = {g.name: g for g in (
    GpuFigures(
        "gtxtitanx", "NVIDIA GeForce GTX TITAN X (Maxwell GM200, 12 GB GDDR5)", "titanx", memory_bus_bits=384,
        transfers_per_memory_clock=2, memory_mhz=3505, base_core_mhz=1000, boost_core_mhz=1075, max_core_mhz=1164,
        l2_bytes=3 * 1024 * 1024,
        sources=(
            "NVIDIA GeForce GTX TITAN X specifications: 3072 CUDA cores, base 1000 MHz, boost 1075 MHz, 384-bit "
            "GDDR5 at 7.0 Gbps, 336.5 GB/s",
            "NVIDIA GeForce GTX 980 whitepaper (GM204 SMM: 128 cores, 32 SFU, 32 LD/ST per SM; GM200 has 24 SMs, "
            "3 MB L2)",
            "the measured clock table (nvidia-smi): memory 3505 MHz = 7010 MT/s, core up to 1164 MHz",
            "the measured clock table's default application clocks: memory 3505 MHz, core 975 MHz",
        ),
        default_clocks=(3505, 975),
    ),
    GpuFigures(
        "a100", "NVIDIA A100 SXM4 40 GB (HBM2)", "a100", memory_bus_bits=5120, transfers_per_memory_clock=2,
        memory_mhz=1215, base_core_mhz=1095, boost_core_mhz=1410, max_core_mhz=1410, l2_bytes=40 * 1024 * 1024,
        sources=(
            "NVIDIA A100 Tensor Core GPU datasheet: A100 40GB SXM, 1,555 GB/s HBM2",
            "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs, 5120-bit HBM2 (5 stacks), 40 MB L2, "
            "boost 1410 MHz",
            "nvidia-smi on A100-SXM4-40GB: memory clock 1215 MHz (2430 MT/s), SM clock up to 1410 MHz",
        ),
    ),
    GpuFigures(
        "h100", "NVIDIA H100 SXM5 80 GB (HBM3)", "h100", memory_bus_bits=5120, transfers_per_memory_clock=2,
        memory_mhz=2619, base_core_mhz=1590, boost_core_mhz=1980, max_core_mhz=1980, l2_bytes=50 * 1024 * 1024,
        sources=(
            "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, 80 GB HBM3, 3.35 TB/s",
            "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on H100 SXM5, 5120-bit HBM3 (five "
            "stacks, ten 512-bit controllers), 50 MB L2",
            "nvidia-smi on H100 80GB HBM3 (SXM5): memory clock 2619 MHz (5238 MT/s), SM clock 1590 MHz base, up "
            "to 1980 MHz",
        ),
    ),
)}
#: other names a board is known by (the occupancy table's names)
ALIASES = {"titanx": "gtxtitanx", "h100_sxm": "h100"}


def known_figures(name: str) -> GpuFigures | None:
    """The published figures of a GPU by name or alias, None if there are none."""
    key = name.lower()
    return GPU_FIGURES.get(ALIASES.get(key, key))


def gpu_figures(name: str) -> GpuFigures:
    """The published figures of a GPU by name or alias."""
    figures = known_figures(name)
    if figures is None:
        raise PtxstaticError(f"no published figures for GPU {name!r} (known: {', '.join(GPU_FIGURES)})")
    return figures


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


def issue_rate(item: SeqItem | Opcode, rates: IssueRates) -> float:
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
