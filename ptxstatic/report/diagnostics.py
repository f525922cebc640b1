"""Findings as compiler diagnostics, the way gcc and clang print them.

``src/kernel.cu:12:9: warning: message [PS201]``, then ``FILE:LINE:COL: note: inlined from here`` for each
call site of inlined code and the rule's own notes. Editors (VS Code's ``$gcc`` problem matcher), make,
ninja and CI log parsers read these as compiler warnings. Paths are shown as compilers show them: relative to
the current directory when the file is under it, else as recorded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ptxstatic.findings import Finding, Location, Severity


def display_path(path: str, cwd: str | Path | None = None) -> str:
    """``path`` relative to ``cwd`` (default: the current directory) when it lies under it."""
    base = os.path.abspath(cwd if cwd is not None else os.getcwd())
    full = os.path.normpath(os.path.join(base, path))
    if full == base or full.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(full, base)
    return path


def position(loc: Location, cwd: str | Path | None = None) -> str:
    """``FILE:LINE:COL`` (``FILE:LINE`` without a column, ``FILE`` without a line)."""
    return str(Location(display_path(loc.file, cwd), loc.line, loc.column))


def format_finding(finding: Finding, cwd: str | Path | None = None, errors_from: Severity | None = None) -> str:
    """The finding's lines: the diagnostic, its inlined-at call sites, then its notes. With ``errors_from``
    (``--strict``'s fail-on severity), a finding at or above it is an ``error:``, as ``-Werror`` makes
    compiler warnings errors."""
    where = position(finding.location, cwd)
    kind = Severity.ERROR if errors_from is not None and finding.severity >= errors_from else finding.severity
    lines = [f"{where}: {kind}: {finding.message} [{finding.code}]"]
    lines += [f"{position(site, cwd)}: note: inlined from here" for site in finding.inlined_at]
    for note in finding.notes:
        at = position(note.location, cwd) if note.location is not None else where
        lines.append(f"{at}: note: {note.message}")
    return "\n".join(lines)


def format_findings(findings: Iterable[Finding], cwd: str | Path | None = None,
                    errors_from: Severity | None = None) -> str:
    """All findings, one block after the other (empty string for none); ``errors_from`` as for
    :func:`format_finding`."""
    return "".join(format_finding(f, cwd, errors_from) + "\n" for f in findings)
