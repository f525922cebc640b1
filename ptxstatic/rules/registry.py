"""The rule registry: a :class:`Rule` record per code, registered by the :func:`rule` decorator.

Codes are grouped by hundreds (:data:`CATEGORIES`); a code is never reused for another meaning. Each rule
declares the options it accepts in ``[tool.ptxstatic.rules.PSnnn]`` (every rule also accepts ``severity``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from ptxstatic.errors import PtxstaticError
from ptxstatic.findings import Finding, Severity

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

    @property
    def category(self) -> str:
        return CATEGORIES[int(self.code[2])]

    @property
    def doc(self) -> str:
        """The rule's documentation page (Markdown)."""
        return (resources.files("ptxstatic.rules") / "docs" / f"{self.code}.md").read_text(encoding="utf-8")

    def option(self, configured: dict[str, Any], name: str) -> Any:
        """The value of option ``name``: configured, else the default."""
        return configured.get(name, self.options[name].default)


_REGISTRY: dict[str, Rule] = {}
_loaded = False


def rule(code: str, name: str, severity: Severity, summary: str,
         options: dict[str, Option] | None = None) -> Callable[[Check], Check]:
    """Register the decorated check function as rule ``code``."""
    if not re.fullmatch(r"PS[1-5]\d\d", code):
        raise ValueError(f"rule code {code!r} is not PS1nn..PS5nn")
    if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name):
        raise ValueError(f"rule name {name!r} is not kebab-case")

    def register(check: Check) -> Check:
        if code in _REGISTRY and _REGISTRY[code].check is not check:
            raise ValueError(f"rule code {code} is registered twice")
        _REGISTRY[code] = Rule(code, name, severity, summary, check, dict(options or {}))
        return check

    return register


def all_rules() -> list[Rule]:
    """Every rule, by code (the modules of :mod:`ptxstatic.rules.checks` are imported on first use)."""
    global _loaded
    if not _loaded:
        from ptxstatic.rules import checks

        for info in pkgutil.iter_modules(checks.__path__):
            importlib.import_module(f"{checks.__name__}.{info.name}")
        _loaded = True
    return [_REGISTRY[c] for c in sorted(_REGISTRY)]


def get_rule(code_or_name: str) -> Rule:
    """A rule by code (``PS201``, any case) or name (``barrier-under-divergence``)."""
    key = code_or_name.strip()
    for r in all_rules():
        if key.upper() == r.code or key == r.name:
            return r
    raise PtxstaticError(f"no rule {code_or_name!r}; `ptxstatic rules` lists them")
