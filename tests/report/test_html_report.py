"""``ptxstatic report``: the page of the ten-kernel file holds every kernel's prediction (the numbers of
``predict``), its block graph with the static counts and loops, its findings with the rule page, the model
card and the source lines blocks link to; nothing on it is fetched; the command's output and bad input."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support.check import env
from support.paths import DATA, ROOT, needs_nvcc
from support.report import KERNELS_CU, KERNELS_PTX, LAUNCH, Built, blocks_outside

from ptxstatic.config import Config
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.features.intensity import DEFAULT_TRIPS
from ptxstatic.predict import predict_module
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file
from ptxstatic.report.block_graph import block_graph_svg, dot_source
from ptxstatic.report.file_report import file_report
from ptxstatic.report.html_page import render_report

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not on the PATH")
KERNELS = ["saxpy", "stream_copy", "fma_chain", "block_sum", "matmul_tiled", "histogram", "transpose", "stencil_1d",
           "sfu_mix", "tail_barrier"]


class Anchors(HTMLParser):
    """Every id, every link and every attribute that names a URL, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.urls: list[str] = []
        self.sections: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.add(value)
            elif name in ("href", "xlink:href"):
                self.links.append(value)
            if name in ("src", "href", "xlink:href", "srcset", "data") or "url(" in value:
                self.urls.append(value)
            if name == "data-kernel":
                self.sections.append(value)


def _anchors(html: str) -> Anchors:
    parser = Anchors()
    parser.feed(html)
    return parser


def _section(html: str, kernel: str) -> str:
    start = html.index(f'data-kernel="{kernel}"')
    end = html.find('<section class="kernel"', start)
    return html[start:end if end > 0 else len(html)]


def test_a_section_per_kernel_with_the_numbers_of_predict(built: Built, models):
    assert _anchors(built.html).sections == KERNELS
    module = parse_file(str(KERNELS_PTX))
    expected = {p["kernel"]: p for p in predict_module(module, models, LAUNCH)}
    for k in built.report.kernels:
        got, want = dict(k.prediction), dict(expected[k.name])
        got.pop("file"), want.pop("file")
        assert got == want
        section = _section(built.html, k.name)
        best = want["min_energy"]
        assert f"memory {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz" in section
        assert section.count('<figure class="plot tradeoff"><svg') == 1
        assert section.count('<table class="heatmap"') == 3
        assert section.count('<td class="f_mem_mhz">') == len(want["configs"]) == 32
        first = want["configs"][0]
        assert f'<td class="energy_scaling">{first["energy_scaling"]:.3f}</td>' in section


def test_the_default_clocks_are_marked(built: Built):
    assert built.report.default_clocks == (3505, 975)
    for k in built.report.kernels:
        section = _section(built.html, k.name)
        assert "default clocks (3505/975)" in section  # the plot's legend
        assert section.count('data-clocks="3505/975" class=" default"') + section.count(
            'data-clocks="3505/975" class="best default"') == 3  # one cell in each heatmap


def test_blocks_carry_the_static_counts_and_loops(built: Built):
    module = parse_file(str(KERNELS_PTX))
    matmul = next(k for k in built.report.kernels if k.name == "matmul_tiled")
    counts = estimate_counts(bind(module, "matmul_tiled", LAUNCH)).counts.of("matmul_tiled")
    assert {b.id: b.count for b in matmul.blocks} == counts
    in_loop = [b for b in matmul.blocks if b.loop_depth == 1]
    assert len(in_loop) == 1
    assert counts[in_loop[0].id] == max(counts.values())
    dot = dot_source(matmul, lambda b: None, "m")
    assert dot.count("subgraph cluster_loop") == len(matmul.graph.loops) == 1
    assert dot.count('label="back"') == len(matmul.graph.back_edges)


def test_blocks_link_to_their_cu_lines(built: Built):
    page = _anchors(built.html)
    source = KERNELS_CU.read_text().splitlines()
    assert list(built.report.sources) == [str(KERNELS_CU.relative_to(ROOT))]
    fma = next(k for k in built.report.kernels if k.name == "fma_chain")
    loop = next(b for b in fma.blocks if b.loop_depth == 1)
    assert any("fmaf" in source[line - 1] for line in loop.source_lines)
    for k in built.report.kernels:
        for b in k.blocks:
            if b.source_lines:
                assert f"#src0-L{b.source_lines[0]}" in page.links
    internal = [link for link in page.links if link.startswith("#")]
    assert internal and all(link[1:] in page.ids for link in internal)


def test_nothing_is_fetched_when_the_page_is_viewed(built: Built):
    page = _anchors(built.html)
    outside = [u for u in page.urls if not u.startswith(("#", "url(#"))]
    assert page.urls and not outside, outside
    assert not re.search(r"<(script|link|img|iframe)\b", built.html)


def test_findings_come_with_their_rule_page(built: Built):
    barrier = next(k for k in built.report.kernels if k.name == "tail_barrier")
    [finding] = [f for f in barrier.findings if f.code == "PS201"]
    lines = KERNELS_CU.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "PS201" in text and "__syncthreads" in text)
    assert finding.source is not None and finding.source.line == line
    section = _section(built.html, "tail_barrier")
    assert "<h1>PS201 barrier-under-divergence</h1>" in section and "<h2>What it detects</h2>" in section
    assert all(f.code != "PS201" for k in built.report.kernels if k.name != "tail_barrier" for f in k.findings)
    for k in built.report.kernels:  # every reported rule's page is in the kernel's section
        for code in {f.code for f in k.findings}:
            assert f"<summary>Rule {code}</summary>" in _section(built.html, k.name)


def test_the_model_card_summary(built: Built, models):
    card = models.dvfs.card
    model = built.html[built.html.index('<section id="model">'):]
    assert f"Trained on {card['training_data']['samples']} samples" in model
    family = card["evaluation"]["family_cv"]["scaling"]
    assert f"<td>{family['time']['mape']:.1f}</td>" in model
    validation = card["evaluation"]["validation"]["scaling"]
    assert f"<td>{validation['energy']['mape']:.1f}</td>" in model


@pytest.mark.parametrize("use_dot", [pytest.param(True, marks=needs_dot), False], ids=["dot", "networkx"])
def test_block_graph_svg(built: Built, use_dot: bool):
    kernel = next(k for k in built.report.kernels if k.name == "matmul_tiled")
    svg = block_graph_svg(kernel, lambda b: f"#line{b.id}", "g", use_dot=use_dot)
    assert svg.startswith("<svg")
    for b in kernel.blocks:
        assert f'id="g_b{b.id}"' in svg
        assert re.search(rf'xlink:href="#line{b.id}"', svg)


@pytest.mark.parametrize("use_dot", [pytest.param(True, marks=needs_dot), False], ids=["dot", "networkx"])
@pytest.mark.parametrize("ptx", [KERNELS_PTX, DATA / "rules" / "ptx" / "lineinfo" / "ps201_barrier.ptx"],
                         ids=["report-kernels", "divergent-barriers"])
def test_every_block_is_drawn_inside_the_graph(models, use_dot: bool, ptx: Path):
    """Each block's box lies inside the drawing, for every kernel of the report's file and of the
    divergent-barrier kernels (before, without dot, 0 of matmul_tiled's 4 blocks and 1 of 7 were inside)."""
    with contextlib.chdir(ROOT):
        report = file_report(str(ptx.relative_to(ROOT)), Config(), models, None)
    for kernel in report.kernels:
        svg = block_graph_svg(kernel, lambda b: None, "g", use_dot=use_dot)
        assert blocks_outside(svg, "g", [b.id for b in kernel.blocks]) == [], kernel.name


def test_the_model_heading_names_the_kind_only_when_it_differs(built: Built):
    card = built.report.card
    assert card["name"] == card["kind"] == "physical"
    assert "<h2>The model: physical for gtxtitanx</h2>" in built.html
    assert "physical (physical)" not in built.html


def _report(*args: str, cwd: Path, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", "report", *args], cwd=cwd, env=env(tmp),
                          capture_output=True, text=True, timeout=600)


def test_the_command_writes_one_page(tmp_path: Path):
    proc = _report(str(KERNELS_PTX.relative_to(ROOT)), "--out", str(tmp_path / "out"), "--kernel", "saxpy",
                   cwd=ROOT, tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = Path(proc.stdout.strip())
    assert page == tmp_path / "out" / "kernels.html"
    assert _anchors(page.read_text()).sections == ["saxpy"]


@pytest.mark.parametrize(("args", "message"), [
    (["missing.ptx"], "missing.ptx: no such file"),
    (["notes.txt"], "notes.txt: not a CUDA (.cu) or PTX (.ptx) file"),
    ([str(KERNELS_PTX), "--kernel", "nope"], "no kernel named 'nope'; kernels: saxpy, stream_copy,"),
])
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str):
    (tmp_path / "notes.txt").write_text("hello")
    proc = _report(*args, "--out", str(tmp_path / "out"), cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


@needs_nvcc
def test_a_cuda_file(tmp_path: Path):
    cu = Path(shutil.copy(KERNELS_CU, tmp_path / "kernels.cu"))
    proc = _report(str(cu), "--out", str(tmp_path / "out"), "--launch", "64/256", "--nvcc-flags",
                   "-arch=sm_90 -lineinfo", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = Path(proc.stdout.strip()).read_text()
    page = _anchors(html)
    assert page.sections == KERNELS
    assert f"Source: <code>{cu}</code>" in html
    assert sum(link.startswith("#src0-L") for link in page.links) >= len(KERNELS)
    assert "static block counts of the launch" in html


def test_without_a_launch_blocks_carry_the_weights_predict_used(models):
    with contextlib.chdir(ROOT):
        report = file_report(str(KERNELS_PTX.relative_to(ROOT)), Config(), models, kernel="matmul_tiled")
    [kernel] = report.kernels
    assert {b.loop_depth: b.count for b in kernel.blocks} == {0: 1.0, 1: DEFAULT_TRIPS}
    assert all(b.exact is None for b in kernel.blocks)
    assert "weight 16" in render_report(report) and report.counts_method.startswith("no launch")
