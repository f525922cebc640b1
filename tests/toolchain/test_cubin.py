"""What ``ptxas -v`` reports, read from a cubin that ptxas wrote without ``-v``: on every committed PTX fixture,
assembled as nvcc assembles it (``--generate-line-info`` where the PTX has line information), the cubin gives
the same resources as ``ptxas -v`` wherever it answers, and answers nothing where it cannot tell (a stack frame
that may hold spills, a relocatable cubin, bytes that are no cubin)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.paths import DATA, corpus_files, needs_ptxas, ptx_arch

from ptxstatic.features.resources import kernel_resources
from ptxstatic.loader import load_module
from ptxstatic.toolchain.cubin import cubin_stats
from ptxstatic.toolchain.ptxas import unassemblable

pytestmark = needs_ptxas

LOCAL_MEMORY = DATA / "check" / "local_memory.ptx"  # a per-thread array ptxas keeps in a stack frame


def _assemble(ptx: Path, arch: str, out: Path, *extra: str) -> bytes | None:
    line_info = ["--generate-line-info"] if "\n.loc" in ptx.read_text() or "\t.loc" in ptx.read_text() else []
    done = subprocess.run(["ptxas", f"-arch={arch}", *line_info, *extra, str(ptx), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    return out.read_bytes() if done.returncode == 0 else None


def _fields(r) -> tuple:
    return r.registers, r.shared_bytes, r.stack_frame, r.spill_stores, r.spill_loads, r.estimated


def _readable() -> list[Path]:
    out = []
    for path in corpus_files():
        arch = ptx_arch(path.read_text())
        module = load_module(str(path)).module
        if unassemblable(arch, arch) is None and any(f.body is not None for f in module.functions):
            out.append(path)
    return out


READABLE = _readable()


@pytest.mark.parametrize("path", READABLE, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_the_cubin_tells_what_ptxas_v_does(path: Path, tmp_path: Path):
    arch = ptx_arch(path.read_text())
    module = load_module(str(path)).module
    cubin = _assemble(path, arch, tmp_path / "out.cubin")
    if cubin is None:
        pytest.skip(f"ptxas does not assemble {path.name} for {arch}")
    read = cubin_stats(cubin, module, arch)
    verbose = kernel_resources(module, arch)
    if read is None:  # then it had a reason: a stack frame somewhere
        assert any(r.stack_frame for r in verbose.values()) or any(
            f.body is not None and not f.is_kernel and f.name not in verbose for f in module.functions)
        return
    from_cubin = kernel_resources(module, arch, cubin=cubin)
    assert {n: r.source for n, r in from_cubin.items()} == {n: f"ptxas -arch={arch}" for n in read}
    for name in set(from_cubin) | set(verbose):
        fn = next(f for f in module.functions if f.name == name)
        if name not in from_cubin or name not in verbose:  # a device function ptxas inlined everywhere
            assert not fn.is_kernel
            assert not any(i.info.space == "local" for i in fn.instructions)
            assert name not in verbose or not verbose[name].stack_frame
            continue
        assert _fields(from_cubin[name]) == _fields(verbose[name]), name


def test_most_fixtures_are_read_from_their_cubin(tmp_path: Path):
    read = 0
    for i, path in enumerate(READABLE):
        arch = ptx_arch(path.read_text())
        cubin = _assemble(path, arch, tmp_path / f"{i}.cubin")
        read += cubin is not None and cubin_stats(cubin, load_module(str(path)).module, arch) is not None
    assert read >= 0.6 * len(READABLE), (read, len(READABLE))


def test_a_stack_frame_asks_ptxas(tmp_path: Path):
    module = load_module(str(LOCAL_MEMORY)).module
    arch = ptx_arch(LOCAL_MEMORY.read_text())
    cubin = _assemble(LOCAL_MEMORY, arch, tmp_path / "out.cubin")
    assert cubin_stats(cubin, module, arch) is None
    resources = kernel_resources(module, arch, cubin=cubin)
    assert any(r.stack_frame for r in resources.values())
    assert {r.source for r in resources.values()} == {f"ptxas -v -arch={arch}"}


def test_what_is_no_whole_program_cubin_answers_nothing(tmp_path: Path):
    path = DATA / "fixtures" / "ptx" / "nvcc" / "sm_90" / "plain" / "shared.ptx"
    module = load_module(str(path)).module
    arch = ptx_arch(path.read_text())
    relocatable = _assemble(path, arch, tmp_path / "rel.cubin", "-c")
    whole = _assemble(path, arch, tmp_path / "out.cubin")
    assert cubin_stats(whole, module, arch) is not None
    assert cubin_stats(relocatable, module, arch) is None
    assert cubin_stats(whole[: len(whole) // 2], module, arch) is None
    assert cubin_stats(b"not an ELF file", module, arch) is None
