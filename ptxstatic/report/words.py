"""Words in running text: a count with its noun in the right number."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 function``, ``2 functions``, ``0 functions`` (``plural``: for nouns not made plural by an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
