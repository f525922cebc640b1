"""Every PTX in the corpus parses; the fast parser agrees with the grammar run over whole files; printing
the AST back gives PTX that reparses to the same AST and that ptxas assembles (to the same cubin when the
file carries no line information)."""

from __future__ import annotations

import filecmp
import subprocess
import tempfile
from pathlib import Path

import pytest
from support.paths import CUDA_SOURCES, corpus_files, needs_ptxas, ptx_arch

from ptxstatic.ptx import parse_file, parse_reference, parse_text
from ptxstatic.ptx.printer import module as print_module

FILES = corpus_files()
ids = [str(p.relative_to(p.parents[3])) if len(p.parents) > 3 else p.name for p in FILES]


def test_corpus_is_there():
    assert len(FILES) >= 100, "the PTX fixtures are missing: see tests/data/fixtures/README.md"
    producers = {p.relative_to(p.parents[0].parents[0]).parts[0] for p in FILES}
    assert {"nvcc", "llvm", "manual"} <= {p.parts[len(p.parts) - len(p.relative_to(p.parents[2]).parts) - 1]
                                          for p in FILES} | producers | {q.name for p in FILES for q in p.parents}


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_parses_and_agrees_with_grammar(path: Path):
    text = path.read_text()
    fast = parse_file(path)
    assert fast.functions, "no functions found"
    assert fast == parse_reference(text, str(path))
    assert sum(len(f.instructions) for f in fast.functions if f.body) > 0


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_round_trip(path: Path):
    m = parse_file(path)
    assert parse_text(print_module(m), "reprinted") == m


@needs_ptxas
@pytest.mark.parametrize("path", FILES, ids=ids)
def test_ptxas_accepts_reprinted(path: Path):
    text = path.read_text()
    arch = ptx_arch(text)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "reprinted.ptx"
        out.write_text(print_module(parse_text(text, str(path))))
        proc = subprocess.run(["ptxas", f"-arch={arch}", str(out), "-o", f"{tmp}/b.cubin"],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        if ".loc" not in text and ", debug" not in text:
            subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", f"{tmp}/a.cubin"], check=True)
            assert filecmp.cmp(f"{tmp}/a.cubin", f"{tmp}/b.cubin", shallow=False), "different machine code"


@pytest.mark.parametrize("variant", ["", "-lineinfo", "-G"])
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_fresh_nvcc_output_parses(arch: str, variant: str, build_ptx):
    """The local nvcc's PTX for every test source, whatever its version, parses and agrees with the grammar."""
    sources = [p for p in sorted(CUDA_SOURCES.glob("*.cu")) if p.name != "unrolled.cu"]
    assert len(sources) >= 10
    for src in sources[:: 3 if variant == "-G" else 1]:
        built = build_ptx(src, arch, variant.split(), validate=False)
        assert built.module.kernels
        if variant != "-G":  # the grammar over whole -G files is slow; the corpus test covers them
            assert built.module == parse_reference(built.text, str(src))


def test_llvmlite_nvptx_output_parses():
    """PTX from llvmlite's NVPTX back end, generated now from IR written here."""
    llvm = pytest.importorskip("llvmlite.binding")
    ir = """
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define void @scale(ptr addrspace(1) %p, float %s, i32 %n) {
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %loop
loop:
  %k = phi i32 [ %i, %entry ], [ %k2, %loop ]
  %q = getelementptr float, ptr addrspace(1) %p, i32 %k
  %v = load float, ptr addrspace(1) %q
  %w = fmul float %v, %s
  store float %w, ptr addrspace(1) %q
  %k2 = add i32 %k, 32
  %c = icmp slt i32 %k2, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @scale, !"kernel", i32 1}
"""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    mod = llvm.parse_assembly(ir)
    tm = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(cpu="sm_80")
    ptx = tm.emit_assembly(mod)
    m = parse_text(ptx, "llvmlite")
    assert [f.name for f in m.functions] == ["scale"]
    assert m == parse_reference(ptx)
    from ptxstatic.analysis.cfg import build_cfg

    assert len(build_cfg(m.functions[0]).loops) == 1
