"""PS102 shared-bank-conflict on CUDA kernels written to trigger it and on near misses that must not.

A line marked ``expect: PS102`` in ``tests/data/rules/cuda/ps102_shared.cu`` is where the rule must report;
kernels named ``ok_*`` must stay silent. The PTX was compiled by nvcc (sm_90) with ``-lineinfo``, without line
information and with ``-G`` (``tests/data/rules/regenerate.py``).

The expected figures are derived from the sources. Shared memory has 32 banks of 4-byte words; word ``w`` is
in bank ``w % 32``. A request's lanes are served in phases (32 lanes for accesses up to 4 bytes, 16 for 8-byte
and 8 for 16-byte accesses); a phase takes as many wavefronts as the most distinct words any one bank holds
among its lanes' words (lanes reading the same word share it), and ideally one. Under the default launch
(blocks of 32 x 4) a warp is one row: ``threadIdx.x`` = lane, ``threadIdx.y`` fixed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.paths import CUDA_SOURCES, DATA, FIXTURES, ROOT

from ptxstatic.config import Config
from ptxstatic.launch import Launch
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

SOURCE = DATA / "rules" / "cuda" / "ps102_shared.cu"
PTX = {v: DATA / "rules" / "ptx" / v / "ps102_shared.ptx" for v in ("lineinfo", "plain", "G")}
PS102 = [get_rule("PS102")]

# (kernel, access) -> (n-way, wavefronts/request, ideal wavefronts/request, bytes between lanes), by hand:
EXPECTED = {
    # tile[threadIdx.x][threadIdx.y + j] of float[32][32]: word 32 x + y + j, bank (y + j) for every lane:
    # 32 distinct words in one bank, 32 wavefronts for 1; lanes 128 B apart
    ("ps102_transpose", "load"): (32, 32.0, 1.0, 128),
    # s[2 x + 64 y] and s[2 x + 64 y + 1]: banks 0, 2, .., 30 (or 1, 3, .., 31), each holding 2 of the words
    ("ps102_stride2", "store"): (2, 2.0, 1.0, 8),
    ("ps102_stride2", "load"): (2, 2.0, 1.0, 8),
    # d[2 t] of doubles: byte 512 y + 16 x; a half-warp (x = 0..15) covers words 128 y + 4 x and 4 x + 1, banks
    # {0, 1, 4, 5, .., 28, 29} twice each: 2 wavefronts per phase, 2 phases, for 1 per phase
    ("ps102_double_stride2", "load"): (2, 4.0, 2.0, 16),
    # s[32 x]: every lane in bank 0 (estimated: the texture fetch stops the emulator)
    ("ps102_after_texture", "store"): (32, 32.0, 1.0, 128),
}


def marked() -> set[int]:
    lines = SOURCE.read_text().splitlines()
    return {n for n, line in enumerate(lines, 1) if re.search(r"//\s*expect:\s*PS102\b", line)}


def kernels(prefix: str) -> set[str]:
    return set(re.findall(rf'__global__ void ({prefix}\w*)\(', SOURCE.read_text()))


def findings(variant: str, config: Config | None = None):
    return lint_module(parse_file(PTX[variant]), config or Config(), rules=PS102, source_root=ROOT)


def test_reports_exactly_the_marked_lines_with_the_derived_figures():
    found = findings("lineinfo")
    assert {f.source.line for f in found} == marked()
    assert {(f.kernel, f.properties["access"]) for f in found} == set(EXPECTED)
    for f in found:
        ways, wavefronts, ideal, stride = EXPECTED[f.kernel, f.properties["access"]]
        assert (f.properties["ways"], f.properties["wavefronts_per_request"],
                f.properties["ideal_wavefronts_per_request"], f.properties["stride_bytes"]) \
            == (ways, wavefronts, ideal, stride), f.message
        assert f"{ways}-way bank conflict, {wavefronts:.1f} wavefronts/request, ideal {ideal:.1f}" in f.message
        assert f.code == "PS102" and str(f.severity) == "warning"


def test_the_finding_says_which_method_gave_the_figures():
    for f in findings("lineinfo"):
        if f.kernel == "ps102_after_texture":
            assert f.properties["method"] == "affine" and "affine stride" in f.message and "opcode tex" in f.message
        else:
            assert f.properties["method"] == "emulation" and "measured by emulation of warps 0..3" in f.message


def test_the_unrolled_transpose_makes_one_finding():
    (f,) = [f for f in findings("lineinfo") if f.kernel == "ps102_transpose"]
    # four unrolled loads (j = 0, 8, 16, 24), each once per sampled warp
    assert len(f.properties["instructions"]) == 4 and f.properties["requests"] == 16


def test_positives_and_near_misses_in_every_variant():
    assert len(kernels("ok_")) >= 6
    for variant in PTX:
        assert {f.kernel for f in findings(variant)} == kernels("ps102_"), variant


@pytest.mark.parametrize("ways, kernels_left", [
    (2.0, {"ps102_transpose", "ps102_stride2", "ps102_double_stride2", "ps102_after_texture"}),
    (3.0, {"ps102_transpose", "ps102_after_texture"}),  # the 2-way conflicts drop out
    (33.0, set()),
])
def test_threshold_from_the_configuration(ways: float, kernels_left: set[str]):
    config = Config(rules={"PS102": {"min-ways": ways}})
    assert {f.kernel for f in findings("lineinfo", config)} == kernels_left


def test_suppression_comment(tmp_path: Path):
    copy = tmp_path / SOURCE.relative_to(ROOT)
    copy.parent.mkdir(parents=True)
    copy.write_text(SOURCE.read_text().replace("tile[threadIdx.x][threadIdx.y + j];  // expect: PS102",
                                               "tile[threadIdx.x][threadIdx.y + j];  // ptxstatic: ignore[PS102]"))
    found = lint_module(parse_file(PTX["lineinfo"]), Config(), rules=PS102, source_root=tmp_path)
    assert "ps102_transpose" not in {f.kernel for f in found} and len(found) == len(findings("lineinfo")) - 1


# -------------------------------------------------------- a kernel of the parser corpus (tests/data/cuda/shared.cu)
CORPUS_SHARED = FIXTURES / "nvcc" / "sm_90" / "lineinfo" / "shared.ptx"


def corpus_findings(launch: Launch | None = None):
    return lint_module(parse_file(CORPUS_SHARED), Config(launch=launch), rules=PS102, source_root=ROOT)


@pytest.mark.parametrize("stride, ways", [(32, 32), (2, 2), (33, None), (1, None)])
def test_a_runtime_stride_given_by_the_configured_launch(stride: int, ways: int | None):
    """shared_bank_conflict reads buf[(threadIdx.x * stride + r) & 1023]: lane l's word is l * stride + r, in
    bank (l * stride + r) % 32; with stride 32 all 32 lanes share bank r (32-way), with stride 2 the banks of
    one parity hold two words each (2-way), with 33 or 1 the lanes fall in 32 different banks."""
    launch = Launch((4, 1, 1), (256, 1, 1), 0, {"2": stride, "3": 4})  # arguments 2 and 3: stride, rounds
    found = [f for f in corpus_findings(launch) if f.kernel == "_Z20shared_bank_conflictPKfPfii"]
    if ways is None:
        assert found == []
        return
    (f,) = found
    line = next(n for n, text in enumerate((CUDA_SOURCES / "shared.cu").read_text().splitlines(), 1)
                if "acc += buf[idx & 1023];" in text)
    assert f.source.line == line and f.properties["ways"] == ways
    assert f.properties["wavefronts_per_request"] == ways and f.properties["ideal_wavefronts_per_request"] == 1.0
    assert "(the configured launch, block 256x1x1)" in f.message


def test_the_corpus_kernels_are_near_misses_under_the_default_launch():
    """The padded transpose, the tree reduction and the stencil have no conflict; the runtime stride of
    shared_bank_conflict is made up by the default launch, so that kernel is not judged."""
    assert corpus_findings() == []
