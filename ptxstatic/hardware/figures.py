"""Published figures of each GPU board, with their sources: SM count and architecture (its occupancy
:class:`~ptxstatic.hardware.occupancy.GpuSpec`), memory bus and clocks, core clocks and caches: what a
roofline estimate and the memory-traffic model need."""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.issue_rates import ISSUE_RATES, IssueRates
from ptxstatic.hardware.occupancy import GpuSpec, gpu_spec


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
