"""Errors that reach the user: each renders as one compiler-style message and maps to exit status 2."""

from __future__ import annotations

from dataclasses import dataclass


class PtxstaticError(Exception):
    """Bad input or a failed external step; rendered without a traceback."""

    def render(self) -> str:
        return f"error: {self}"


@dataclass
class SourceError(PtxstaticError):
    """An error at a position in a file: renders as ``FILE:LINE:COL: error: MESSAGE`` plus the line and a caret."""

    file: str
    line: int
    column: int
    message: str
    source_line: str = ""

    def __str__(self) -> str:
        if self.line <= 0:
            return f"{self.file}: error: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: error: {self.message}"

    def render(self) -> str:
        text = str(self)
        if self.source_line:
            shown = self.source_line.rstrip("\n").expandtabs(1)
            text += f"\n  {shown}\n  {' ' * max(0, self.column - 1)}^"
        return text
