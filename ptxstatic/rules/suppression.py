"""Suppression comments in CUDA sources: ``// ptxstatic: ignore[PS201]`` on the line a finding points at.

Like ruff's ``# noqa``: the comment names the codes (or prefixes, ``PS2``) it silences, separated by commas;
``// ptxstatic: ignore`` without a list silences every rule on that line. A finding in inlined code is also
silenced by the comment on any of its call sites, so a call into a library header can be marked where it
is made.
"""

from __future__ import annotations

import re
from pathlib import Path

from ptxstatic.findings import Finding, Location

_COMMENT = re.compile(r"//\s*ptxstatic:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?")


def suppressed_codes(line: str) -> tuple[str, ...] | None:
    """The codes a source line's comment silences: ``()`` for all, ``None`` when it has no such comment."""
    m = _COMMENT.search(line)
    if m is None:
        return None
    codes = m.group("codes")
    if codes is None:
        return ()
    return tuple(c.strip().upper() for c in codes.split(",") if c.strip())


class SourceLines:
    """The lines of the source files findings point at, each file read once (unreadable files have none)."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def line(self, location: Location) -> str | None:
        if location.file not in self._files:
            try:
                text = Path(location.file).read_text(encoding="utf-8", errors="replace")
                self._files[location.file] = text.splitlines()
            except OSError:
                self._files[location.file] = None
        lines = self._files[location.file]
        if lines is None or not 0 < location.line <= len(lines):
            return None
        return lines[location.line - 1]


def is_suppressed(finding: Finding, sources: SourceLines) -> bool:
    """Whether a comment on the finding's ``.cu`` line, or on one of its call sites, silences its code."""
    if finding.source is None:
        return False
    for loc in (finding.source, *finding.inlined_at):
        line = sources.line(loc)
        codes = suppressed_codes(line) if line is not None else None
        if codes is not None and (not codes or any(finding.code.startswith(c) for c in codes)):
            return True
    return False
