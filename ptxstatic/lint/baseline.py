"""Baselines and verdicts: which findings are new, and which of them fail the run.

A baseline file lists the fingerprints of accepted findings (``ptxstatic check --write-baseline FILE``);
with ``--baseline FILE`` a finding whose fingerprint is listed (as many times as it is listed) is
``unchanged`` and only ``new`` ones can fail. A fingerprint (:meth:`~ptxstatic.findings.Finding.fingerprint`)
does not change when lines move, so a baseline survives edits elsewhere in a file.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ptxstatic import __version__
from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.findings import Finding, Severity, relative_path
from ptxstatic.lint.batch import LintRun
from ptxstatic.lint.document import DocumentResult

BASELINE_SCHEMA = 1


@dataclass(frozen=True)
class Verdict:
    """One finding of a run: its document, fingerprint, baseline state (``"new"``/``"unchanged"``; None
    without a baseline) and whether it fails the run (new and at or above the fail-on severity)."""

    document: DocumentResult
    finding: Finding
    fingerprint: str
    baseline: str | None
    fails: bool


def judge(run: LintRun, fail_on: Severity | None, baseline: Counter[str] | None) -> list[Verdict]:
    """Every finding of ``run`` with its verdict; ``fail_on`` None: each file's configured ``fail-on``."""
    left = Counter(baseline) if baseline is not None else None
    out = []
    for d in run.documents:
        threshold = fail_on if fail_on is not None else run.configs[d.path].fail_on
        for f in d.findings:
            fp = f.fingerprint(run.root_of(d))
            state = None
            if left is not None:
                state = "unchanged" if left[fp] > 0 else "new"
                left[fp] -= 1
            out.append(Verdict(d, f, fp, state, state != "unchanged" and f.severity >= threshold))
    return out


def read_baseline(path: str | Path) -> Counter[str]:
    """The fingerprints a baseline file lists (each as often as listed)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PtxstaticError(f"{path}: cannot read the baseline: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PtxstaticError(f"{path}: not a ptxstatic baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("schema") != BASELINE_SCHEMA:
        raise PtxstaticError(f"{path}: not a ptxstatic baseline of schema {BASELINE_SCHEMA}")
    findings = data.get("findings")
    if not isinstance(findings, list) or not all(isinstance(f, dict) and isinstance(f.get("fingerprint"), str)
                                                 for f in findings):
        raise PtxstaticError(f"{path}: a baseline's 'findings' is a list of objects with a 'fingerprint'")
    return Counter(f["fingerprint"] for f in findings)


def write_baseline(path: str | Path, verdicts: list[Verdict], run: LintRun) -> None:
    """Write every finding of the run as accepted (with its code, file, line and message for readers)."""
    entries = []
    for v in verdicts:
        loc = v.finding.location
        entries.append({"fingerprint": v.fingerprint, "code": v.finding.code,
                        "file": relative_path(loc.file, run.root_of(v.document)), "line": loc.line,
                        "message": v.finding.message})
    doc = {"schema": BASELINE_SCHEMA, "tool": {"name": "ptxstatic", "version": __version__}, "findings": entries}
    write_atomic(path, json.dumps(doc, indent=1) + "\n")
