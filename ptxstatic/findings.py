"""Findings: what a lint rule reports, shared by ``check``, the nvcc hook and the language server.

A :class:`Finding` points at the PTX instruction it is about and, when the PTX has line information, at the
``.cu`` position of that instruction (the innermost one when code was inlined, with the call sites in
``inlined_at``). Its :meth:`~Finding.fingerprint` identifies it across runs: it does not change when lines move
or rules run in another order.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from ptxstatic.errors import PtxstaticError


class Severity(IntEnum):
    """How serious a finding is; ordered, so ``severity >= Severity.WARNING`` reads naturally."""

    NOTE = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """``"note"`` / ``"warning"`` / ``"error"`` (any case)."""
        try:
            return cls[str(text).upper()]
        except KeyError:
            raise PtxstaticError(f"unknown severity {text!r}: one of note, warning, error") from None


@dataclass(frozen=True)
class Location:
    """A position in a file: 1-based line and column; 0 where unknown."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column}" if self.column > 0 else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Note:
    """A secondary message, at a location of its own or (``None``) at the finding's."""

    message: str
    location: Location | None = None


@dataclass(frozen=True)
class Finding:
    """One result of a rule on one kernel.

    ``kernel`` is the function's PTX name and ``display_name`` its demangled name. ``ptx`` is the instruction's
    position in the PTX file; ``source`` its innermost ``.cu`` position (``None`` without line information);
    ``inlined_at`` the call sites it was inlined through, innermost first. ``context`` is the text the finding
    is about (the ``.cu`` line, else the PTX instruction), and ``occurrence`` numbers findings that would
    otherwise share a fingerprint. ``properties`` holds the rule's figures for JSON and SARIF.
    """

    code: str
    severity: Severity
    message: str
    kernel: str
    ptx: Location
    display_name: str = ""
    source: Location | None = None
    inlined_at: tuple[Location, ...] = ()
    notes: tuple[Note, ...] = ()
    context: str = ""
    occurrence: int = 0
    properties: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def location(self) -> Location:
        """Where the finding is shown: the ``.cu`` position when known, else the PTX one."""
        return self.source if self.source is not None else self.ptx

    def fingerprint(self, root: str | Path | None = None) -> str:
        """A stable identity: rule, file (relative to ``root``), kernel, message and context with their
        numbers masked, and the occurrence; line numbers and run order do not enter it."""
        parts = [
            self.code,
            relative_path(self.location.file, root),
            self.kernel,
            _mask_numbers(self.message),
            " ".join(_mask_numbers(self.context).split()),
            str(self.occurrence),
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]

    def sort_key(self) -> tuple:
        loc = self.location
        return (loc.file, loc.line, loc.column, self.code, self.kernel, self.message, self.ptx.line)

    def to_dict(self, root: str | Path | None = None) -> dict[str, Any]:
        """Plain data for JSON output (paths as recorded; the fingerprint relative to ``root``)."""

        def loc(x: Location | None) -> dict | None:
            return None if x is None else {"file": x.file, "line": x.line, "column": x.column}

        return {
            "code": self.code, "severity": str(self.severity), "message": self.message,
            "kernel": self.kernel, "display_name": self.display_name or self.kernel,
            "location": loc(self.location), "ptx": loc(self.ptx), "source": loc(self.source),
            "inlined_at": [loc(x) for x in self.inlined_at],
            "notes": [{"message": n.message, "location": loc(n.location)} for n in self.notes],
            "properties": self.properties, "context": self.context, "occurrence": self.occurrence,
            "fingerprint": self.fingerprint(root),
        }


    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding :meth:`to_dict` wrote (its fingerprint is recomputed, not read)."""

        def loc(x: dict | None) -> Location | None:
            return None if x is None else Location(x["file"], x["line"], x["column"])

        return cls(
            code=data["code"], severity=Severity.parse(data["severity"]), message=data["message"],
            kernel=data["kernel"], ptx=loc(data["ptx"]), display_name=data["display_name"],
            source=loc(data["source"]), inlined_at=tuple(loc(x) for x in data["inlined_at"]),
            notes=tuple(Note(n["message"], loc(n["location"])) for n in data["notes"]),
            context=data.get("context", ""), occurrence=data.get("occurrence", 0),
            properties=dict(data["properties"]),
        )


_NUMBER = re.compile(r"\d+")


def _mask_numbers(text: str) -> str:
    return _NUMBER.sub("#", text)


def relative_path(path: str, root: str | Path | None) -> str:
    """``path`` relative to ``root`` when it lies under it, else as given; always with ``/`` separators."""
    if root is not None and os.path.isabs(path):
        try:
            return Path(path).relative_to(Path(root)).as_posix()
        except ValueError:
            pass
    return Path(path).as_posix()
