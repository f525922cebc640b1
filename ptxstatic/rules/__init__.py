"""Lint rules with stable ``PSnnn`` codes: the registry, the catalogue of every rule, the per-kernel context
and the engine that runs them.

A rule is one module in :mod:`ptxstatic.rules.checks` (a check function under the :func:`~ptxstatic.rules.
registry.rule` decorator) plus its page ``ptxstatic/rules/docs/PSnnn.md``.
"""
