"""The rule table as Markdown (``ptxstatic rules --format markdown``): README's table is this output."""

from __future__ import annotations

from collections.abc import Iterable

from ptxstatic.rules.registry import Rule


def rules_markdown(rules: Iterable[Rule]) -> str:
    """One row per rule: code, name, category, default severity (``opt-in``: run only when selected by code or
    prefix), summary."""
    lines = ["| code | name | category | severity | summary |", "|---|---|---|---|---|"]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        severity = f"{r.severity} (opt-in)" if r.opt_in else str(r.severity)
        lines.append(f"| {r.code} | `{r.name}` | {r.category} | {severity} | {summary} |")
    return "\n".join(lines) + "\n"


def options_markdown(rules: Iterable[Rule]) -> str:
    """One row per rule option: code, option, default, meaning (docs/configuration.md's table)."""
    lines = ["| rule | option | default | meaning |", "|---|---|---|---|"]
    for r in rules:
        for name, option in r.options.items():
            meaning = option.help.replace("|", "\\|")
            lines.append(f"| {r.code} | `{name}` | {option.default!r} | {meaning} |")
    return "\n".join(lines) + "\n"
