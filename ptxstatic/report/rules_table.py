"""The rule table as Markdown (``ptxstatic rules --format markdown``): README's table is this output."""

from __future__ import annotations

from collections.abc import Iterable

from ptxstatic.rules.registry import Rule


def rules_markdown(rules: Iterable[Rule]) -> str:
    """One row per rule: code, name, category, default severity, summary."""
    lines = ["| code | name | category | severity | summary |", "|---|---|---|---|---|"]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        lines.append(f"| {r.code} | `{r.name}` | {r.category} | {r.severity} | {summary} |")
    return "\n".join(lines) + "\n"
