"""``ptxstatic rules`` (the rule table) and ``ptxstatic rule CODE`` (one rule's page), like ``ruff rule``."""

from __future__ import annotations

import click

from ptxstatic.cli import options


@click.command()
@options.output_format("text", "json", "markdown")
def rules(fmt: str) -> None:
    """List every rule: code, name, category, default severity and summary (markdown: README's table)."""
    from ptxstatic.rules.catalog import all_rules

    table = all_rules()
    if fmt == "markdown":
        from ptxstatic.report.rules_table import rules_markdown

        click.echo(rules_markdown(table), nl=False)
        return
    if fmt == "json":
        from ptxstatic.report.json_doc import json_document

        click.echo(json_document("rules", [], [], rules=[{"code": r.code, "name": r.name, "category": r.category,
                                                          "severity": str(r.severity), "opt_in": r.opt_in,
                                                          "summary": r.summary} for r in table]))
        return
    for r in table:
        click.echo(f"{r.code}  {r.name:32} {r.severity!s:8} {'opt-in  ' if r.opt_in else ''}{r.summary}")


@click.command()
@click.argument("code")
def rule(code: str) -> None:
    """Show the documentation page of rule CODE (PS201) or NAME (barrier-under-divergence)."""
    from ptxstatic.rules.catalog import get_rule

    click.echo(get_rule(code).doc.rstrip("\n"))
