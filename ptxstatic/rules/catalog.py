"""Every rule: the modules of :mod:`ptxstatic.rules.checks` imported on first use, looked up by code or name."""

from __future__ import annotations

import importlib
import pkgutil

from ptxstatic.errors import PtxstaticError
from ptxstatic.rules import checks
from ptxstatic.rules.registry import Rule, registered


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    for info in pkgutil.iter_modules(checks.__path__):
        importlib.import_module(f"{checks.__name__}.{info.name}")
    return registered()


def get_rule(code_or_name: str) -> Rule:
    """A rule by code (``PS201``, any case) or name (``barrier-under-divergence``)."""
    key = code_or_name.strip()
    for r in all_rules():
        if key.upper() == r.code or key == r.name:
            return r
    raise PtxstaticError(f"no rule {code_or_name!r}; `ptxstatic rules` lists them")
