"""nvcc's PTX for every target a user may build for: each CUDA source of ``microbenchmarks/``, ``tests/data/cuda/`` and
``tests/data/validate/``, compiled by the local nvcc for each of :data:`TARGETS`, is accepted by ``ptxstatic analyze``
whenever ptxas accepts it (``tests/data/validate/targets.cu`` holds the conversions and packed arithmetic whose PTX
differs most between targets; its PTX for three of them is committed, so that its test runs without nvcc too)."""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import CUDA_SOURCES, DATA, ROOT, needs_ptxas

from ptxstatic.cli.main import cli
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.validate import check, validate_module

TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120")
#: a 26,000-line straight-line kernel that takes cicc minutes per target (its PTX, one FMA chain of loads, does
#: not change with the target; its sm_90 PTX is the parse benchmark's fixture, which the corpus tests validate)
SLOW_TO_COMPILE = {"unrolled.cu"}
#: the sources that nvcc compiles for sm_80 and later only
NEED_SM80 = {"fp16.cu", "tensor.cu", "warp.cu"}
_FLAGS_NOTE = re.compile(r"^//\s*NVCC-FLAGS\s*:\s*(.+?)\s*$", re.M)  # as tests/data/fixtures/regenerate.py reads it


def sources() -> list[Path]:
    found = [*(ROOT / "microbenchmarks").glob("*.cu"), *CUDA_SOURCES.glob("*.cu"), *(DATA / "validate").glob("*.cu")]
    return sorted(p for p in found if p.name not in SLOW_TO_COMPILE)


def nvcc_targets() -> list[str]:
    """The targets of :data:`TARGETS` the local nvcc compiles for (``sm_90a`` where it lists ``sm_90``)."""
    listed = subprocess.run(["nvcc", "--list-gpu-code"], capture_output=True, text=True, check=True).stdout.split()
    return [t for t in TARGETS if t.rstrip("af") in listed]


def compile_and_assemble(src: Path, arch: str, out: Path, build_ptx) -> tuple[str, str]:
    """(the PTX file, '') of ``src`` for ``arch`` when ptxas assembles it, ('', why) when nvcc or ptxas refuses."""
    note = _FLAGS_NOTE.search(src.read_text())
    try:
        built = build_ptx(src, arch, note[1].split() if note else [], validate=False)
    except PtxstaticError as exc:
        return "", f"nvcc: {exc}"
    ptx = out / f"{src.parent.name}_{src.stem}_{arch}.ptx"
    ptx.write_text(built.text)
    proc = subprocess.run(["ptxas", f"-arch={arch}", str(ptx), "-o", str(ptx.with_suffix(".cubin"))],
                          capture_output=True, text=True, timeout=300)
    return (str(ptx), "") if proc.returncode == 0 else ("", f"ptxas: {proc.stderr.strip()}")


@pytest.mark.slow
@needs_ptxas
def test_what_ptxas_assembles_analyze_accepts_for_every_target(build_ptx, tmp_path, monkeypatch):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH: CUDA sources cannot be compiled here")
    monkeypatch.chdir(tmp_path)  # cicc given switches.cu's -Xllc option writes a file named llc where it runs
    targets = nvcc_targets()
    jobs = [(src, arch) for arch in targets for src in sources()]
    with ThreadPoolExecutor(4) as pool:
        built = list(pool.map(lambda job: compile_and_assemble(*job, tmp_path, build_ptx), jobs))
    runner = CliRunner()
    counts = {arch: [0, 0] for arch in targets}  # PTX files ptxas assembles, of those analyze accepts
    refused, not_built = [], []
    for (src, arch), (ptx, why) in zip(jobs, built, strict=True):
        if not ptx:
            not_built.append((src.name, arch, why))
            continue
        result = runner.invoke(cli, ["analyze", ptx])
        counts[arch][0] += 1
        counts[arch][1] += result.exit_code == 0
        if result.exit_code:
            refused.append(f"{src.relative_to(ROOT)} for {arch}: {result.output.strip().splitlines()[-3:]}")
    assert not refused, "\n".join(refused)
    # what does not build: the sources that need sm_80 (bf16 arithmetic, tf32 fragments, __reduce_add_sync)
    assert {(name, arch) for name, arch, _ in not_built} <= {(n, "sm_75") for n in NEED_SM80}, not_built
    print({arch: f"{n} assembled, {ok} accepted" for arch, (n, ok) in counts.items()})


@pytest.mark.parametrize("arch", ["sm89", "sm100a", "sm120"])
def test_the_conversions_of_each_target_are_valid(arch):
    """fp8, fp6, fp4 and e8m0 conversions, tf32 and bf16 rounding and float2 arithmetic, as nvcc 13 wrote them."""
    path = DATA / "validate" / f"targets_{arch}.ptx"
    assert validate_module(parse_file(path)).errors == []
    text = path.read_text()
    assert "cvt.rna.tf32.f32" in text and "cvt.rn.bf16x2.f32" in text and "cvt.rn.satfinite.e4m3x2.f32" in text
    assert ("cvt.rn.satfinite.e2m1x2.f32" in text) == (arch == "sm100a")
    assert ("fma.rn.f32x2" in text) == (arch != "sm89")


@pytest.mark.parametrize(("instruction", "target", "message"), [
    ("cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;", "sm_86", "requires .target sm_89 or later"),
    ("cvt.rn.e4m3x2.f32 %rs1, %f1, %f2;", "sm_90", "needs .satfinite"),
    ("cvt.rn.satfinite.e2m1x2.f32 %rs1, %f1, %f2;", "sm_120", "requires .target sm_100a or later"),
    ("cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;", "sm_120a", "requires .target sm_100a, sm_103a"),
    ("cvt.rna.tf32.f32 %r1, %f1;", "sm_75", "requires .target sm_80 or later"),
    ("cvt.rn.tf32.f32 %r1, %f1;", "sm_80", "requires .target sm_90 or later"),
    ("cvt.rm.f16x2.f32 %r1, %f1, %f2;", "sm_80", "rounding .rm is not allowed"),
    ("cvt.rn.f16x2.f32 %r1, %f1;", "sm_80", "takes 3 operand(s), found 2"),
    ("cvt.rn.f32.f16 %f1, %rs1;", "sm_80", "not allowed for cvt from .f16 to .f32"),
    ("cvt.u32.b32 %r1, %r2;", "sm_80", "type .b32 is not allowed for 'cvt'"),
    ("cvt.rn.f16x2.f16x2 %r1, %r2;", "sm_80", "cvt does not convert .f16x2 to .f16x2"),
    ("add.rn.f32x2 %rd1, %rd2, %rd3;", "sm_90", "'.f32x2' requires .target sm_100 or later"),
    ("wgmma.fence.sync.aligned;", "sm_100a", "requires .target sm_90a (the module targets sm_100a)"),
    ("tcgen05.fence::before_thread_sync;", "sm_120a", "requires .target sm_100a, sm_100f"),
    ("mov.u32 %r1, %clusterid.x;", "sm_89", "%clusterid.x requires .target sm_90"),
])
def test_what_a_target_lacks_is_refused_as_ptxas_refuses_it(instruction, target, message, tmp_path):
    """Each of these is refused by validation with its reason, and by ptxas 13 for that target where it is here."""
    text = (f".version 9.0\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n"
            ".reg .b16 %rs<3>;\n.reg .b32 %r<3>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<4>;\n"
            f"{instruction}\nret;\n}}\n")
    src = tmp_path / "case.ptx"
    src.write_text(text)
    with pytest.raises(SourceError, match=re.escape(message)):
        check(parse_file(src), text)
    if shutil.which("ptxas"):
        proc = subprocess.run(["ptxas", f"-arch={target}", str(src), "-o", str(tmp_path / "case.cubin")],
                              capture_output=True, text=True)
        assert proc.returncode != 0, f"ptxas accepts {instruction} on {target}"
