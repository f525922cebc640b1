"""The report page in a real headless browser (Chromium driven by Selenium): it loads without console
errors, its plots and block graphs render with a size, and its tables hold each kernel's numbers as
``predict`` computes them. The test saves the screenshot README shows (docs/images/report.png)."""

from __future__ import annotations

import shutil

import pytest
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
        blocks = section.find_elements(By.CSS_SELECTOR, f'div.graph [id^="k{i}_b"]')
        assert len(blocks) == len(built.report.kernels[i].blocks)
        assert all(min(browser.execute_script(BOX, b)[:2]) > 0 for b in blocks)
        _check_tables(browser, section, want)


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
