"""Portable features, occupancy, ptxas statistics and divergence/stride analysis, checked by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import FIXTURES, ROOT, needs_ptxas

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.liveness import register_pressure
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.divergence import global_accesses
from ptxstatic.features.portable import features_from_counts, features_markdown, is_arithmetic, memory_traffic
from ptxstatic.hardware.occupancy import gpu_spec, occupancy
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file
from ptxstatic.toolchain.ptxas import parse_verbose, ptxas_stats

COUNTED = ROOT / "tests" / "data" / "static" / "counted.ptx"
SM90 = FIXTURES / "nvcc" / "sm_90" / "plain"


@pytest.fixture(scope="module")
def counted():
    return parse_file(COUNTED)


def first(path: Path, prefix: str):
    """The first instruction of a fixture whose opcode starts with ``prefix``."""
    module = parse_file(path)
    return next(i for f in module.functions if f.body for i in f.instructions if i.opcode.startswith(prefix))


# ---------------------------------------------------------------------------------- misfiled opcodes


@pytest.mark.parametrize(("path", "prefix", "traffic"), [
    ("loops.ptx", "ld.global.nc.f32", [("global", 4.0)]),  # a global load, not "misc"
    ("atomics.ptx", "atom.global.add.f32", [("global", 8.0)]),  # read and write of 4 bytes
    ("atomics.ptx", "atom.global.cas.b32", [("global", 8.0)]),
    ("async_copy.ptx", "cp.async.cg.shared.global", [("shared", 16.0), ("global", 16.0)]),  # cp-size 16
    ("async_copy.ptx", "cp.async.ca.shared.global", [("shared", 4.0), ("global", 4.0)]),
    ("async_copy.ptx", "cp.async.bulk.shared", [("unknown", 0.0)]),  # size in a register
    # a 16x16 f16 tile is 512 bytes per warp: 16 per thread; ldmatrix .x4 moves four 8x8 b16 tiles
    ("tensor.ptx", "wmma.load.a.sync.aligned.row.m16n16k16.global.f16", [("global", 16.0)]),
    ("tensor.ptx", "wmma.load.a.sync.aligned.row.m16n16k16.global.s8", [("global", 8.0)]),
    ("tensor.ptx", "wmma.store.d.sync.aligned.row.m16n16k16.global.f32", [("global", 32.0)]),
    ("tensor.ptx", "ldmatrix.sync.aligned.m8n8.x4", [("shared", 16.0)]),
    ("tensor.ptx", "mma.sync", []),
    ("warp.ptx", "shfl.sync", []),
])
def test_memory_traffic_per_thread(path, prefix, traffic):
    assert memory_traffic(first(SM90 / path, prefix)) == traffic


def test_opcode_classes():
    shfl = first(SM90 / "warp.ptx", "shfl.sync").info
    assert shfl.group == "warp" and not is_arithmetic(shfl)
    assert is_arithmetic(first(SM90 / "tensor.ptx", "mma.sync").info)
    assert is_arithmetic(first(SM90 / "tensor.ptx", "wmma.mma").info)
    half = first(SM90 / "half_bf16.ptx", "fma.rn.f16x2").info
    assert half.group == "fp16" and is_arithmetic(half)


# ------------------------------------------------------------------------------ features of a launch


def test_guard_parity_features_by_hand(counted):
    # grid 3 x 32, n = 70 (see test_static_counts): blocks of 8, 11, 4, 3 and 1 instructions entered by
    # 96, 70, 46, 24 and 96 threads
    counts = estimate_counts(bind(counted, "guard_parity", Launch((3, 1, 1), (32, 1, 1), 0, {"1": 70}))).counts
    f = features_from_counts(counted, "guard_parity", counts)
    assert f["threads_per_cta"] == 32 and f["ctas"] == 3
    assert f["instructions"] == 8 * 96 + 11 * 70 + 4 * 46 + 3 * 24 + 96
    assert f["control_ops"] == 96 + 70 + 46 + 96  # two conditional branches, bra.uni, ret
    assert f["logic_ops"] == 70  # shr.u64 of the division by 3
    assert f["arithmetic_ops"] == 96 + 5 * 70  # mad; mul.wide, mul.lo, sub, mul.wide, add.s64
    assert f["global_bytes"] == 70 * 4
    assert f["param_bytes"] == 96 * (8 + 4)
    assert f["shared_bytes"] == 0 and f["special_ops"] == 0 and f["sync_ops"] == 0
    assert f["arithmetic_intensity"] == pytest.approx(446 / (280 + 1152))
    assert f["branches"] == 2 and f["divergent_branch_fraction"] == 1.0  # i < n and tid % 3
    assert f["stride.unit"] == 1.0  # out[i]
    assert f["group.control"] == f["control_ops"]


def test_features_need_matching_counts(counted):
    counts = estimate_counts(bind(counted, "guard_parity", Launch((1, 1, 1), (32, 1, 1), 0, {"1": 7}))).counts
    with pytest.raises(PtxstaticError, match="not for kernel"):
        features_from_counts(counted, "grid_stride", counts)


def test_strides_from_the_source():
    module = parse_file(FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx")

    def kinds(kernel: str) -> set[str]:
        cfg = build_cfg(module.function(kernel))
        return {a.kind for a in global_accesses(cfg, def_use(cfg))}

    assert kinds("loop_grid_stride_saxpy") == {"unit"}  # x[i], y[i]
    # m[row * n + j] moves by n elements between neighbouring threads; out[row] by one
    assert kinds("loop_row_sum") == {"strided", "unit"}
    # taps[k] is the same address for every thread
    assert "broadcast" in kinds("loop_fir_unrolled")


def test_divergence_counts_only_thread_dependent_conditions():
    module = parse_file(FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx")
    counts = estimate_counts(bind(module, "loop_over_blocks", Launch((3, 1, 1), (32, 1, 1), 0, {}))).counts
    f = features_from_counts(module, "loop_over_blocks", counts)
    # the loop runs gridDim.x times and the store is guarded by blockIdx.x == 0: nothing depends on tid
    assert f["branches"] > 0 and f["divergent_branch_fraction"] == 0.0


# ----------------------------------------------------------------------------------------- occupancy


def test_occupancy_rules():
    h100, a100 = gpu_spec("h100"), gpu_spec("A100")
    full = occupancy(h100, 256, 32, 0, 1000)
    assert (full.blocks_per_sm, full.occupancy, full.limited_by) == (8, 1.0, "warps")
    assert full.waves == pytest.approx(1000 / (8 * 132))
    # 64 registers: 2048 per warp, 8 warps per sub-partition, 32 warps = 4 blocks of 8 warps (50 %)
    regs = occupancy(a100, 256, 64, 0, 108)
    assert (regs.blocks_per_sm, regs.occupancy, regs.limited_by) == (4, 0.5, "registers")
    # 48 KiB + 1 KiB reserved per block in 164 KiB: 3 blocks
    smem = occupancy(a100, 128, 16, 48 * 1024, 108)
    assert (smem.blocks_per_sm, smem.limited_by) == (3, "shared")
    # Titan X: 64 warps, at most 32 blocks; one-warp blocks are limited by the block count to half occupancy
    titan = occupancy(gpu_spec("titanx"), 32, 16, 0, 24)
    assert (titan.blocks_per_sm, titan.limited_by, titan.occupancy) == (32, "blocks", 0.5)
    assert occupancy(h100, 256, 300, 0, 1).blocks_per_sm == 0


def test_unknown_gpu_is_a_user_error():
    with pytest.raises(PtxstaticError, match="unknown GPU"):
        gpu_spec("voodoo2")


# -------------------------------------------------------------------------------------------- ptxas


def test_parse_verbose_output():
    text = """ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Function properties for helper
    24 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads
"""
    stats = parse_verbose(text, "sm_80")
    k = stats["k"]
    assert (k.registers, k.barriers, k.shared_bytes, k.const_bytes) == (40, 1, 2048, 376)
    assert (k.stack_frame, k.spill_stores, k.spill_loads) == (16, 8, 4)
    assert stats["helper"].spill_stores == 24


@needs_ptxas
def test_ptxas_statistics_are_cached(tmp_path, counted):
    text = COUNTED.read_text()
    stats = ptxas_stats(text, "sm_80", cache=tmp_path)
    assert stats is not None and stats["guard_parity"].registers > 0
    assert stats["guard_parity"].spill_stores == 0
    assert len(list(tmp_path.iterdir())) == 1
    assert ptxas_stats(text, "sm_80", cache=tmp_path) == stats
    counts = estimate_counts(bind(counted, "guard_parity", Launch((264, 1, 1), (256, 1, 1), 0, {"1": 9}))).counts
    f = features_from_counts(counted, "guard_parity", counts, gpu=gpu_spec("h100"), ptxas=stats)
    assert stats["guard_parity"].registers <= 32  # so 8 blocks of 8 warps fill the 64 warp slots
    assert f["blocks_per_sm"] == 8 and f["waves"] == pytest.approx(264 / (8 * 132))


@needs_ptxas
def test_ptxas_rejection_is_a_user_error(tmp_path):
    with pytest.raises(PtxstaticError, match="rejected"):
        ptxas_stats(".version 8.0\n.target sm_80\n.address_size 64\n.entry k() { bogus; }\n", "sm_80",
                    cache=tmp_path)


# --------------------------------------------------------------------------------------- docs and CLI


def test_docs_table_matches_the_code():
    assert features_markdown() in (ROOT / "docs" / "features.md").read_text()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True)


def test_features_command_json(tmp_path):
    counts = tmp_path / "counts.json"
    p = run("blocks", str(COUNTED), "-k", "guard_parity", "--grid", "3", "--block", "32", "--param", "1=70",
            "-o", str(counts), "--format", "json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)["kernels"][0]["summary"]
    assert summary == [{"function": "guard_parity", "blocks": 5, "exact": 5, "estimated": 0}]
    p = run("features", str(COUNTED), "-k", "guard_parity", "--counts", str(counts), "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)["kernels"][0]
    assert data["counts_source"] == "static" and data["features"]["global_bytes"] == 280


def test_commands_report_bad_input_without_traceback():
    p = run("blocks", str(COUNTED), "-k", "missing", "--grid", "1", "--block", "32")
    assert p.returncode == 2 and "no kernel named 'missing'" in p.stderr and "Traceback" not in p.stderr
    p = run("features", str(COUNTED), "-k", "guard_parity", "--gpu", "voodoo2", "--block", "32", "--param", "1=3")
    assert p.returncode == 2 and "unknown GPU" in p.stderr and "Traceback" not in p.stderr
    p = run("blocks", str(COUNTED), "-k", "guard_parity", "--grid", "0")
    assert p.returncode == 2 and "bad dimensions" in p.stderr


def test_features_read_profile_output(tmp_path):
    """`ptxstatic profile` writes the block counts under "counts", next to the device and launch."""
    module = parse_file(COUNTED)
    counts = estimate_counts(bind(module, "guard_parity", Launch((3, 1, 1), (32, 1, 1), 0, {"1": 70}))).counts
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({"kernel": "guard_parity", "device": "test", "counts": counts.to_dict()}))
    p = run("features", str(COUNTED), "-k", "guard_parity", "--counts", str(path), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["kernels"][0]["features"]["instructions"] == 1890


def test_features_for_maxwell_estimate_the_resources_from_the_ptx():
    """`--gpu titanx`: CUDA 13's ptxas has no sm_52, so registers come from the PTX's register pressure and
    occupancy from the sm_52 rules, and the output says they are estimated."""
    p = run("features", str(COUNTED), "-k", "guard_parity", "--grid", "24", "--block", "256", "--param", "1=9",
            "--gpu", "titanx", "--format", "json")
    assert p.returncode == 0, p.stderr
    f = json.loads(p.stdout)["kernels"][0]["features"]
    assert f["resources"].startswith("estimated from the PTX") and f["gpu"] == "titanx"
    module = parse_file(COUNTED)
    registers = register_pressure(build_cfg(module.function("guard_parity")))
    assert f["registers"] == registers
    expected = occupancy(gpu_spec("titanx"), 256, registers, f["static_shared_bytes"], 24)
    assert (f["blocks_per_sm"], f["occupancy"], f["occupancy_limited_by"]) == \
        (expected.blocks_per_sm, expected.occupancy, expected.limited_by)
    assert f["waves"] == pytest.approx(24 / (expected.blocks_per_sm * 24))
    text = run("features", str(COUNTED), "-k", "guard_parity", "--grid", "24", "--block", "256", "--param", "1=9",
               "--gpu", "titanx")
    assert text.returncode == 0 and "estimated from the PTX" in text.stdout and "warning" not in text.stderr
