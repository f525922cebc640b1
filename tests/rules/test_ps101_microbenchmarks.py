"""PS101 on the project's global-memory microbenchmarks (``microbenchmarks/global_mem.cu``, compiled by nvcc):
every uncoalesced pattern is reported without its launch (judged with the assumption it states) and with each
launch of the manifest (measured), and the coalesced kernels are reported under neither."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.paths import ROOT

from ptxstatic.collect.manifest import load_manifest
from ptxstatic.config import Config
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the microbenchmarks")

SOURCE = ROOT / "microbenchmarks" / "global_mem.cu"
#: the kernels whose warps touch more sectors than their bytes need, for some launch of the manifest
UNCOALESCED = {"gmem_stride_read", "gmem_stride_write", "gmem_gather", "gmem_scatter", "gmem_transpose_naive"}
MANIFEST = load_manifest(ROOT / "microbenchmarks" / "manifest.json")
BENCHES = [b for b in MANIFEST.benchmarks if b.source.name == SOURCE.name]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Module:
    ptx = tmp_path_factory.mktemp("microbenchmarks") / "global_mem.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-lineinfo", str(SOURCE), "-o", str(ptx)], check=True,
                   capture_output=True)
    return parse_file(ptx)


def findings(mod: Module, kernel: str | None = None, config: Config | None = None):
    if kernel is not None:  # that kernel alone: a launch is given for it only
        mod = Module(mod.filename, [i for i in mod.items if not isinstance(i, Function) or i.name == kernel])
    return lint_module(mod, config or Config(), rules=[get_rule("PS101")], source_root=ROOT)


def test_without_the_launch_every_uncoalesced_pattern_is_reported(compiled: Module):
    found = findings(compiled)
    assert {f.kernel for f in found} == UNCOALESCED
    methods = {f.kernel: f.properties["method"] for f in found}
    assert methods["gmem_gather"] == methods["gmem_scatter"] == "indirect"
    assert methods["gmem_stride_read"] == methods["gmem_stride_write"] == "symbolic"
    for f in found:
        assert f.properties["sectors_per_request"] == 32.0 and f.properties["minimum_sectors_per_request"] == 4.0


@pytest.mark.parametrize("bench", BENCHES, ids=lambda b: b.name)
def test_with_each_launch_of_the_manifest_the_figures_are_measured(compiled: Module, bench):
    for spec in bench.launches:
        found = findings(compiled, bench.kernel, Config(launch=spec.launch))
        if bench.kernel not in UNCOALESCED:
            assert found == [], spec.key
            continue
        if bench.kernel in ("gmem_stride_read", "gmem_stride_write"):
            stride = spec.launch.args["3"] if bench.kernel == "gmem_stride_read" else spec.launch.args["2"]
            if stride == 1:  # neighbouring floats: coalesced
                assert found == [], spec.key
                continue
            expected = min(32.0, 4.0 * stride)  # lanes 4 * stride bytes apart, 4 sectors for a coalesced warp
        else:
            expected = 32.0  # hashed indices, and the transpose's column of stores: a sector per lane
        (f,) = found
        assert f.properties["method"] == "emulation", (spec.key, f.message)
        assert f.properties["sectors_per_request"] == pytest.approx(expected, rel=0.02), spec.key
