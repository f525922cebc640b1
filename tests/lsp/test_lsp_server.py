"""``ptxstatic lsp`` end to end: pytest-lsp speaks LSP to the server in a subprocess over stdio.

The inputs are tests/data/lsp/kernels.cu (a barrier under a thread-dependent branch, PS201; a streaming
loop; an arithmetic loop) and the PTX nvcc made from it. Expected diagnostics are what ``check``'s
per-file step finds on the same file; expected hover numbers are what ``predict`` gives for the kernel.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient
from support.lsp import (
    LSP_DATA,
    config,
    copy_data,
    hover,
    line_of,
    open_document,
    path_without,
    published,
    replace_text,
    start,
)
from support.paths import needs_nvcc

from ptxstatic.config import config_for
from ptxstatic.lint.document import analyse_document
from ptxstatic.predict import load_models, predict_module
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule

pytestmark = pytest.mark.asyncio


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=config(PATH=path_without("nvcc")))
async def client_without_nvcc(lsp_client: LanguageClient, tmp_path: Path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


def _ps201(diagnostics) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.code == "PS201"]


@needs_nvcc
async def test_cu_diagnostics_are_checks_findings(client: LanguageClient, tmp_path: Path):
    path = copy_data("kernels.cu", tmp_path)
    uri = open_document(client, path)
    got = (await published(client, uri, 1)).diagnostics
    expected = analyse_document(path, config_for(path)).findings
    assert expected, "check finds the barrier under divergence"
    assert {(d.code, d.range.start.line + 1) for d in got} == {(f.code, f.source.line) for f in expected}
    barrier = _ps201(got)[0]
    assert barrier.range.start.line == line_of(path.read_text(), "__syncthreads()")
    assert barrier.severity == types.DiagnosticSeverity.Warning and barrier.source == "ptxstatic"
    page = Path(barrier.code_description.href.removeprefix("file://"))
    assert page.name == "PS201.md" and page.read_text() == get_rule("PS201").doc
    condition = barrier.related_information[0].location
    assert condition.uri == uri and condition.range.start.line == line_of(path.read_text(), "if (threadIdx.x < 16)")


@needs_nvcc
async def test_quick_fix_adds_the_suppression_comment_that_silences_the_finding(client: LanguageClient, tmp_path):
    path = copy_data("kernels.cu", tmp_path)
    uri = open_document(client, path)
    barrier = _ps201((await published(client, uri, 1)).diagnostics)[0]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), barrier.range, types.CodeActionContext([barrier])))
    assert [a.title for a in actions] == ["Ignore PS201 on this line (// ptxstatic: ignore[PS201])"]
    (edit,) = actions[0].edit.changes[uri]
    lines = path.read_text().splitlines(keepends=True)
    n = edit.range.start.line
    line = lines[n]
    lines[n] = line[:edit.range.start.character] + edit.new_text + line[edit.range.end.character:]
    assert lines[n].rstrip().endswith("__syncthreads();  // ptxstatic: ignore[PS201]")
    replace_text(client, uri, "".join(lines), 2)
    assert _ps201((await published(client, uri, 2)).diagnostics) == []


def _prediction(kernel: str) -> dict:
    (d,) = predict_module(parse_file(LSP_DATA / "kernels.ptx"), load_models(), kernel=kernel)
    return d


def _check_hover_numbers(text: str, kernel: str) -> None:
    d = _prediction(kernel)
    best = d["min_energy"]
    assert f"**{kernel}** on {d['gpu']}" in text
    assert f"Minimum energy at mem {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz" in text
    assert f"saves {100 * best['saving']:.1f} %" in text
    assert f"{100 * (best['time_scaling'] - 1):.1f} % slower" in text
    share = d["quantities"]["time_memory"]
    assert f"{'Memory' if share >= 0.5 else 'Compute'}-bound: memory-bound share {share:.2f}" in text
    assert f"| minimum energy {best['f_mem_mhz']}/{best['f_core_mhz']} | {best['time_scaling']:.3f}" in text


async def test_hover_on_a_ptx_entry(client: LanguageClient, tmp_path: Path):
    path = LSP_DATA / "kernels.ptx"
    uri = open_document(client, path)
    await published(client, uri, 1)
    text = path.read_text()
    for kernel in ("polynomial", "stream_add"):
        result = await hover(client, uri, line_of(text, f".entry {kernel}("))
        _check_hover_numbers(result.contents.value, kernel)
    # the loop of polynomial (kernels.cu lines 26-28) is its hottest code
    source = (LSP_DATA / "kernels.cu").read_text().splitlines()
    loop = [n for n, s in enumerate(source, 1) if "for (int s" in s or s.strip().startswith("v = v")]
    result = await hover(client, uri, line_of(text, ".entry polynomial("))
    hottest = result.contents.value.split("Hottest blocks")[1].splitlines()[1]
    assert f"kernels.cu:{loop[0]}–{loop[-1]}" in hottest and "loop depth 1" in hottest
    assert await hover(client, uri, line_of(text, ".target")) is None


@needs_nvcc
async def test_hover_on_a_cuda_kernel(client: LanguageClient, tmp_path: Path):
    path = copy_data("kernels.cu", tmp_path)
    uri = open_document(client, path)
    await published(client, uri, 1)
    result = await hover(client, uri, line_of(path.read_text(), "void polynomial("))
    _check_hover_numbers(result.contents.value, "polynomial")
    source = path.read_text().splitlines()
    loop = [n for n, s in enumerate(source, 1) if "for (int s" in s or s.strip().startswith("v = v")]
    assert f"loop depth 1 — lines {loop[0]}–{loop[-1]}" in result.contents.value


def _children(pid: int, name: str) -> list[int]:
    """Processes named ``name`` whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if comm == name and int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


def _many_kernels(n: int) -> str:
    """A CUDA file nvcc takes seconds to compile."""
    return "\n".join(f'extern "C" __global__ void k{i}(float* x, int n) {{ float v = x[threadIdx.x]; '
                     f"for (int j = 0; j < n; ++j) v = sinf(v) * {i}.5f + cosf(v * j); x[threadIdx.x] = v; }}"
                     for i in range(n))


@needs_nvcc
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the server's nvcc")
async def test_a_newer_edit_cancels_the_compile_and_requests_are_answered_meanwhile(client, tmp_path):
    ptx = open_document(client, LSP_DATA / "kernels.ptx")
    await published(client, ptx, 1)
    path = tmp_path / "slow.cu"
    path.write_text(_many_kernels(600))
    uri = open_document(client, path)
    server = client._server.pid
    deadline = time.monotonic() + 30
    while not _children(server, "nvcc") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _children(server, "nvcc"), "nvcc compiles the first version"
    asked = time.monotonic()
    answer = await hover(client, ptx, line_of((LSP_DATA / "kernels.ptx").read_text(), ".entry polynomial("))
    assert answer is not None and time.monotonic() - asked < 5.0
    assert _children(server, "nvcc"), "the hover was answered while nvcc ran"
    replace_text(client, uri, (LSP_DATA / "kernels.cu").read_text(), 2)
    diagnostics = (await published(client, uri, 2)).diagnostics
    assert _ps201(diagnostics)
    assert not _children(server, "nvcc"), "the first version's compile was killed"
    assert [p.version for p in client.published if p.uri == uri] == [2]
    assert any(f"{uri} (version 1) cancelled" in m.message for m in client.log_messages)


async def test_without_nvcc_a_cuda_file_gets_a_message_and_the_server_keeps_serving(client_without_nvcc, tmp_path):
    client = client_without_nvcc
    uri = open_document(client, copy_data("kernels.cu", tmp_path))
    (problem,) = (await published(client, uri, 1)).diagnostics
    assert "nvcc is not on the PATH" in problem.message and problem.severity == types.DiagnosticSeverity.Error
    assert any("nvcc is not on the PATH" in m.message for m in client.messages)
    ptx = open_document(client, LSP_DATA / "kernels.ptx")
    assert (await published(client, ptx, 1)).diagnostics is not None
    assert await hover(client, ptx, line_of((LSP_DATA / "kernels.ptx").read_text(), ".entry stream_add(")) is not None


@needs_nvcc
async def test_a_file_that_does_not_compile_gets_nvccs_error_at_its_line(client: LanguageClient, tmp_path: Path):
    path = copy_data("kernels.cu", tmp_path)
    text = path.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + undeclared;")
    uri = open_document(client, path, text)
    (error,) = (await published(client, uri, 1)).diagnostics
    assert error.severity == types.DiagnosticSeverity.Error and "undeclared" in error.message
    assert error.range.start.line == line_of(text, "undeclared")
    replace_text(client, uri, path.read_text(), 2)
    assert _ps201((await published(client, uri, 2)).diagnostics)



@needs_nvcc
async def test_a_cu_file_is_compiled_with_its_compile_commands_flags(client: LanguageClient, tmp_path: Path):
    built, plain = tmp_path / "built", tmp_path / "plain"
    for d in (built / "src", plain):
        d.mkdir(parents=True)
    (built / "compile_commands.json").write_text(json.dumps([{
        "directory": str(built), "file": "src/guarded.cu",
        "command": "nvcc -arch=sm_80 -lineinfo -DWITH_BARRIER -c src/guarded.cu -o guarded.o"}]))
    with_flags = open_document(client, copy_data("guarded.cu", built / "src"))
    without = open_document(client, copy_data("guarded.cu", plain))
    (barrier,) = _ps201((await published(client, with_flags, 1)).diagnostics)
    assert barrier.range.start.line == line_of((LSP_DATA / "guarded.cu").read_text(), "__syncthreads()")
    assert not (await published(client, without, 1)).diagnostics


async def test_hover_predicts_the_configured_launch(client: LanguageClient, tmp_path: Path):
    (tmp_path / "ptxstatic.toml").write_text("launch = { grid = 120, block = 256, args = { 3 = 1048576 } }\n")
    path = copy_data("kernels.ptx", tmp_path)
    uri = open_document(client, path)
    await published(client, uri, 1)
    text = path.read_text()
    launch = config_for(path).launch
    (d,) = predict_module(parse_file(LSP_DATA / "kernels.ptx"), load_models(), launch, kernel="stream_add")
    shown = (await hover(client, uri, line_of(text, ".entry stream_add("))).contents.value
    absolute = d["absolute"]
    bound = {"core": "Core", "dram": "DRAM", "l2": "L2", "l1": "L1"}[absolute["bound"]]
    assert f"{bound}-bound at F_max by the bottleneck estimate: {absolute['time_ms']:.4g} ms" in shown
    assert f"memory-bound share {absolute['memory_share']:.2f}" in shown
    assert "from static block counts of the configured launch" in shown
    # polynomial has no parameter 3: it is shown without the launch, saying why
    shown = (await hover(client, uri, line_of(text, ".entry polynomial("))).contents.value
    assert "Shown without a launch: the configured launch does not fit: kernel polynomial has no parameter '3'" in shown
    _check_hover_numbers(shown, "polynomial")


@needs_nvcc
async def test_saving_a_header_analyses_the_open_files_that_include_it_again(client: LanguageClient, tmp_path):
    header = tmp_path / "exchange.cuh"
    header.write_text("__device__ inline void exchange(float* tile) { tile[threadIdx.x] += 1.0f; }\n")
    source = tmp_path / "user.cu"
    source.write_text('#include "exchange.cuh"\n'
                      'extern "C" __global__ void user(float* out)\n{\n    __shared__ float tile[256];\n'
                      "    if (threadIdx.x < 32) {\n        exchange(tile);\n        out[threadIdx.x] = tile[0];\n"
                      "    }\n}\n")
    uri = open_document(client, source)
    assert not _ps201((await published(client, uri, 1)).diagnostics)
    header_uri = open_document(client, header)
    await published(client, header_uri, 1)
    before = len(client.published)
    header.write_text("__device__ inline void exchange(float* tile) { tile[threadIdx.x] += 1.0f; __syncthreads(); }\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(header_uri)))
    deadline = time.monotonic() + 120
    while not any(p.uri == uri for p in client.published[before:]) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    again = next(p for p in client.published[before:] if p.uri == uri)
    (barrier,) = _ps201(again.diagnostics)
    assert barrier.range.start.line == line_of(source.read_text(), "exchange(tile);")  # the call site in user.cu


async def test_a_bad_configuration_is_a_diagnostic_and_a_message_until_it_is_fixed(client: LanguageClient, tmp_path):
    config = tmp_path / "ptxstatic.toml"
    config.write_text('select = ["PS201"]\nfail-on = "loud"\n')
    path = copy_data("kernels.ptx", tmp_path)
    uri = open_document(client, path)
    (problem,) = (await published(client, uri, 1)).diagnostics
    assert problem.severity == types.DiagnosticSeverity.Error and f"{config}:2:" in problem.message
    assert any(f"{config}:2:" in m.message for m in client.messages)
    config.write_text('select = ["PS201"]\nfail-on = "error"\n')
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    deadline = time.monotonic() + 60
    while len([p for p in client.published if p.uri == uri]) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    fixed = [p for p in client.published if p.uri == uri][-1]
    assert [d.code for d in fixed.diagnostics] == ["PS201"]
