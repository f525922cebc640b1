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
            shown = "".join(c if c.isprintable() else "?" for c in shown)  # a binary line stays one terminal line
            caret = max(0, self.column - 1)
            if len(shown) > SHOWN_LINE_CHARS:  # the part of a long line around the column
                start = max(0, min(caret - SHOWN_LINE_CHARS // 2, len(shown) - SHOWN_LINE_CHARS))
                shown = shown[start:start + SHOWN_LINE_CHARS]
                caret -= start
            text += f"\n  {shown}\n  {' ' * caret}^"
        return text


#: characters of a source line an error shows under its message
SHOWN_LINE_CHARS = 160
