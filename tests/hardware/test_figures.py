"""The published figures of every board (``ptxstatic.hardware.figures``) against the numbers their sources
state: peak DRAM bandwidth from bus width and memory clock, per-pin data rate, SM count and architecture,
cache and memory sizes; the names each board is found by; and what a board without issue rates allows.
Every number below is the source's, written next to the source's name, not read from the table."""

from __future__ import annotations

import json

import pytest

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.figures import ALIASES, GPU_FIGURES, gpu_figures, known_figures
from ptxstatic.hardware.occupancy import ARCHS, GPUS, occupancy
from ptxstatic.predict import load_models

KIB, MIB, GIB = 1024, 1024**2, 1024**3

#: published peak DRAM bandwidth in GB/s, and how the source writes it
BANDWIDTH = {
    "gtxtitanx": (336.5, "336.5 GB/s"),  # NVIDIA GeForce GTX TITAN X specifications
    "a100": (1555, "1,555 GB/s"),  # NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM
    "h100": (3350, "3.35 TB/s"),  # NVIDIA H100 Tensor Core GPU datasheet, H100 SXM
    "h200": (4800, "4.8 TB/s"),  # NVIDIA H200 Tensor Core GPU datasheet, H200 SXM
    "l40s": (864, "864 GB/s"),  # NVIDIA L40S datasheet
    "rtx4090": (1008, "1008 GB/s"),  # NVIDIA Ada GPU Architecture whitepaper, GeForce RTX 4090
}
#: data rate per pin in Gb/s at the highest memory clock
DATA_RATE = {
    "gtxtitanx": 7.0,  # GTX TITAN X specifications: GDDR5 at 7.0 Gbps
    "a100": 2.43,  # nvidia-smi on A100-SXM4-40GB: 1215 MHz, 2430 MT/s
    "h100": 5.24,  # AnandTech's H100 SXM: 5.24 Gbps HBM3 (nvidia-smi 2619 MHz)
    "h200": 6.4,  # nvidia-smi on the project's H200: 3201 MHz, HBM3e at 6.4 Gb/s per pin
    "l40s": 18.0,  # TechPowerUp, L40S: GDDR6 at 18 Gbps effective (deviceQuery 9001 MHz)
    "rtx4090": 21.0,  # Ada whitepaper, RTX 4090: GDDR6X at 21 Gbps (deviceQuery 10501 MHz)
}
#: SM count and compute capability
SMS = {
    "gtxtitanx": (24, "sm_52"),  # GTX TITAN X specifications: 3072 CUDA cores, 128 per Maxwell SM
    "a100": (108, "sm_80"),  # A100 whitepaper: 108 SMs
    "h100": (132, "sm_90"),  # H100 whitepaper: 132 SMs on H100 SXM5
    "h200": (132, "sm_90"),  # cuDeviceGetAttribute on the project's H200: 132 multiprocessors, 9.0
    "l40s": (142, "sm_89"),  # L40S datasheet: 18,176 CUDA cores, 128 per Ada SM; deviceQuery: 142, 8.9
    "rtx4090": (128, "sm_89"),  # Ada whitepaper: 128 SMs, 16,384 CUDA cores; deviceQuery: 8.9
}
#: L2 size in bytes
L2 = {
    "gtxtitanx": 3 * MIB,  # GTX 980 whitepaper: GM200 has 3 MB of L2
    "a100": 40960 * KIB,  # A100 whitepaper: L2 cache size 40960 KB
    "h100": 52428800,  # H100 whitepaper: 50 MB; deviceQuery on H100 80GB HBM3: 52428800 bytes
    "h200": 62914560,  # cuDeviceGetAttribute(L2_CACHE_SIZE) on the project's H200: 62914560 bytes
    "l40s": 100663296,  # deviceQuery on an NVIDIA L40S: 100663296 bytes
    "rtx4090": 75497472,  # deviceQuery on an RTX 4090: 75497472 bytes (the whitepaper's 72 MB)
}
#: L1 cache and shared memory of one SM: CUDA C++ Programming Guide, Compute Capabilities
L1_PER_SM = {
    "sm_52": (24 + 96) * KIB,  # 5.x: a unified L1/texture cache of 24 KB; 96 KB of shared memory on 5.2
    "sm_80": 192 * KIB,  # 8.x: the unified data cache has a size of 192 KB for 8.0
    "sm_89": 128 * KIB,  # 8.x: ... and 128 KB for 8.6 and 8.9
    "sm_90": 256 * KIB,  # 9.0: the unified data cache has a size of 256 KB
}
#: board memory, GB as published
MEMORY_GB = {"gtxtitanx": 12, "a100": 40, "h100": 80, "h200": 141, "l40s": 48, "rtx4090": 24}
#: the board's power limit in W, as published
POWER_LIMIT_W = {
    "gtxtitanx": 250,  # GTX TITAN X specifications: graphics card power 250 W
    "a100": 400,  # A100 datasheet, A100 40GB SXM: max thermal design power 400 W
    "h100": 700,  # H100 datasheet, H100 SXM: max thermal design power up to 700 W
    "h200": 700,  # H200 datasheet, H200 SXM: up to 700 W; NVML on the project's H200: power limit 700 W
    "l40s": 350,  # L40S datasheet: max power consumption 350 W
    "rtx4090": 450,  # Ada whitepaper, RTX 4090: total graphics power 450 W
}

BOARDS = sorted(GPU_FIGURES)


def test_every_board_is_checked_against_its_sources() -> None:
    for table in (BANDWIDTH, DATA_RATE, SMS, L2, MEMORY_GB, POWER_LIMIT_W):
        assert set(table) == set(GPU_FIGURES)


@pytest.mark.parametrize("name", BOARDS)
def test_bandwidth_at_the_highest_memory_clock_is_the_published_one(name: str) -> None:
    g = GPU_FIGURES[name]
    gb_s, written = BANDWIDTH[name]
    assert g.bandwidth(g.memory_mhz) / 1e9 == pytest.approx(gb_s, rel=0.03)
    assert any(written in s for s in g.sources), f"no source of {name} states {written}"
    # the transfers per reported clock are the data rate per pin over the clock NVML reports
    assert g.memory_mhz * g.transfers_per_memory_clock / 1000 == pytest.approx(DATA_RATE[name], rel=0.01)


@pytest.mark.parametrize("name", BOARDS)
def test_sm_count_and_architecture_come_from_the_occupancy_spec(name: str) -> None:
    g = GPU_FIGURES[name]
    assert g.gpu is GPUS[g.spec]
    assert (g.sms, g.arch) == SMS[name]
    assert g.boost_core_mhz <= g.max_core_mhz and (g.base_core_mhz is None or g.base_core_mhz < g.boost_core_mhz)


@pytest.mark.parametrize("name", BOARDS)
def test_cache_figures_are_the_published_ones_and_consistent(name: str) -> None:
    g = GPU_FIGURES[name]
    assert g.l2_bytes == L2[name]
    assert g.l1_bytes_per_sm == L1_PER_SM[g.arch]
    assert g.l1_bytes_per_sm >= ARCHS[g.arch].shared_per_sm  # shared memory is carved out of it
    assert (g.line_bytes, g.sector_bytes) == (128, 32)  # CUDA Best Practices Guide: 128-byte lines, 32-byte sectors
    assert g.line_bytes % g.sector_bytes == 0 and g.l2_bytes % g.line_bytes == 0
    assert g.memory_bytes == MEMORY_GB[name] * GIB > g.l2_bytes
    if g.l2_bytes_per_clock is not None:
        assert g.l2_bytes_per_clock > 0 and g.l2_bandwidth(g.max_core_mhz) > g.bandwidth(g.memory_mhz)
    else:
        assert g.l2_bandwidth(g.max_core_mhz) is None


@pytest.mark.parametrize("name", BOARDS)
def test_power_limits_are_the_published_ones(name: str) -> None:
    assert GPU_FIGURES[name].power_limit_w == POWER_LIMIT_W[name]


def test_the_a100_l2_bandwidth_is_the_whitepapers() -> None:
    """A100 whitepaper: 'The A100 L2 read bandwidth is 5120 Bytes/clk', 7.2 TB/s at the 1410 MHz boost."""
    a100 = gpu_figures("a100")
    assert a100.l2_bytes_per_clock == 5120
    assert a100.l2_bandwidth(1410) == pytest.approx(7.2192e12)


def test_the_h200_runs_at_the_clocks_measured_on_one() -> None:
    """nvidia-smi on the project's H200: memory 3201 MHz and SM 1980 MHz by default, the only pair."""
    h200 = gpu_figures("h200")
    assert h200.default_clocks == (3201, 1980) == (h200.memory_mhz, h200.max_core_mhz)
    for g in GPU_FIGURES.values():
        if g.default_clocks is not None:
            assert g.default_clocks[0] <= g.memory_mhz and g.default_clocks[1] <= g.max_core_mhz


@pytest.mark.parametrize("alias,name", [*ALIASES.items(), ("H200_SXM", "h200"), ("RTX_4090", "rtx4090"),
                                        ("L40S", "l40s"), ("4090", "rtx4090"), ("h200_sxm", "h200")])
def test_known_figures_finds_each_alias(alias: str, name: str) -> None:
    assert known_figures(alias) is GPU_FIGURES[name] is gpu_figures(alias)


def test_every_board_is_found_by_its_name_and_an_unknown_one_is_not() -> None:
    for name, g in GPU_FIGURES.items():
        assert known_figures(name) is g and known_figures(name.upper()) is g
    assert known_figures("v100") is None
    with pytest.raises(PtxstaticError, match="no published figures"):
        gpu_figures("v100")


@pytest.mark.parametrize("name", BOARDS)
def test_to_dict_carries_the_cache_figures(name: str) -> None:
    g = GPU_FIGURES[name]
    d = json.loads(json.dumps(g.to_dict()))
    assert d["peak_bandwidth_gb_s"] == pytest.approx(BANDWIDTH[name][0], rel=0.03)
    assert (d["l2_bytes"], d["l1_bytes_per_sm"], d["line_bytes"], d["sector_bytes"], d["memory_bytes"]) == (
        L2[name], L1_PER_SM[g.arch], 128, 32, MEMORY_GB[name] * GIB)
    assert d["l2_bytes_per_clock"] == g.l2_bytes_per_clock and d["sources"] == list(g.sources)
    assert d["power_limit_w"] == POWER_LIMIT_W[name]


def test_new_occupancy_specs() -> None:
    """Full waves on the new boards: 2 blocks of 1024 threads per sm_90 SM, 3 of 512 per sm_89 SM."""
    assert occupancy(GPUS["h200"], 1024, 32, 0, 2 * 132).waves == 1.0
    assert occupancy(GPUS["l40s"], 512, 32, 0, 3 * 142).waves == 1.0


def test_a_board_without_issue_rates_has_no_absolute_time() -> None:
    """sm_89 has no issue rates in ISSUE_RATES: its boards' cache figures are there, an absolute time estimate is
    not, and predict says which GPUs it can estimate instead of an empty prediction."""
    for name in ("l40s", "rtx4090"):
        g = gpu_figures(name)
        assert not g.has_rates
        with pytest.raises(PtxstaticError, match="no published issue rates for sm_89"):
            _ = g.rates
        with pytest.raises(PtxstaticError, match=r"absolute estimate: .*h200") as e:
            load_models(name)
        assert name not in str(e.value).split("absolute estimate:")[1]
    assert all(GPU_FIGURES[n].has_rates for n in ("gtxtitanx", "a100", "h100", "h200"))
    models = load_models("h200")
    assert models.dvfs is None and models.figures is GPU_FIGURES["h200"]
