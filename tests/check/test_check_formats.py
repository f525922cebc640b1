"""The report formats of ``ptxstatic check``: JSON against the schema shipped in the package, SARIF against
the official SARIF 2.1.0 schema and GitHub code scanning's expectations, GitHub Actions annotations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from support.check import SARIF_SCHEMA, check, copy_project, expected
from support.paths import needs_nvcc

from ptxstatic.report.schemas import json_schema
from ptxstatic.rules.catalog import all_rules

pytestmark = needs_nvcc


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, Path]:
    """The test project and a result cache shared by the module's runs (the first one fills it)."""
    tmp = tmp_path_factory.mktemp("formats")
    return copy_project(tmp), tmp


def _run(project, *args: str):
    where, tmp = project
    return check(*args, "src", cwd=where, tmp=tmp)


def test_json_follows_its_shipped_schema(project):
    proc = _run(project, "--format", "json")
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(json_schema("check"))
    jsonschema.validate(doc, json_schema("check"), cls=jsonschema.Draft202012Validator)
    assert doc["schema"] == 1 and doc["command"] == "check" and doc["status"] == proc.returncode == 1
    assert doc["summary"]["findings"] == len(doc["findings"]) == 2 and doc["errors"] == []
    assert all(f["fails"] and f["baseline"] is None for f in doc["findings"])
    broken = dict(doc, findings=[{**doc["findings"][0], "severity": "fatal"}])  # the schema does reject
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json_schema("check"), cls=jsonschema.Draft202012Validator)


def test_sarif_validates_against_the_official_schema_and_suits_code_scanning(project):
    where, _ = project
    proc = _run(project, "--format", "sarif")
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()), cls=jsonschema.Draft4Validator)
    [run] = log["runs"]
    assert log["version"] == "2.1.0"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == where.resolve().as_uri() + "/"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for r in rules:
        assert r["name"] and r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert r["help"]["markdown"].startswith(f"# {r['id']} ")
        assert r["defaultConfiguration"]["level"] in ("note", "warning", "error")
    results = run["results"]
    assert len(results) == 2
    by_file = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results}
    assert set(by_file) == {"src/reduce.cu", "src/tile.cuh"}
    for uri, r in by_file.items():
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert loc["region"]["startLine"] in expected(where / uri)
        assert r["level"] == "warning" and rules[r["ruleIndex"]]["id"] == r["ruleId"] == "PS201"
        assert re.fullmatch(r"[0-9a-f]{32}", r["partialFingerprints"]["ptxstatic/v1"])
    inlined = by_file["src/tile.cuh"]["relatedLocations"][0]
    assert inlined["message"]["text"] == "inlined from here"
    assert inlined["physicalLocation"]["artifactLocation"]["uri"] == "src/scan.cu"
    assert inlined["physicalLocation"]["region"]["startLine"] in expected(where / "src/scan.cu", "expect-call")
    assert run["invocations"][0]["executionSuccessful"] is True


def test_github_annotations(project):
    where, _ = project
    proc = _run(project, "--format", "github")
    assert proc.returncode == 1
    pattern = re.compile(r"^::(warning|error|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.*)$")
    annotations = [pattern.match(line) for line in proc.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 2 and all(annotations)
    for m in annotations:
        assert m.group(1) == "warning" and m.group(5) == "PS201 (barrier-under-divergence)"
        assert int(m.group(3)) in expected(where / m.group(2))
        assert "\n" not in m.group(6) and "%0A" in m.group(6)  # notes on further lines, escaped
    header = next(m for m in annotations if m.group(2) == "src/tile.cuh")
    assert "src/scan.cu:9:" in header.group(6).replace("%3A", ":") and "inlined from here" in header.group(6)
    assert proc.stdout.splitlines()[-1].startswith("2 findings (2 warnings) in 2 of 4 files")


def test_text_is_what_compilers_print(project):
    where, _ = project
    proc = _run(project)
    gcc = re.compile(r"^(.*?):(\d+):(\d*):?\s+(warning|error):\s+(.*) \[(PS\d{3})\]$")
    hits = [m for m in map(gcc.match, proc.stdout.splitlines()) if m]
    assert {(m.group(1), int(m.group(2))) for m in hits} == {
        ("src/reduce.cu", min(expected(where / "src/reduce.cu"))),
        ("src/tile.cuh", min(expected(where / "src/tile.cuh")))}
