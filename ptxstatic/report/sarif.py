"""Findings as SARIF 2.1.0 (the OASIS standard), shaped for GitHub code scanning.

One run of the ``ptxstatic`` driver: every registered rule in ``tool.driver.rules`` (id, name, short and
full description, its documentation page as ``help``, default level, category tag), one result per finding
with its level mapped from the severity, the location relative to ``%SRCROOT%`` (given in
``originalUriBaseIds``), the kernel as a logical location, inlined-at call sites and located notes as related
locations, ``partialFingerprints`` from :meth:`~ptxstatic.findings.Finding.fingerprint`, and with a baseline,
``baselineState``. Input problems are the invocation's ``toolExecutionNotifications``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ptxstatic import __version__
from ptxstatic.findings import Location, Severity
from ptxstatic.lint.baseline import Verdict
from ptxstatic.lint.batch import LintRun
from ptxstatic.lint.document import Problem
from ptxstatic.report.check_output import all_problems
from ptxstatic.rules.catalog import all_rules
from ptxstatic.rules.registry import Rule

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "ptxstatic/v1"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def sarif_report(run: LintRun, verdicts: list[Verdict], source_root: str | Path | None = None) -> str:
    """The SARIF log; ``source_root`` (default: the current directory) is ``%SRCROOT%``, which GitHub takes
    for the repository's root: run ``check`` from there."""
    root = Path(source_root or os.getcwd()).resolve()
    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    problems = all_problems(run)
    log = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ptxstatic", "version": __version__, "semanticVersion": __version__,
                                "rules": [_rule(r) for r in rules]}},
            "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
            "invocations": [{"executionSuccessful": not problems,
                             "toolExecutionNotifications": [_notification(p, root) for p in problems]}],
            "results": [_result(v, index, root) for v in verdicts],
            "columnKind": "unicodeCodePoints",
        }],
    }
    return json.dumps(log, indent=1) + "\n"


def _rule(rule: Rule) -> dict[str, Any]:
    doc = rule.doc
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _first_paragraph(doc, "## What it detects") or rule.summary},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": [rule.category, rule.name], "precision": "high"},
    }


def _first_paragraph(doc: str, heading: str) -> str:
    """The first paragraph under ``heading`` in a rule page, joined to one line."""
    _, found, rest = doc.partition(heading)
    if not found:
        return ""
    paragraph = rest.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def _result(v: Verdict, index: dict[str, int], root: Path) -> dict[str, Any]:
    f = v.finding
    location = _location(f.location, root)
    location["logicalLocations"] = [{"name": f.display_name or f.kernel, "decoratedName": f.kernel,
                                     "kind": "function"}]
    related = [{**_location(site, root), "id": i + 1, "message": {"text": "inlined from here"}}
               for i, site in enumerate(f.inlined_at)]
    related += [{**_location(n.location, root), "id": len(related) + i + 1, "message": {"text": n.message}}
                for i, n in enumerate(x for x in f.notes if x.location is not None)]
    unlocated = [n.message for n in f.notes if n.location is None]
    out: dict[str, Any] = {
        "ruleId": f.code,
        "level": _LEVEL[f.severity],
        "message": {"text": " ".join([f.message, *unlocated])},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: v.fingerprint},
        "properties": {**f.properties, "kernel": f.kernel,
                       "ptx": {"file": f.ptx.file, "line": f.ptx.line, "column": f.ptx.column}},
    }
    if f.code in index:
        out["ruleIndex"] = index[f.code]
    if related:
        out["relatedLocations"] = related
    if v.baseline is not None:
        out["baselineState"] = v.baseline
    return out


def _location(loc: Location, root: Path) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(loc.file, root)}
    if loc.line > 0:
        physical["region"] = {"startLine": loc.line, **({"startColumn": loc.column} if loc.column > 0 else {})}
    return {"physicalLocation": physical}


def _artifact(file: str, root: Path) -> dict[str, Any]:
    """A URI relative to ``%SRCROOT%`` for files under it, else an absolute ``file:`` URI."""
    full = Path(os.path.abspath(file))
    try:
        rel = full.resolve().relative_to(root)
    except ValueError:
        return {"uri": full.as_uri()}
    return {"uri": _quote(rel.as_posix()), "uriBaseId": SRCROOT}


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _notification(p: Problem, root: Path) -> dict[str, Any]:
    return {"level": "error", "message": {"text": "\n".join(x for x in (p.message, p.detail) if x)},
            "locations": [_location(Location(p.file, p.line, p.column), root)]}
