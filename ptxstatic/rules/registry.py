"""The rule registry: a :class:`Rule` record per code, registered by the :func:`rule` decorator when its
module in :mod:`ptxstatic.rules.checks` is imported (:mod:`ptxstatic.rules.catalog` imports them all).

Codes are grouped by hundreds (:data:`CATEGORIES`); a code is never reused for another meaning. Each rule
declares the options it accepts in ``[tool.ptxstatic.rules.PSnnn]`` (every rule also accepts ``severity``).
An *opt-in* rule (the energy notes, which speak of every kernel) runs only where ``select`` names it or its
prefix; ``ALL`` does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ptxstatic.config import Config
from ptxstatic.findings import Finding, Severity
from ptxstatic.package_data import data_path

if TYPE_CHECKING:
    from ptxstatic.rules.context import RuleContext

CATEGORIES = {
    1: "memory",
    2: "control flow and synchronisation",
    3: "occupancy and resources",
    4: "precision",
    5: "energy and clocks",
}

Check = Callable[["RuleContext"], Iterable[Finding]]


@dataclass(frozen=True)
class Option:
    """An option of a rule: its default (whose type the configured value must have) and what it means."""

    default: Any
    help: str


@dataclass(frozen=True)
class Rule:
    code: str  # PS201
    name: str  # barrier-under-divergence
    severity: Severity
    summary: str  # one line
    check: Check
    options: dict[str, Option] = field(default_factory=dict, hash=False)
    opt_in: bool = False  # runs only when selected by code or prefix, not by ALL

    @property
    def category(self) -> str:
        return CATEGORIES[int(self.code[2])]

    @property
    def doc(self) -> str:
        """The rule's documentation page (Markdown)."""
        return data_path("rules/docs", f"{self.code}.md").read_text(encoding="utf-8")

    def configured(self, config: Config) -> tuple[Severity, dict[str, Any]]:
        """The rule's severity and option values under ``config``: as configured, else its own defaults."""
        own = config.rule_options(self.code)
        severity = Severity.parse(own["severity"]) if "severity" in own else self.severity
        return severity, {name: own.get(name, option.default) for name, option in self.options.items()}


_REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, severity: Severity, summary: str,
         options: dict[str, Option] | None = None, opt_in: bool = False) -> Callable[[Check], Check]:
    """Register the decorated check function as rule ``code``."""
    if not re.fullmatch(r"PS[1-5]\d\d", code):
        raise ValueError(f"rule code {code!r} is not PS1nn..PS5nn")
    if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name):
        raise ValueError(f"rule name {name!r} is not kebab-case")

    def register(check: Check) -> Check:
        if code in _REGISTRY and _REGISTRY[code].check is not check:
            raise ValueError(f"rule code {code} is registered twice")
        _REGISTRY[code] = Rule(code, name, severity, summary, check, dict(options or {}), opt_in)
        return check

    return register


def registered() -> list[Rule]:
    """The rules registered so far, by code (:func:`ptxstatic.rules.catalog.all_rules` imports them all)."""
    return [_REGISTRY[c] for c in sorted(_REGISTRY)]
