"""``ptxstatic parse``: parse PTX and summarise it, or dump the AST as JSON."""

from __future__ import annotations

import click

from ptxstatic.cli import options
from ptxstatic.cli.inputs import modules


@click.command()
@click.argument("files", nargs=-1, required=True)
@options.output_format("text", "json")
@options.nvcc_flags
@click.pass_context
def parse(ctx: click.Context, files: tuple[str, ...], fmt: str, nvcc_flags: str) -> None:
    """Parse PTX FILES (.ptx, .cu compiled with nvcc, directories, or - for stdin)."""
    from ptxstatic.ptx.to_json import module_json, room_for_nesting
    from ptxstatic.report.analysis_text import parse_summary
    from ptxstatic.report.json_doc import error_json, json_document, kernel_entry

    failed = False
    dumped, kernels, errors = [], [], []
    with room_for_nesting():
        for m in modules(files, nvcc_flags):
            failed |= bool(m.errors)
            if fmt == "json":
                dumped.append(module_json(m))
                kernels += [kernel_entry(m.filename, k.name, {}) for k in m.kernels]
                errors += [error_json(e, m.filename) for e in m.errors]
            elif m.items:
                click.echo(parse_summary(m))
        if fmt == "json":
            click.echo(json_document("parse", kernels, errors, files=dumped))
    if failed:
        ctx.exit(2)
