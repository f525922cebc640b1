"""Portable features of one kernel launch as text: GPU Mangrove's twelve first, then the others."""

from __future__ import annotations

from ptxstatic.features.portable import FEATURES


def features_text(filename: str, kernel: str, counts_source: str, values: dict[str, float | int | str]) -> str:
    mangrove = [f.name for f in FEATURES if f.mangrove]
    lines = [f"{filename}: {kernel}  (counts: {counts_source})"]
    for name in mangrove + [k for k in values if k not in mangrove]:
        v = values.get(name)
        shown = f"{v:.6g}" if isinstance(v, float) else str(v)
        lines.append(f"  {name:<40} {shown}")
    return "\n".join(lines)
