"""The microbenchmark suite: the manifest is current and consistent with the kernels, every source compiles with
nvcc for sm_80 and sm_90 (each file once per architecture, in parallel), parses with ptxstatic, assembles with
ptxas, instruments and still assembles, and together the kernels cover every instruction group and state space
the suite promises."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.paths import ROOT, needs_nvcc

from ptxstatic.collect.compile import CompiledSource, compile_all, compile_source
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.counts.instrumentation.ptx_pass import instrument
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer
from ptxstatic.ptx import isa
from ptxstatic.toolchain.ptxas import assemble

SUITE = ROOT / "microbenchmarks"
MANIFEST = SUITE / "manifest.json"
ARCHS = ("sm_80", "sm_90")
JOBS = max(2, os.cpu_count() or 2)


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(MANIFEST)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, dict[Path, CompiledSource]]:
    """Every source of the suite compiled to PTX (once per session, also under pytest-xdist) and parsed."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH")
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "microbenchmarks-ptx"
    shared.mkdir(exist_ok=True)
    sources = sorted(SUITE.glob("*.cu"))
    out: dict[str, dict[Path, CompiledSource]] = {}
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker compiles, the others read its PTX
        for arch in ARCHS:
            done = {p: shared / f"{arch}-{p.stem}.ptx" for p in sources}
            results = compile_all([p for p in sources if not done[p].exists()], arch, "-lineinfo", jobs=JOBS)
            errors = [str(r) for r in results.values() if isinstance(r, PtxstaticError)]
            assert not errors, "\n".join(errors)
            for p, r in results.items():
                done[p].write_text(r.ptx)  # type: ignore[union-attr]
            out[arch] = {p: compile_source(done[p], arch) for p in sources}
    return out


def test_manifest_is_generated_from_manifest_py():
    p = subprocess.run([sys.executable, str(SUITE / "manifest.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_suite_size(manifest):
    kernels = {b.kernel for b in manifest.benchmarks}
    assert len(kernels) >= 120
    assert sum(len(b.launches) for b in manifest.benchmarks) >= 3 * 120
    assert 15 <= len({b.source for b in manifest.benchmarks}) <= 25
    # every launch asks for at least a second of repeated launches, and its hint covers that second
    for b in manifest.benchmarks:
        for spec in b.launches:
            assert spec.min_seconds >= 1.0 and spec.repeats >= 1, b.name


@needs_nvcc
def test_every_source_compiles_parses_and_assembles(compiled):
    jobs = [(arch, src) for arch in ARCHS for src in compiled[arch].values()]
    for _, src in jobs:
        assert not src.module.errors, src.path
        assert src.module.sm == src.arch

    def check(job: tuple[str, CompiledSource]) -> None:
        arch, src = job
        assemble(src.ptx, arch)

    with ThreadPoolExecutor(JOBS) as pool:
        list(pool.map(check, jobs))


@needs_nvcc
def test_instrumented_suite_assembles(compiled):
    sources = list(compiled["sm_90"].values())

    def check(src: CompiledSource) -> int:
        result = instrument(src.module, source_text=src.ptx)
        assemble(result.text, "sm_90")
        return len(result.counters.counters)

    with ThreadPoolExecutor(JOBS) as pool:
        assert all(n > 0 for n in pool.map(check, sources))


@needs_nvcc
def test_manifest_launches_fit_their_kernels(manifest, compiled):
    """Every benchmark names a kernel of its source, gives one argument per parameter, pointers to pointer-sized
    parameters, and a launch within the hardware's limits."""
    by_path = compiled["sm_90"]
    for b in manifest.benchmarks:
        fn = by_path[b.source].module.function(b.kernel)
        params = fn.params or ()
        for spec in b.launches:
            launch = spec.launch
            assert set(launch.args) == {str(i) for i in range(len(params))}, b.name
            for i, p in enumerate(params):
                arg = launch.args[str(i)]
                if isinstance(arg, Buffer):
                    assert p.dtype in ("u64", "b64") and arg.count > 0, (b.name, i)
                else:
                    assert p.dtype not in ("u64", "b64") or isinstance(arg, int), (b.name, i)
            assert 32 <= launch.threads_per_block <= 1024, b.name
            assert launch.shared_bytes <= 160 * 1024, b.name
            assert launch.grid[0] < 2 ** 31 and launch.grid[1] < 65536, b.name


@needs_nvcc
def test_suite_covers_instruction_groups_and_state_spaces(manifest, compiled):
    """The executed instruction mix spans what the suite promises: every group that does work, every state
    space, f16/f32/f64 and integer types, tensor-core mma and cp.async."""
    by_path = compiled["sm_90"]
    groups: Counter[str] = Counter()
    opcodes: set[str] = set()
    types: set[str] = set()
    for b in manifest.benchmarks:
        for ins in by_path[b.source].module.function(b.kernel).instructions:
            groups[ins.info.group] += 1
            opcodes.add(ins.opcode.split(".")[0])
            types.add(ins.info.dtype)
    for group in (isa.INT, isa.FP16, isa.FP32, isa.FP64, isa.SPECIAL, isa.LOGIC, isa.COMPARE, isa.MOVE, isa.CONTROL,
                  isa.SYNC, isa.MEM_GLOBAL, isa.MEM_SHARED, isa.MEM_LOCAL, isa.MEM_CONST, isa.MEM_PARAM, isa.ATOMIC,
                  isa.WARP, isa.TENSOR, isa.ASYNC):
        assert groups[group] > 0, group
    for op in ("mma", "wmma", "cp", "shfl", "vote", "match", "redux", "atom", "red", "bar", "membar", "call",
               "ex2", "sin", "lg2", "rsqrt", "tanh", "div", "rem", "popc", "prmt", "bfe", "bfi"):
        assert op in opcodes, op
    assert {"f16x2", "bf16x2", "f32", "f64", "s32", "u32", "u64"} <= types


def test_manifest_errors_are_clear(tmp_path):
    bad = tmp_path / "m.json"
    (tmp_path / "k.cu").write_text("extern \"C\" __global__ void k() {}\n")
    cases = {
        "{": "cannot read the manifest",
        '{"benchmarks": [{"name": "a", "source": "missing.cu", "launches": [{}]}]}': "no source file",
        '{"benchmarks": [{"name": "a", "source": "k.cu", "launches": []}]}': "non-empty list of launches",
        '{"benchmarks": [{"name": "a", "source": "k.cu", "launches": [{"grid": [0]}]}]}': "bad dimensions",
        '{"benchmarks": [{"name": "a", "source": "k.cu", "launches": [{}, {}]}]}': "listed twice",
        '{"benchmarks": [{"name": "a", "source": "k.cu", "launches": [{}]}, '
        '{"name": "a", "source": "k.cu", "launches": [{}]}]}': "listed twice: a",
    }
    for text, message in cases.items():
        bad.write_text(text)
        with pytest.raises(PtxstaticError, match=message):
            load_manifest(bad)


def test_only_selects_by_pattern(manifest):
    assert {b.name for b in manifest.select("fp64_*,ai_f64_k1")} == {
        b.name for b in manifest.benchmarks if b.name.startswith("fp64_")} | {"ai_f64_k1"}
    with pytest.raises(PtxstaticError, match="no benchmark matches"):
        manifest.select("nothing_like_this*")


def test_compile_error_is_reported_per_source(tmp_path):
    """A .ptx source that does not parse is an error for that source only."""
    good = tmp_path / "good.ptx"
    good.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n")
    broken = tmp_path / "broken.ptx"
    broken.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n{\n")
    results = compile_all([good, broken], "sm_80")
    assert isinstance(results[good], CompiledSource) and results[good].kernel_names() == ["k"]
    assert isinstance(results[broken], PtxstaticError)
