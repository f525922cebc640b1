"""Published figures of each GPU board, with their sources: SM count and architecture (its occupancy
:class:`~ptxstatic.hardware.occupancy.GpuSpec`), memory bus and clocks, core clocks and caches: what a
absolute time estimate and the memory-traffic model need."""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.issue_rates import ISSUE_RATES, IssueRates
from ptxstatic.hardware.occupancy import GpuSpec, gpu_spec

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class GpuFigures:
    """Published figures of one GPU board: what a absolute time estimate and the memory-traffic model need.

    Caches: ``l1_bytes_per_sm`` is the on-chip data memory of one SM that the L1 cache and shared memory share
    (one array split by the shared-memory carve-out from Volta on; on Maxwell the dedicated shared memory plus
    the L1/texture cache), so ``l1_bytes_per_sm - ARCHS[arch].shared_per_sm`` is the L1 cache left at the
    largest carve-out. ``line_bytes`` is the L1 and L2 cache line and ``sector_bytes`` the part of a line a
    request is served and counted in (Nsight Compute's sectors), the same on every NVIDIA GPU here.
    ``l2_bytes_per_clock`` is the L2's peak read bandwidth for the whole chip in bytes per core clock, where a
    source states one (the A100 whitepaper does); None where none does: NVIDIA publishes no L2 bandwidth for
    the other boards, and the microbenchmark figures found were measured on other boards of the chip (PCIe
    H100/H800) or could not be read at their source."""

    name: str  # as the models and datasets name the GPU
    board: str  # the product, exactly
    spec: str  # its occupancy GpuSpec (SM count, architecture)
    memory_bus_bits: int
    transfers_per_memory_clock: int  # data rate / the memory clock NVML reports (2 for GDDR5/6/6X and HBM)
    memory_mhz: int  # the highest memory clock, at which the published bandwidth holds
    base_core_mhz: int | None  # the published base clock; None where the vendor publishes none
    boost_core_mhz: int  # the published boost clock
    max_core_mhz: int  # the highest core clock the board's clock table offers
    l2_bytes: int
    l1_bytes_per_sm: int  # L1 cache and shared memory of one SM together (see the class docstring)
    memory_bytes: int  # the board's memory as published, its GB read as GiB (as the DRAM is sized)
    sources: tuple[str, ...]
    default_clocks: tuple[int, int] | None = None  # (memory, core) MHz the board runs at unless told otherwise
    l2_bytes_per_clock: int | None = None  # L2 read bandwidth, bytes per core clock, chip-wide; None: no source
    line_bytes: int = 128
    sector_bytes: int = 32
    l1_caches_global_loads: bool = True
    l1_cache_bytes_per_sm: int | None = None
    power_limit_w: float | None = None  # the board's published power limit (TDP, TGP); None: not published

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

    def l2_bandwidth(self, core_mhz: float) -> float | None:
        """Peak L2 read bandwidth (bytes/s) at a core clock; None where no source gives it."""
        return None if self.l2_bytes_per_clock is None else self.l2_bytes_per_clock * core_mhz * 1e6

    @property
    def has_rates(self) -> bool:
        """Whether the architecture's issue rates are in :data:`ISSUE_RATES` (not yet for sm_89)."""
        return self.arch in ISSUE_RATES

    @property
    def rates(self) -> IssueRates:
        """The architecture's issue rates; an error where there are none (see :attr:`has_rates`)."""
        if not self.has_rates:
            raise PtxstaticError(f"no published issue rates for {self.arch} (GPU {self.name!r}): no absolute "
                                 f"time estimate (architectures with rates: {', '.join(ISSUE_RATES)})")
        return ISSUE_RATES[self.arch]

    def to_dict(self) -> dict:
        return {"name": self.name, "board": self.board, "sms": self.sms, "arch": self.arch,
                "peak_bandwidth_gb_s": round(self.bandwidth(self.memory_mhz) / 1e9, 1),
                "memory_mhz": self.memory_mhz, "boost_core_mhz": self.boost_core_mhz,
                "max_core_mhz": self.max_core_mhz, "memory_bytes": self.memory_bytes, "l2_bytes": self.l2_bytes,
                "l1_bytes_per_sm": self.l1_bytes_per_sm, "line_bytes": self.line_bytes,
                "sector_bytes": self.sector_bytes, "l2_bytes_per_clock": self.l2_bytes_per_clock,
                "l1_caches_global_loads": self.l1_caches_global_loads,
                "l1_cache_bytes_per_sm": self.l1_cache_bytes_per_sm, "power_limit_w": self.power_limit_w,
                "sources": list(self.sources)}


#: the CUDA C++ Programming Guide's L1/shared-memory sizes, "Compute Capabilities", per architecture
_GUIDE_L1 = {
    "sm_52": "CUDA C++ Programming Guide, Compute Capabilities, 5.x: a unified L1/texture cache of 24 KB and "
             "96 KB of shared memory (compute capability 5.2) per SM",
    "sm_80": "CUDA C++ Programming Guide, Compute Capabilities, 8.x Shared Memory: the unified data cache has a "
             "size of 192 KB for compute capability 8.0",
    "sm_89": "CUDA C++ Programming Guide, Compute Capabilities, 8.x Shared Memory: the unified data cache has a "
             "size of 128 KB for compute capabilities 8.6 and 8.9",
    "sm_90": "CUDA C++ Programming Guide, Compute Capabilities, 9.0 Shared Memory: the unified data cache has a "
             "size of 256 KB",
}

GPU_FIGURES: dict[str, GpuFigures] = {g.name: g for g in (
    GpuFigures(
        "gtxtitanx", "NVIDIA GeForce GTX TITAN X (Maxwell GM200, 12 GB GDDR5)", "titanx", memory_bus_bits=384,
        transfers_per_memory_clock=2, memory_mhz=3505, base_core_mhz=1000, boost_core_mhz=1075, max_core_mhz=1164,
        l2_bytes=3 * MIB, l1_bytes_per_sm=(96 + 24) * KIB, memory_bytes=12 * GIB,
        sources=(
            "NVIDIA GeForce GTX TITAN X specifications: 3072 CUDA cores, base 1000 MHz, boost 1075 MHz, 384-bit "
            "GDDR5 at 7.0 Gbps, 336.5 GB/s, 12 GB, graphics card power 250 W",
            "NVIDIA GeForce GTX 980 whitepaper (GM204 SMM: 128 cores, 32 SFU, 32 LD/ST per SM; GM200 has 24 SMs, "
            "3 MB L2)",
            _GUIDE_L1["sm_52"],
            "the measured clock table (nvidia-smi): memory 3505 MHz = 7010 MT/s, core up to 1164 MHz",
            "the measured clock table's default application clocks: memory 3505 MHz, core 975 MHz",
            "CUDA C++ Programming Guide, Compute Capabilities, 5.x Global Memory: global memory accesses are always "
            "cached in L2; on compute capability 5.2 data that is not read-only for the kernel's lifetime is by "
            "default not cached in the unified L1/texture cache (opt in with -Xptxas -dlcm=ca)",
        ),
        default_clocks=(3505, 975), l1_caches_global_loads=False, l1_cache_bytes_per_sm=24 * KIB, power_limit_w=250,
    ),
    GpuFigures(
        "a100", "NVIDIA A100 SXM4 40 GB (HBM2)", "a100", memory_bus_bits=5120, transfers_per_memory_clock=2,
        memory_mhz=1215, base_core_mhz=1095, boost_core_mhz=1410, max_core_mhz=1410, l2_bytes=40 * MIB,
        l1_bytes_per_sm=192 * KIB, memory_bytes=40 * GIB, l2_bytes_per_clock=5120, power_limit_w=400,
        sources=(
            "NVIDIA A100 Tensor Core GPU datasheet: A100 40GB SXM, 1,555 GB/s HBM2, max thermal design power 400 W",
            "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs, 5120-bit HBM2 (5 stacks), 40 MB L2 "
            "(40960 KB), boost 1410 MHz, 192 KB combined L1 data cache and shared memory per SM",
            "NVIDIA A100 Tensor Core GPU Architecture whitepaper, L2 cache (p. 35): 'The A100 L2 read bandwidth is "
            "5120 Bytes/clk, compared to V100 L2 cache read bandwidth of 2048 Bytes/clk'",
            _GUIDE_L1["sm_80"],
            "nvidia-smi on A100-SXM4-40GB: memory clock 1215 MHz (2430 MT/s), SM clock up to 1410 MHz",
        ),
    ),
    GpuFigures(
        "h100", "NVIDIA H100 SXM5 80 GB (HBM3)", "h100", memory_bus_bits=5120, transfers_per_memory_clock=2,
        memory_mhz=2619, base_core_mhz=1590, boost_core_mhz=1980, max_core_mhz=1980, l2_bytes=50 * MIB,
        l1_bytes_per_sm=256 * KIB, memory_bytes=80 * GIB, power_limit_w=700,
        sources=(
            "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, 80 GB HBM3, 3.35 TB/s, max thermal design power up "
            "to 700 W",
            "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on H100 SXM5, 5120-bit HBM3 (five "
            "stacks, ten 512-bit controllers), 50 MB L2, 256 KB combined L1 data cache and shared memory per SM",
            _GUIDE_L1["sm_90"],
            "deviceQuery on NVIDIA H100 80GB HBM3 (public logs): 132 multiprocessors, memory clock 2619 MHz, "
            "5120-bit bus, L2 cache size 52428800 bytes (50 MiB)",
            "nvidia-smi on H100 80GB HBM3 (SXM5): memory clock 2619 MHz (5238 MT/s), SM clock 1590 MHz base, up "
            "to 1980 MHz",
        ),
    ),
    GpuFigures(
        # the bus as the driver reports it: with 3201 MHz x 2 it gives 4814 GB/s, the published 4.8 TB/s (the
        # six stacks' 6144 bits would give 4917 GB/s)
        "h200", "NVIDIA H200 SXM 141 GB (HBM3e)", "h200", memory_bus_bits=6016, transfers_per_memory_clock=2,
        memory_mhz=3201, base_core_mhz=None, boost_core_mhz=1980, max_core_mhz=1980, l2_bytes=60 * MIB,
        l1_bytes_per_sm=256 * KIB, memory_bytes=141 * GIB,
        sources=(
            "NVIDIA H200 Tensor Core GPU datasheet: H200 SXM, 141 GB HBM3e, 4.8 TB/s, max thermal design power up "
            "to 700 W (no base clock in NVIDIA's H200 material)",
            "AnandTech, NVIDIA at SC23: H200, the H100's GH100 with HBM3e on a 6144-bit bus (six stacks), 4.8 "
            "TB/s",
            _GUIDE_L1["sm_90"],
            "the project's H200 (driver 580.159.04, 2026-11-28), cuDeviceGetAttribute: 132 multiprocessors, "
            "compute capability 9.0, global memory bus width 6016 bits, memory clock 3201 MHz, clock 1980 MHz, "
            "L2 cache size 62914560 bytes (60 MiB: the whole GH100 L2, which Chips and Cheese gives as 60 MB, where "
            "the H100 SXM enables 50 MB), "
            "shared memory per multiprocessor 233472 bytes (228 KiB)",
            "nvidia-smi on the project's H200: memory 3201 MHz (6402 MT/s), SM clock up to 1980 MHz, default "
            "application clocks memory 3201 MHz and SM 1980 MHz, the only supported pair; the SM clock read "
            "1977-1980 MHz in every measured launch (datasets/h200-counters)",
            "NVML on the project's H200: power limit 700 W",
        ),
        default_clocks=(3201, 1980), power_limit_w=700,
    ),
    # max_core_mhz of the two Ada boards is deviceQuery's maximum clock, the boost clock: their nvidia-smi clock
    # tables were not seen and may offer more
    GpuFigures(
        "l40s", "NVIDIA L40S 48 GB (Ada AD102, GDDR6)", "l40s", memory_bus_bits=384, transfers_per_memory_clock=2,
        memory_mhz=9001, base_core_mhz=1110, boost_core_mhz=2520, max_core_mhz=2520, l2_bytes=96 * MIB,
        l1_bytes_per_sm=128 * KIB, memory_bytes=48 * GIB, power_limit_w=350,
        sources=(
            "NVIDIA L40S datasheet: 48 GB GDDR6 with ECC, 864 GB/s, 18,176 CUDA cores (= 142 SMs x 128), 142 "
            "third-generation RT cores, 568 fourth-generation Tensor cores, max power consumption 350 W",
            "TechPowerUp GPU database, NVIDIA L40S: AD102, 142 SMs, 384-bit GDDR6 at 18 Gbps effective, "
            "864.0 GB/s, base 1110 MHz, boost 2520 MHz (its '48 MB' L2 disagrees with the device's 96 MiB)",
            _GUIDE_L1["sm_89"],
            "deviceQuery on an NVIDIA L40S (the cuda-device-query crate's README): compute capability 8.9, 142 "
            "multiprocessors, max clock 2520 MHz, memory clock 9001 MHz, 384-bit bus, L2 cache size 100663296 "
            "bytes (96 MiB)",
            "Alpay and Basaran, Non-Uniform L2 Cache Latency Across the SMs of an NVIDIA L40 (arXiv 2606.22588): "
            "the L40 (the same 142-SM AD102 configuration) exposes a 96 MiB L2",
        ),
    ),
    GpuFigures(
        "rtx4090", "NVIDIA GeForce RTX 4090 24 GB (Ada AD102, GDDR6X)", "rtx4090", memory_bus_bits=384,
        transfers_per_memory_clock=2, memory_mhz=10501, base_core_mhz=2235, boost_core_mhz=2520,
        max_core_mhz=2520, l2_bytes=72 * MIB, l1_bytes_per_sm=128 * KIB, memory_bytes=24 * GIB, power_limit_w=450,
        sources=(
            "NVIDIA Ada GPU Architecture whitepaper, GeForce RTX 4090: 128 SMs (16384 CUDA cores), base 2235 MHz, "
            "boost 2520 MHz, 384-bit GDDR6X at 21 Gbps, 1008 GB/s, 24 GB, 72 MB L2 (the full AD102 has 96 MB), "
            "128 KB L1/shared memory per SM, total graphics power 450 W",
            _GUIDE_L1["sm_89"],
            "deviceQuery on NVIDIA GeForce RTX 4090 (public logs): compute capability 8.9, 128 multiprocessors, "
            "max clock 2520 MHz, memory clock 10501 MHz (21 Gbps = 2 transfers per reported clock), 384-bit bus, "
            "L2 cache size 75497472 bytes (72 MiB)",
        ),
    ),
)}
#: other names a board is known by (the occupancy table's names)
ALIASES = {"titanx": "gtxtitanx", "h100_sxm": "h100", "h200_sxm": "h200", "rtx_4090": "rtx4090",
           "4090": "rtx4090"}


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
