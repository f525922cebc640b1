"""PS301 local-memory, PS302 register-spills and PS303 occupancy-limited on kernels written to trigger them
and near misses (tests/data/rules/cuda/ps3_resources.cu, PTX for sm_90 by tests/data/rules/regenerate.py).

The expected figures are derived by hand from ``ptxas -v -arch=sm_90`` (its lines are quoted) and the
occupancy rules of ptxstatic.hardware.occupancy; PS302 and PS303 need ptxas, PS303 on titanx (sm_52) does
not: CUDA 13's ptxas cannot assemble for Maxwell, so the registers are estimated from the PTX.
"""

from __future__ import annotations

import pytest
from support.paths import FIXTURES, needs_ptxas
from support.rules import VARIANTS, found, kernels, lint, marked, ptx

from ptxstatic.config import Config
from ptxstatic.features.resources import estimate_resources, kernel_resources
from ptxstatic.hardware.occupancy import residency
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

STEM = "ps3_resources"
RESOURCE_RULES = [get_rule(c) for c in ("PS301", "PS302", "PS303")]


@needs_ptxas
@pytest.mark.parametrize("code", ["PS301", "PS302", "PS303"])
def test_reports_exactly_the_marked_lines(code):
    findings = lint(STEM, code)
    assert found(findings) == marked(STEM, code)
    assert not {f.kernel for f in findings} & kernels(STEM, "ok_")


@needs_ptxas
def test_same_kernels_without_line_information_and_none_in_debug_builds():
    for code in ("PS301", "PS302", "PS303"):
        expected = {k for k, _ in marked(STEM, code)}
        assert {f.kernel for f in lint(STEM, code, "plain")} == expected
        # -G keeps every variable in local memory and disables optimisation: resource rules say nothing
        assert lint(STEM, code, "G") == []
    assert set(VARIANTS) == {"lineinfo", "plain", "G"}


@needs_ptxas
def test_local_memory_figures():
    (f,) = lint(STEM, "PS301")
    # float hist[64]: a 256-byte __local_depot; ptxas: "256 bytes stack frame, 0 bytes spill stores"
    assert f.properties["depot_bytes"] == 256 and f.properties["stack_frame"] == 256
    assert "256 bytes per thread in local memory" in f.message and "256-byte stack frame" in f.message
    # the += in the loop is where it costs; the final read is a note
    assert [n.location.line for n in f.notes] == [f.source.line + 1]


@needs_ptxas
def test_spill_bytes_from_ptxas():
    (f,) = lint(STEM, "PS302")
    # ptxas: "160 bytes stack frame, 312 bytes spill stores, 312 bytes spill loads", "Used 32 registers"
    # (__launch_bounds__(256, 8): 65536 registers / (8 blocks x 256 threads) = 32)
    p = f.properties
    assert (p["spill_stores"], p["spill_loads"], p["registers"]) == (312, 312, 32)
    assert "312 bytes of stores and 312 bytes of loads" in f.message and "8 blocks of 256x1x1" in f.message
    assert lint(STEM, "PS302", config=_config(tmp_rules={"PS302": {"min-bytes": 625}})) == []
    assert len(lint(STEM, "PS302", config=_config(tmp_rules={"PS302": {"min-bytes": 624}}))) == 1


def _config(gpu: str | None = None, tmp_rules: dict | None = None) -> Config:
    return Config(gpu=gpu, rules=tmp_rules or {})


@needs_ptxas
def test_occupancy_figures_on_sm_90():
    by_kernel = {f.kernel: f.properties for f in lint(STEM, "PS303")}
    # ps303_registers: ptxas "Used 103 registers"; 103 x 32 = 3296 -> 3328 per warp (units of 256);
    # 16384 per sub-partition // 3328 = 4 warps x 4 = 16 warps = 2 blocks of 8 warps: 16 of 64 warps
    regs = by_kernel["ps303_registers"]
    assert (regs["registers"], regs["limited_by"], regs["blocks_per_sm"], regs["warps_per_sm"]) == \
        (103, "registers", 2, 16)
    assert regs["occupancy"] == 0.25 and not regs["estimated"]
    # ps303_shared: "49152 bytes smem" + 1 KiB reserved = 50176 bytes; 228 KiB // 50176 = 4 blocks of 4 warps
    smem = by_kernel["ps303_shared"]
    assert (smem["shared_bytes"], smem["limited_by"], smem["blocks_per_sm"], smem["warps_per_sm"]) == \
        (49152, "shared", 4, 16)
    f = next(f for f in lint(STEM, "PS303") if f.kernel == "ps303_registers")
    # 64 registers: 2048 per warp, 8 warps per sub-partition = 32 warps = 50 %; 65 gives 7 x 4 = 28 warps
    assert "16 of 64 warps (25%)" in f.message and "at most 64 registers/thread reach 50%" in f.message
    assert residency("sm_90", 256, 65, 0).occupancy < 0.5 <= residency("sm_90", 256, 64, 0).occupancy


@needs_ptxas
def test_occupancy_threshold_is_configurable():
    # ok_unsqueezed: 55 registers -> 1792 per warp, 9 x 4 = 36 warps -> 4 blocks = 32 warps = exactly 50 %
    assert "ok_unsqueezed" not in {f.kernel for f in lint(STEM, "PS303")}
    strict = lint(STEM, "PS303", config=_config(tmp_rules={"PS303": {"min-occupancy": 0.75}}))
    assert "ok_unsqueezed" in {f.kernel for f in strict}


def test_occupancy_on_maxwell_is_estimated_from_the_ptx():
    """titanx (sm_52): no ptxas of CUDA 13 assembles for it; the occupancy comes from the PTX's registers
    and the sm_52 rules (96 KiB shared memory per SM, no per-block reservation, units of 256 bytes)."""
    findings = {f.kernel: f for f in lint(STEM, "PS303", config=_config(gpu="titanx"))}
    smem = findings["ps303_shared"]
    # 49152 bytes: 98304 // 49152 = 2 blocks of 4 warps = 8 of 64 warps
    assert (smem.properties["blocks_per_sm"], smem.properties["warps_per_sm"]) == (2, 8)
    assert smem.properties["estimated"] and "estimated from the PTX" in smem.message
    assert "titanx (sm_52)" in smem.message
    regs = findings["ps303_registers"].properties
    assert regs["limited_by"] == "registers" and regs["estimated"]
    assert set(findings) == {"ps303_registers", "ps303_shared"}


def test_estimated_resources_read_the_declarations():
    module = parse_file(ptx(STEM))
    est = estimate_resources(module, "sm_52", "test")
    assert est["ps303_shared"].shared_bytes == 12288 * 4 and est["ok_small_tile"].shared_bytes == 256 * 4
    assert est["ps301_dynamic_index"].stack_frame == 256 and est["ok_small_tile"].stack_frame == 0
    assert all(r.estimated and r.spill_stores == 0 for r in est.values())
    # the register pressure follows the live accumulators: 96 floats live across the loop, 48 in the other
    assert est["ps303_registers"].registers >= 96 > est["ok_unsqueezed"].registers >= 48
    assert kernel_resources(module, "sm_52")["ps303_shared"].estimated


@needs_ptxas
def test_resources_come_from_ptxas_where_it_can_assemble():
    module = parse_file(ptx(STEM))
    res = kernel_resources(module, "sm_90")
    assert not res["ps303_registers"].estimated and res["ps303_registers"].registers == 103
    assert res["ps303_registers"].source == "ptxas -v -arch=sm_90"
    # PTX for sm_90 cannot be assembled for the older sm_80: estimated, and the reason given
    older = kernel_resources(module, "sm_80")["ps303_registers"]
    assert older.estimated and "sm_80" in older.source


@needs_ptxas
def test_parser_corpus_findings():
    """On the parser corpus (tests/data/cuda, sm_90): the per-thread histogram of memory.cu lives in local memory;
    printf's argument buffers (written for vprintf) and the registers recursive device functions save around
    their calls (ptxas counts them as spills) are not reported; nothing spills or limits occupancy."""
    flagged = set()
    for path in sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")):
        module = parse_file(path, recover=True)
        flagged |= {(f.code, f.kernel) for f in lint_module(module, Config(), rules=RESOURCE_RULES)}
    assert flagged == {("PS301", "mem_local_histogram")}


@needs_ptxas
def test_local_memory_on_maxwell_takes_ptxas_for_the_ptx_target_as_evidence():
    """titanx (sm_52) cannot be assembled; ptxas for the PTX's sm_90 tells which local arrays stay in memory:
    the histogram does (256-byte stack frame), the local array of sinf's slow path in ps4_precision.cu does
    not (ptxas keeps it in registers), so only the first is reported."""
    titanx = _config(gpu="titanx")
    (f,) = lint(STEM, "PS301", config=titanx)
    assert f.kernel == "ps301_dynamic_index" and f.properties["stack_frame"] == 256
    assert f.properties["arch"] == "sm_90" and "ptxas -v -arch=sm_90" in f.message
    assert lint("ps4_precision", "PS301", config=titanx) == []
