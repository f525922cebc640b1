"""The report page in a real headless browser (Chromium driven by Selenium): it loads without console
errors, its plots and block graphs render with a size, every block inside its graph, with graphviz ``dot``
and without it (a page made by ``ptxstatic report`` with ``dot`` absent from the PATH), and its tables hold
each kernel's numbers as ``predict`` computes them. The test saves the screenshot README shows
(docs/images/report.png)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.check import env
from support.paths import ROOT
from support.report import KERNELS_PTX, LAUNCH, Built

from ptxstatic.predict import predict_module
from ptxstatic.ptx.parser import parse_file

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
NO_BROWSER = "Chromium and chromedriver are not on the PATH (Debian: chromium chromium-driver)"
pytestmark = pytest.mark.skipif(CHROMIUM is None or DRIVER is None, reason=NO_BROWSER)
SCREENSHOT = ROOT / "docs" / "images" / "report.png"
#: a rendered element's box and how many elements it holds
BOX = ("const b = arguments[0].getBoundingClientRect(); "
       "return [b.width, b.height, arguments[0].querySelectorAll('*').length];")
#: an element's rendered box: left, top, right, bottom
EDGES = "const b = arguments[0].getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom];"


@pytest.fixture(scope="module")
def page_without_dot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ten-kernel file's page as ``ptxstatic report`` writes it where graphviz ``dot`` is not installed:
    the PATH holds ptxas alone."""
    tmp = tmp_path_factory.mktemp("no-dot")
    tools = tmp / "bin"
    tools.mkdir()
    if shutil.which("ptxas"):
        (tools / "ptxas").symlink_to(shutil.which("ptxas"))
    assert shutil.which("dot", path=str(tools)) is None
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "report", str(KERNELS_PTX.relative_to(ROOT)), "--out",
                           str(tmp / "out"), "--grid", "2,2", "--block", "16,16"], cwd=ROOT,
                          env=env(tmp, PATH=str(tools)), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,1700"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    yield driver
    driver.quit()


def _text(element) -> str:
    return element.get_attribute("textContent").strip()


def test_the_page_in_chromium(built: Built, models, browser):
    from selenium.webdriver.common.by import By

    browser.get(built.page.as_uri())
    assert browser.title == "ptxstatic report: kernels.ptx"
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    expected = predict_module(parse_file(str(KERNELS_PTX)), models, LAUNCH)
    sections = browser.find_elements(By.CSS_SELECTOR, "section.kernel")
    assert [s.get_attribute("data-kernel") for s in sections] == [p["kernel"] for p in expected]
    for i, (section, want) in enumerate(zip(sections, expected, strict=True)):
        for svg in section.find_elements(By.CSS_SELECTOR, "figure.tradeoff > svg, div.graph > svg"):
            width, height, elements = browser.execute_script(BOX, svg)
            assert width > 100 and height > 100 and elements > 10
        _check_graph(browser, section, i, len(built.report.kernels[i].blocks))
        _check_tables(browser, section, want)


def test_the_graphs_without_dot_draw_every_block(built: Built, page_without_dot: Path, browser):
    """Without graphviz the fallback drawing holds every block inside the graph's picture (it drew 1 of 7
    blocks of a divergent-barrier kernel and none of matmul_tiled's 4 inside it)."""
    from selenium.webdriver.common.by import By

    browser.get(page_without_dot.as_uri())
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    sections = browser.find_elements(By.CSS_SELECTOR, "section.kernel")
    assert len(sections) == len(built.report.kernels) == 10
    for i, section in enumerate(sections):
        _check_graph(browser, section, i, len(built.report.kernels[i].blocks))


def _check_graph(browser, section, index: int, blocks: int) -> None:
    """The section's block graph renders with a size and holds one element per block, each inside it."""
    from selenium.webdriver.common.by import By

    svg = section.find_element(By.CSS_SELECTOR, "div.graph > svg")
    left, top, right, bottom = browser.execute_script(EDGES, svg)
    shown = section.find_elements(By.CSS_SELECTOR, f'div.graph [id^="k{index}_b"]')
    assert len(shown) == blocks
    for block in shown:
        b_left, b_top, b_right, b_bottom = browser.execute_script(EDGES, block)
        assert b_right > b_left and b_bottom > b_top
        assert left - 0.5 <= b_left and b_right <= right + 0.5 and top - 0.5 <= b_top and b_bottom <= bottom + 0.5, \
            (block.get_attribute("id"), (b_left, b_top, b_right, b_bottom), (left, top, right, bottom))


#: each row of a kernel's configuration table: its class and its cells by class, as the browser shows them
ROWS = """return Array.from(arguments[0].querySelectorAll('table.configs tr')).slice(1).map(r =>
    [r.className, Object.fromEntries(Array.from(r.cells).map(c => [c.className, c.textContent.trim()]))]);"""
#: each heatmap: its head and its cells' clocks and text
HEATMAPS = """return Array.from(arguments[0].querySelectorAll('table.heatmap')).map(t => [t.dataset.head,
    Array.from(t.querySelectorAll('td[data-clocks]')).map(c => [c.dataset.clocks, c.textContent.trim()])]);"""


def _check_tables(browser, section, want: dict) -> None:
    rows = browser.execute_script(ROWS, section)
    assert len(rows) == len(want["configs"]) == 32
    for (classes, cell), config in zip(rows, want["configs"], strict=True):
        assert (int(cell["f_mem_mhz"]), int(cell["f_core_mhz"])) == (config["f_mem_mhz"], config["f_core_mhz"])
        for name in ("speedup", "time_scaling", "power_scaling", "energy_scaling"):
            assert abs(float(cell[name]) - config[name]) <= 5e-4 + 1e-9, (name, cell[name], config[name])
        assert ("min-energy" in classes.split()) == config["min_energy"]
        assert ("pareto" in classes.split()) == config["pareto"]
    by_clocks = {f"{c['f_mem_mhz']}/{c['f_core_mhz']}": c for c in want["configs"]}
    heatmaps = browser.execute_script(HEATMAPS, section)
    assert [head for head, _ in heatmaps] == ["time", "power", "energy"]
    for head, cells in heatmaps:
        assert sorted(clocks for clocks, _ in cells) == sorted(by_clocks)
        for clocks, text in cells:
            assert abs(float(text) - by_clocks[clocks][f"{head}_scaling"]) <= 5e-3 + 1e-9


def test_screenshot(built: Built, browser):
    browser.get(built.page.as_uri())
    browser.execute_script("document.querySelector('section[data-kernel=\"matmul_tiled\"]').scrollIntoView()")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 20_000
