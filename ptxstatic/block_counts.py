"""Basic-block execution counts for one kernel launch, whichever way they were obtained.

Counts are totals over all threads (as in CUDA Flux): a block entered by 32 threads of one warp, 10 times,
counts 320. Device functions have their own blocks, counted over every call. Static estimates carry, per
block, whether the count is exact and the interval ``low`` to ``high`` that holds it (``high`` infinite, null in
JSON, where nothing bounds it: a loop on data with no bound in the code).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch

#: where counts came from: an instrumented GPU run, a sampled run extrapolated to the grid, static analysis,
#: or the functional PTX emulator
SOURCES = ("gpu", "gpu-sampled", "static", "emulated", "emulated-sampled")


@dataclass
class BlockCounts:
    kernel: str
    launch: Launch
    source: str  # one of SOURCES
    counts: dict[str, dict[int, float]]  # function name -> block id -> executions summed over threads
    exact: dict[str, dict[int, bool]] = field(default_factory=dict)  # static estimates: which are exact
    notes: list[str] = field(default_factory=list)
    low: dict[str, dict[int, float]] = field(default_factory=dict)  # static estimates: each count's interval
    high: dict[str, dict[int, float]] = field(default_factory=dict)  # (math.inf: unbounded)

    def of(self, function: str) -> dict[int, float]:
        return self.counts.get(function, {})

    def interval(self, function: str, block: int) -> tuple[float, float]:
        """The range that holds a block's count (the count itself where no interval is given)."""
        c = self.counts.get(function, {}).get(block, 0.0)
        return self.low.get(function, {}).get(block, c), self.high.get(function, {}).get(block, c)

    def to_dict(self) -> dict:
        out = {
            "kernel": self.kernel, "launch": self.launch.to_dict(), "source": self.source,
            "counts": {f: {str(b): c for b, c in bc.items()} for f, bc in self.counts.items()},
            "exact": {f: {str(b): e for b, e in be.items()} for f, be in self.exact.items()},
            "notes": self.notes,
        }
        if self.low:
            out["low"] = {f: {str(b): c for b, c in bc.items()} for f, bc in self.low.items()}
            out["high"] = {f: {str(b): None if math.isinf(c) else c for b, c in bc.items()}
                           for f, bc in self.high.items()}
        return out

    @classmethod
    def from_dict(cls, d: dict) -> BlockCounts:
        try:
            return cls(
                d["kernel"], Launch.from_dict(d["launch"]), d["source"],
                {f: {int(b): float(c) for b, c in bc.items()} for f, bc in d["counts"].items()},
                {f: {int(b): bool(e) for b, e in be.items()} for f, be in d.get("exact", {}).items()},
                list(d.get("notes", [])),
                {f: {int(b): float(c) for b, c in bc.items()} for f, bc in d.get("low", {}).items()},
                {f: {int(b): math.inf if c is None else float(c) for b, c in bc.items()}
                 for f, bc in d.get("high", {}).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"bad block-count data: {exc}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> BlockCounts:
        """BlockCounts JSON, or the output of ``ptxstatic profile`` (which holds it under "counts")."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PtxstaticError(f"{path}: cannot read block counts: {exc}") from None
        if isinstance(data, dict) and "source" not in data and isinstance(data.get("counts"), dict):
            data = data["counts"]
        return cls.from_dict(data)
