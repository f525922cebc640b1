"""A translation unit's analysis budget: CPU seconds of the thread that analyses it, and what was left undone.

The rule engine runs no further rule once the budget is spent, and the memory rules' emulation stops where it
is (what it sampled until then is measured); each thing cut short is recorded, so that the caller can say so.
CPU time rather than wall-clock time: a loaded machine gives the same results as a quiet one.
"""

from __future__ import annotations

import time


class Budget:
    """``seconds`` of CPU time of the calling thread from now (make it in the thread that analyses)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.thread_time() + seconds
        self.cut: list[tuple[str, str]] = []  # (rule code, function) left unfinished, in order

    def spent(self) -> bool:
        return time.thread_time() >= self.deadline

    def record(self, code: str, function: str) -> None:
        if (code, function) not in self.cut:
            self.cut.append((code, function))

    def summary(self, names: int = 4) -> str:
        """What was left undone, per rule (``PS101 on k1, k2; PS201 on k2``), the first ``names`` functions each."""
        by_code: dict[str, list[str]] = {}
        for code, fn in self.cut:
            by_code.setdefault(code, []).append(fn)
        parts = []
        for code, fns in by_code.items():
            more = f" and {len(fns) - names} more" if len(fns) > names else ""
            parts.append(f"{code} on {', '.join(fns[:names])}{more}")
        return "; ".join(parts)
