"""The wheel carries the grammar, the instrumentation templates and the report's page template, and works outside
the source tree."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import FRONTEND_DATA, ROOT


@pytest.mark.slow
def test_wheel_is_self_contained(tmp_path: Path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True)
    if build.returncode != 0 and "hatchling" in build.stderr:
        pytest.skip("the build backend could not be installed: " + build.stderr.strip().splitlines()[-1])
    assert build.returncode == 0, build.stderr
    wheel = next(tmp_path.glob("ptxstatic-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "ptxstatic/_grammars/ptx.lark" in names
    assert any(n.startswith("ptxstatic/_instrumentation/") for n in names)
    assert "ptxstatic/rules/docs/PS201.md" in names
    for command in ("check", "parse", "analyze", "blocks", "features", "predict", "rules", "evaluate", "collect"):
        assert f"ptxstatic/report/schemas/{command}.schema.json" in names
    assert "ptxstatic/report/templates/report.html.j2" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ptxstatic-nvcc = ptxstatic.hook.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import ptxstatic, sys\n"
        "from ptxstatic.ptx.grammar import grammar_path\n"
        "from ptxstatic.ptx import parse_file\n"
        f"assert ptxstatic.__file__.startswith({str(site)!r}), ptxstatic.__file__\n"
        f"assert str(grammar_path()).startswith({str(site)!r}), grammar_path()\n"
        f"print(len(parse_file({str(FRONTEND_DATA / 'small_sm80.ptx')!r}).kernels))\n"
        "from ptxstatic.rules.catalog import get_rule\n"
        "assert get_rule('PS201').doc.startswith('# PS201')\n"
        "from ptxstatic.report.schemas import json_schema\n"
        "assert json_schema('check')['properties']['command']['const'] == 'check'\n"
        "import jinja2\n"
        "page = jinja2.Environment(loader=jinja2.PackageLoader('ptxstatic.report', 'templates'))\n"
        f"assert page.get_template('report.html.j2').filename.startswith({str(site)!r})\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "PTXSTATIC_NO_CACHE": "1"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "3"
