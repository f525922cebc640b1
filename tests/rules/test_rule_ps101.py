"""PS101 uncoalesced-global-access on CUDA kernels written to trigger it and on near misses that must not.

A line marked ``expect: PS101`` in ``tests/data/rules/cuda/ps101_global.cu`` is where the rule must report
under the default launch, ``expect-configured: PS101`` where it must report only when the launch in the
configuration gives the argument the stride depends on; kernels named ``ok_*`` must stay silent. The PTX was
compiled by nvcc (sm_90) with ``-lineinfo``, without line information and with ``-G``
(``tests/data/rules/regenerate.py``).

The expected figures are derived from the sources. A warp's request touches one 32-byte sector per distinct
``address // 32`` of its lanes; its minimum is ``ceil(distinct bytes / 32)``. Under the default launch
(blocks of 32 x 4) a warp is one row of 32 consecutive ``threadIdx.x``, and the buffers are 256-byte aligned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.paths import DATA, FIXTURES, ROOT

from ptxstatic.config import Config
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

SOURCE = DATA / "rules" / "cuda" / "ps101_global.cu"
PTX = {v: DATA / "rules" / "ptx" / v / "ps101_global.ptx" for v in ("lineinfo", "plain", "G")}
PS101 = [get_rule("PS101")]

# (kernel, access) -> (sectors/request, minimum sectors/request, bytes between lanes), derived by hand:
EXPECTED = {
    # m[col * N + r]: lanes N * 4 = 4096 B apart, each in its own sector: 32; 32 floats = 128 B need 4
    ("ps101_column_sum", "load"): (32.0, 4.0, 4096),
    # in[2 * i]: 32 lanes 8 B apart span 256 B = 8 sectors; 128 distinct bytes need 4
    ("ps101_stride2", "load"): (8.0, 4.0, 8),
    # p[i].x of a 16-byte struct: 32 lanes 16 B apart span 512 B = 16 sectors; 128 distinct bytes need 4
    ("ps101_aos_field", "load and store"): (16.0, 4.0, 16),  # one line, one finding
    # out[i * 32]: 128 B apart, one sector each: 32; 4 needed (estimated: the texture fetch stops the emulator)
    ("ps101_after_texture", "store"): (32.0, 4.0, 128),
    # m[col * pitch], pitch not given: a stride uniform but not a constant, one sector per lane for any pitch
    # but 1: 32 for 4 (symbolic, no stride in bytes)
    ("ps101_column_pitch", "load"): (32.0, 4.0, None),
    # in[(i * stride) & mask], neither given: the stride carried through the mask, symbolic as above
    ("ps101_masked_stride", "load"): (32.0, 4.0, None),
    # in[idx[i]] and out[idx[i]], the indices made up: one sector per lane assumed for each
    ("ps101_gather", "load"): (32.0, 4.0, None),
    ("ps101_scatter", "store"): (32.0, 4.0, None),
}


def marked(kind: str) -> set[int]:
    return {n for n, line in enumerate(SOURCE.read_text().splitlines(), 1)
            if re.search(rf"//\s*{kind}:\s*PS101\b", line)}


def kernels(prefix: str) -> set[str]:
    return set(re.findall(rf'__global__ void ({prefix}\w*)\(', SOURCE.read_text()))


def findings(variant: str, config: Config | None = None):
    return lint_module(parse_file(PTX[variant]), config or Config(), rules=PS101, source_root=ROOT)


def test_reports_exactly_the_marked_lines_with_the_derived_figures():
    found = findings("lineinfo")
    assert {f.source.line for f in found} == marked("expect")
    assert all(Path(f.source.file) == SOURCE for f in found)
    assert {(f.kernel, f.properties["access"]) for f in found} == set(EXPECTED)
    for f in found:
        sectors, minimum, stride = EXPECTED[f.kernel, f.properties["access"]]
        assert f.properties["sectors_per_request"] == sectors, f.message
        assert f.properties["minimum_sectors_per_request"] == minimum, f.message
        assert f.properties["stride_bytes"] == stride, f.message
        between = f" (stride {stride} B between lanes)" if stride is not None else ";"
        assert f"{sectors:.1f} sectors/request, minimum {minimum:.1f}{between}" in f.message
        assert f.code == "PS101" and str(f.severity) == "warning"


def test_the_finding_says_which_method_gave_the_figures():
    by_kernel = {f.kernel: f for f in findings("lineinfo")}
    for name, f in by_kernel.items():
        if name == "ps101_after_texture":
            assert f.properties["method"] == "affine"
            assert "estimated from the address's affine stride" in f.message and "opcode tex" in f.message
        elif name == "ps101_column_pitch":
            assert f.properties["method"] == "symbolic"
            assert "depends on pitch: uncoalesced for every stride but 4 bytes, judged assuming it is not 4" \
                in f.message
        elif name == "ps101_masked_stride":
            assert f.properties["method"] == "symbolic"
            assert ("depends on mask and stride: uncoalesced for every stride but 4 bytes, judged assuming it is "
                    "not 4 and that masking with mask keeps the bits the lanes' indices differ in") in f.message
        elif name in ("ps101_gather", "ps101_scatter"):
            assert f.properties["method"] == "indirect"
            kind = "gather" if name == "ps101_gather" else "scatter"
            assert ("from indices the lanes load from idx: judged assuming neighbouring lanes' indices are not "
                    f"consecutive (a {kind};") in f.message
        else:
            assert f.properties["method"] == "emulation"
            method = "measured by emulation of warps 0..3 of CTA (0, 0, 0) (the default launch, block 32x4x1)"
            assert method in f.message


def test_an_unrolled_loop_makes_one_finding_with_its_instructions():
    (f,) = [f for f in findings("lineinfo") if f.kernel == "ps101_column_sum"]
    # two unrolled loads, each executed once by each of the 4 sampled warps; together each lane reads 8 bytes
    # of its own sector: 32 sectors for 2 x 4, so L1 does not rescue them
    assert len(f.properties["instructions"]) == 2 and f.properties["requests"] == 8
    assert f.message.endswith(", 2 instructions")


def test_positives_and_near_misses_in_every_variant():
    positives = kernels("ps101_")
    assert len(kernels("ok_")) >= 8
    for variant in PTX:
        assert {f.kernel for f in findings(variant)} == positives, variant


@pytest.mark.parametrize("name", ["2", "pitch", "ps101_column_pitch_param_2"])
def test_an_argument_that_shapes_the_stride_is_measured_with_the_configured_launch(name: str):
    """m[col * pitch] with pitch 1000 given by index, C++ name or PTX name, as on the command line: lanes 4000 B
    apart, measured, 32 sectors for 4; every other kernel is judged as before."""
    config = Config(launch=Launch((32, 32, 1), (32, 8, 1), 0, {name: 1000}))
    found = findings("lineinfo", config)
    assert {f.kernel for f in found} == kernels("ps101_")
    (f,) = [f for f in found if f.kernel == "ps101_column_pitch"]
    assert (f.properties["sectors_per_request"], f.properties["minimum_sectors_per_request"]) == (32.0, 4.0)
    assert f.properties["stride_bytes"] == 4000 and "(the configured launch, block 32x8x1)" in f.message
    assert f.properties["method"] == "emulation"


def test_a_pitch_of_one_element_given_by_name_is_coalesced():
    config = Config(launch=Launch((32, 32, 1), (32, 8, 1), 0, {"pitch": 1}))
    assert "ps101_column_pitch" not in {f.kernel for f in findings("lineinfo", config)}


def by_kernel(config: Config) -> dict[str, object]:
    return {f.kernel: f for f in findings("lineinfo", config)}


@pytest.mark.parametrize("stride, sectors", [(1, None), (2, 8.0), (8, 32.0)])
def test_a_masked_stride_is_measured_once_the_launch_gives_the_mask(stride: int, sectors: float | None):
    """in[(i * stride) & mask] with the mask given (2^20 - 1): lanes `stride` floats apart, measured; a stride
    of one element is coalesced."""
    config = Config(launch=Launch((32, 32, 1), (32, 4, 1), 0, {"mask": (1 << 20) - 1, "stride": stride}))
    f = by_kernel(config).get("ps101_masked_stride")
    if sectors is None:
        assert f is None
    else:
        assert f.properties["method"] == "emulation" and f.properties["sectors_per_request"] == sectors
        assert f.properties["stride_bytes"] == 4 * stride


def test_a_mask_that_folds_every_lane_together_is_measured_as_one_sector():
    """A given mask of 7 keeps none of the bits that (i * 8) differs in: every lane reads element 0."""
    config = Config(launch=Launch((32, 32, 1), (32, 4, 1), 0, {"mask": 7, "stride": 8}))
    assert "ps101_masked_stride" not in by_kernel(config)


@pytest.mark.parametrize("fill, reported", [("iota", False), ("random", True)])
def test_a_gather_is_measured_with_the_index_data_the_launch_gives(fill: str, reported: bool):
    """idx given as 0, 1, 2, ... makes in[idx[i]] and out[idx[i]] coalesced; random indices into 4096
    elements put nearly every lane in its own sector."""
    idx = Buffer("s32", 4096, fill, seed=3)
    config = Config(launch=Launch((32, 1, 1), (32, 4, 1), 0, {"idx": idx, "in": Buffer("f32", 4096),
                                                              "out": Buffer("f32", 4096, output=True)}))
    found = by_kernel(config)
    for name in ("ps101_gather", "ps101_scatter"):
        f = found.get(name)
        assert (f is not None) == reported, name
        if reported:
            assert f.properties["method"] == "emulation" and f.properties["sectors_per_request"] >= 28


def test_a_gather_with_made_up_data_in_other_arguments_is_not_measured():
    """Only the index buffer is given: the buffer read at the indices is made up, which changes nothing of the
    addresses, so the gather is measured; with the index buffer made up it is judged by assumption."""
    iota = Config(launch=Launch((32, 1, 1), (32, 4, 1), 0, {"idx": Buffer("s32", 4096, "iota")}))
    assert "ps101_gather" not in by_kernel(iota)
    other = Config(launch=Launch((32, 1, 1), (32, 4, 1), 0, {"in": Buffer("f32", 4096, "random")}))
    assert by_kernel(other)["ps101_gather"].properties["method"] == "indirect"


@pytest.mark.parametrize("ratio, extra", [
    (1.2, {"ok_offset_by_one"}),  # in[i + 1]: 128 B from byte 4 of a sector touch 5 sectors for 4: 1.25
    (2.0, set()),
])
def test_threshold_from_the_configuration(ratio: float, extra: set[str]):
    config = Config(rules={"PS101": {"min-ratio": ratio}})
    assert {f.kernel for f in findings("lineinfo", config)} == kernels("ps101_") | extra


def test_a_threshold_above_every_ratio_reports_nothing():
    # the largest ratio above is 32 / 4 = 8; at 8 the two loads of ps101_column_sum, judged together (each lane
    # reads 8 bytes of its one sector: 32 sectors for 2 x 4, a ratio of 4), are not reported either
    assert findings("lineinfo", Config(rules={"PS101": {"min-ratio": 8.5}})) == []
    assert {f.kernel for f in findings("lineinfo", Config(rules={"PS101": {"min-ratio": 8.0}}))} \
        == {"ps101_after_texture", "ps101_column_pitch", "ps101_masked_stride", "ps101_gather", "ps101_scatter"}


def test_suppression_comment(tmp_path: Path):
    copy = tmp_path / SOURCE.relative_to(ROOT)
    copy.parent.mkdir(parents=True)
    copy.write_text(SOURCE.read_text().replace("out[i] = in[2 * i];  // expect: PS101",
                                               "out[i] = in[2 * i];  // ptxstatic: ignore[PS101]"))
    found = lint_module(parse_file(PTX["lineinfo"]), Config(), rules=PS101, source_root=tmp_path)
    assert "ps101_stride2" not in {f.kernel for f in found} and len(found) == len(findings("lineinfo")) - 1


def test_the_findings_on_the_parser_corpus_are_the_reviewed_ones():
    """Every nvcc kernel of the parser corpus (sm_90, -lineinfo): the findings below were checked by hand against
    the sources; everything else (coalesced accesses, grid-stride loops, tiled transposes, table lookups, stream
    compaction, pairs of neighbouring loads) must stay silent."""
    reviewed = {
        # out[2 * i] and out[2 * i + 1] of uint64: two stores 16 B apart per lane, each 16 sectors for 8
        ("tests/data/cuda/math.cu", 54): (16.0, 8.0), ("tests/data/cuda/math.cu", 55): (16.0, 8.0),
        # o[b] = h[b] with o = hist_out + 32 * thread: a row of 128 B per thread, one sector per lane
        ("tests/data/cuda/memory.cu", 76): (32.0, 4.0),
        # out[w] = a 16-byte Stats4 stored field by field: 16 B apart, 16 sectors for 4
        ("tests/data/cuda/calls.cu", 105): (16.0, 4.0),
        # each lane walks its own row, p = x + tid * len (or m[row * n + j], ...): a stride of len (n,
        # outputs_per_thread, per_thread) elements, uniform but not a constant, one sector per lane for any
        # row length but one element: 32 for 4 floats' (2 for 2-byte, 1 for 1-byte elements)
        ("tests/data/cuda/loops.cu", 22): (32.0, 4.0), ("tests/data/cuda/loops.cu", 106): (32.0, 4.0),
        ("tests/data/cuda/loops.cu", 123): (32.0, 4.0), ("tests/data/cuda/loops.cu", 184): (32.0, 4.0),
        ("tests/data/cuda/loops.cu", 185): (32.0, 4.0), ("tests/data/cuda/loops.cu", 198): (32.0, 4.0),
        ("tests/data/cuda/half_bf16.cu", 55): (32.0, 2.0), ("tests/data/cuda/memory.cu", 73): (32.0, 1.0),
        # the same row walk's bf16 load, inlined from the toolkit header's conversion function: shown at the
        # user's call site (findings are never in system headers)
        ("tests/data/cuda/half_bf16.cu", 26): (32.0, 4.0),
        # src[idx[i]] through __ldg, the indices made up: a gather, one sector per lane assumed
        ("tests/data/cuda/memory.cu", 31): (32.0, 4.0),
    }
    found = {}
    for path in sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")):
        for f in lint_module(parse_file(path, recover=True), Config(), rules=PS101, source_root=ROOT):
            file = Path(f.source.file)
            key = (file.relative_to(ROOT).as_posix() if file.is_relative_to(ROOT) else file.as_posix(), f.source.line)
            found[key] = (f.properties["sectors_per_request"], f.properties["minimum_sectors_per_request"])
    assert found == reviewed
