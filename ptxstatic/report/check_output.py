"""``ptxstatic check``'s reports: text (gcc-style diagnostics and a summary), JSON (one documented shape,
``report/schemas/check.schema.json``) and GitHub Actions workflow commands. SARIF is :mod:`.sarif`."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

from ptxstatic import __version__
from ptxstatic.findings import Severity
from ptxstatic.lint.baseline import Verdict
from ptxstatic.lint.batch import LintRun
from ptxstatic.lint.document import Problem
from ptxstatic.report.diagnostics import display_path, format_finding, position

JSON_SCHEMA_VERSION = 1


def problems_text(run: LintRun) -> str:
    """Every input problem (``FILE:LINE:COL: error: ...`` with nvcc's or the parser's own lines) and every
    note, for standard error."""
    lines = [dataclasses.replace(p, file=display_path(p.file)).render() for p in all_problems(run)]
    lines += [f"ptxstatic: note: {n}" for d in run.documents for n in d.notes]
    return "".join(line + "\n" for line in lines)


def all_problems(run: LintRun) -> list[Problem]:
    return [*run.problems, *(p for d in run.documents for p in d.problems)]


def text_report(run: LintRun, verdicts: list[Verdict], fail_on: Severity | None) -> str:
    """The diagnostics of the findings that are not in the baseline, then one summary line."""
    shown = [v for v in verdicts if v.baseline != "unchanged"]
    body = "".join(format_finding(v.finding) + "\n" for v in shown)
    return body + summary_line(run, verdicts, fail_on) + "\n"


def summary_line(run: LintRun, verdicts: list[Verdict], fail_on: Severity | None) -> str:
    counts = Counter(str(v.finding.severity) for v in verdicts if v.baseline != "unchanged")
    files = len({v.document.path for v in verdicts if v.baseline != "unchanged"})
    total = sum(counts.values())
    parts = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "note")
                      if counts[s])
    text = f"{total} finding{'s' if total != 1 else ''}" + (f" ({parts})" if parts else "")
    text += f" in {files} of {len(run.documents)} file{'s' if len(run.documents) != 1 else ''}"
    unchanged = sum(v.baseline == "unchanged" for v in verdicts)
    if unchanged:
        text += f"; {unchanged} in the baseline not shown"
    failing = sum(v.fails for v in verdicts)
    threshold = f"at or above {fail_on}" if fail_on is not None else "at or above each file's fail-on"
    text += f"; {failing} {threshold}" if failing else ""
    problems = len(all_problems(run))
    return text + (f"; {problems} input error{'s' if problems != 1 else ''}" if problems else "")


# ---------------------------------------------------------------------------------------------- JSON


def json_report(run: LintRun, verdicts: list[Verdict], fail_on: Severity | None, status: int) -> str:
    """The JSON document (``ptxstatic/report/schemas/check.schema.json`` describes it)."""
    doc: dict[str, Any] = {
        "schema": JSON_SCHEMA_VERSION, "command": "check", "tool": {"name": "ptxstatic", "version": __version__},
        "status": status, "fail_on": None if fail_on is None else str(fail_on),
        "summary": _summary(run, verdicts),
        "files": [_file(d) for d in run.documents],
        "kernels": [{"file": d.path, "name": k.name, "display_name": k.display_name}
                    for d in run.documents for k in d.kernels],
        "findings": [{**v.finding.to_dict(run.root_of(v.document)), "file": v.document.path,
                      "fingerprint": v.fingerprint, "baseline": v.baseline, "fails": v.fails} for v in verdicts],
        "errors": [{"file": p.file, "line": p.line, "column": p.column, "message": p.message, "detail": p.detail}
                   for p in all_problems(run)],
    }
    return json.dumps(doc, indent=1) + "\n"


def _summary(run: LintRun, verdicts: list[Verdict]) -> dict[str, Any]:
    by = Counter(str(v.finding.severity) for v in verdicts)
    return {"files": len(run.documents), "cached": sum(d.cached for d in run.documents),
            "findings": len(verdicts), "new": sum(v.baseline != "unchanged" for v in verdicts),
            "failing": sum(v.fails for v in verdicts), "errors": len(all_problems(run)),
            "by_severity": {s: by[s] for s in ("error", "warning", "note")}, "seconds": round(run.seconds, 3)}


def _file(d) -> dict[str, Any]:
    spec = d.compile
    return {"path": d.path, "kind": d.kind, "cached": d.cached, "included_by": d.included_by, "notes": d.notes,
            "findings": len(d.findings), "errors": len(d.problems),
            "compile": None if spec is None else {"origin": spec.origin, "directory": spec.directory,
                                                  "arguments": list(spec.args)}}


# ------------------------------------------------------------------------------------ GitHub Actions

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def github_report(run: LintRun, verdicts: list[Verdict], fail_on: Severity | None) -> str:
    """GitHub Actions workflow commands: ``::warning file=F,line=L,col=C,title=T::message`` per new finding
    (its call sites and notes on further lines of the message), ``::error`` per input problem, and the
    summary as a plain line."""
    lines = []
    for v in verdicts:
        if v.baseline == "unchanged":
            continue
        f = v.finding
        extra = [f"{position(site)}: inlined from here" for site in f.inlined_at]
        extra += [f"{position(n.location) + ': ' if n.location else ''}{n.message}" for n in f.notes]
        lines.append(_command(_LEVEL[f.severity], f.location.file, f.location.line, f.location.column,
                              f"{f.code} ({_rule_name(f.code)})", "\n".join([f.message, *extra])))
    for p in all_problems(run):
        lines.append(_command("error", p.file, p.line, p.column, "ptxstatic: input error",
                              "\n".join(x for x in (p.message, p.detail) if x)))
    lines.append(summary_line(run, verdicts, fail_on))
    return "".join(line + "\n" for line in lines)


def _command(level: str, file: str, line: int, column: int, title: str, message: str) -> str:
    props = [f"file={_escape_property(display_path(file))}"]
    if line > 0:
        props.append(f"line={line}")
        if column > 0:
            props.append(f"col={column}")
    props.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    """As the Actions toolkit escapes a command's message (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """As the Actions toolkit escapes a property value (also ``:`` and ``,``)."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _rule_name(code: str) -> str:
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.rules.catalog import get_rule

    try:
        return get_rule(code).name
    except PtxstaticError:  # a code that no rule has any more
        return code
