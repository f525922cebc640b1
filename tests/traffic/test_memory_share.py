"""With its launch, a bandwidth-bound kernel is memory-bound to the DVFS model: the traffic model's DRAM time
against the core's gives the physical model's memory-bound share (≥ 0.6 for a copy, a tiled transpose, a
strided copy and a matrix-vector product over a column-major matrix on the GTX Titan X), and the
minimum-energy clocks never take the lowest memory clock for them. Their uncoalesced twins (the transpose
writing down columns, the product whose lanes walk their own rows) move the same DRAM bytes but 32 sectors per
request: the caches (L1, or L2 for the transpose's stores written in part) bound them at the highest clocks,
and they take longer."""

from __future__ import annotations

import pytest
from support.paths import DATA

from ptxstatic.launch import Buffer, Launch
from ptxstatic.models.inference.loading import is_shipped
from ptxstatic.predict import load_models, predict_kernel
from ptxstatic.ptx import parse_file

PTX = DATA / "traffic" / "traffic.ptx"
N = 1 << 22
WIDTH = 2048
ROWS = 1 << 16
LAUNCHES = {
    "row_copy": Launch((N // 256, 1, 1), (256, 1, 1), 0, {"in": Buffer("f32", N), "out": Buffer("f32", N, output=True),
                                                          "n": N}),
    **{name: Launch((WIDTH // 32, WIDTH // 32, 1), (32, 8, 1), 0,
                    {"in": Buffer("f32", WIDTH * WIDTH), "out": Buffer("f32", WIDTH * WIDTH, output=True),
                     "width": WIDTH}) for name in ("transpose_tiled", "transpose_naive")},
    "strided_copy": Launch((N // 256, 1, 1), (256, 1, 1), 0, {"in": Buffer("f32", 8 * N),
                                                              "out": Buffer("f32", N, output=True), "n": N,
                                                              "stride": 8}),
    # 65,536 rows of 256: enough warps to stream the matrix
    **{name: Launch((ROWS // 128, 1, 1), (128, 1, 1), 0,
                    {"a": Buffer("f32", ROWS * 256), "x": Buffer("f32", 256), "y": Buffer("f32", ROWS, output=True),
                     "rows": ROWS, "cols": 256}) for name in ("matvec_cols", "matvec_rows")},
}


TWINS = {"transpose_naive": "transpose_tiled", "matvec_rows": "matvec_cols"}
needs_model = pytest.mark.skipif(not is_shipped("gtxtitanx", "physical"),
                                 reason="the shipped GTX Titan X model is not here")


def _predict(kernel: str) -> dict:
    return predict_kernel(parse_file(PTX), kernel, load_models("gtxtitanx"), LAUNCHES[kernel])


@needs_model
@pytest.mark.parametrize("kernel", sorted(set(LAUNCHES) - set(TWINS)))
def test_a_bandwidth_bound_kernel_is_memory_bound_with_its_launch(kernel: str):
    d = _predict(kernel)
    share = d["absolute"]["memory_share"]
    assert share >= 0.6 and d["quantities"]["time_memory"] == pytest.approx(share, abs=1e-3)
    lowest = min(c["f_mem_mhz"] for c in d["configs"])
    assert d["min_energy"]["f_mem_mhz"] != lowest
    assert any("memory-bound share" in n for n in d["notes"])


@needs_model
@pytest.mark.parametrize("kernel", sorted(TWINS))
def test_the_uncoalesced_twin_is_cache_bound_and_slower(kernel: str):
    d, twin = _predict(kernel), _predict(TWINS[kernel])
    assert d["absolute"]["bound"] in ("l1", "l2") and twin["absolute"]["bound"] == "dram"
    assert d["absolute"]["traffic"]["dram_read_bytes"]["value"] == pytest.approx(
        twin["absolute"]["traffic"]["dram_read_bytes"]["value"], rel=0.25)
    assert d["absolute"]["time_ms"] > 1.2 * twin["absolute"]["time_ms"]
