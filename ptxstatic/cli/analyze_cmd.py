"""``ptxstatic analyze``: per-kernel blocks, loops, instruction mix and dependency statistics."""

from __future__ import annotations

import json

import click

from ptxstatic.cli import options
from ptxstatic.cli.inputs import modules


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--kernel", "-k", "kernel", metavar="NAME", help="Only this kernel (or function).")
@click.option("--functions/--kernels-only", default=False, help="Also analyse device functions (.func).")
@click.option("--call-graph", is_flag=True, help="Include each module's call graph.")
@options.output_format("text", "json")
@options.nvcc_flags
@click.pass_context
def analyze(ctx: click.Context, files: tuple[str, ...], kernel: str | None, functions: bool, call_graph: bool,
            fmt: str, nvcc_flags: str) -> None:
    """Analyse the kernels of PTX FILES (.ptx, .cu compiled with nvcc, directories, or - for stdin).

    Malformed functions are reported as FILE:LINE:COL errors and skipped; the rest of the file is still
    analysed, and the exit status is 2.
    """
    from ptxstatic.analysis.cfg import call_graph as build_call_graph
    from ptxstatic.analysis.summary import summarize_module
    from ptxstatic.report.analysis_text import function_summary, module_header

    failed = False
    results = []
    for m in modules(files, nvcc_flags):
        failed |= bool(m.errors)
        if not m.items:
            continue
        summaries = summarize_module(m, kernels_only=not functions, name=kernel)
        entry = {"file": m.filename, "version": m.version, "target": list(m.target),
                 "functions": [s.to_dict() for s in summaries], "errors": [str(e) for e in m.errors]}
        if call_graph:
            g = build_call_graph(m.functions)
            entry["call_graph"] = [{"caller": u, "callee": v, "line": d.get("line")} for u, v, d in g.edges(data=True)]
        results.append(entry)
        if fmt == "text":
            click.echo(module_header(m))
            for s in summaries:
                click.echo(function_summary(s))
            if call_graph:
                for c in entry["call_graph"]:
                    click.echo(f"  call {c['caller']} -> {c['callee']} (line {c['line']})")
            if kernel and not summaries:
                click.echo(f"  no kernel named {kernel}")
    if fmt == "json":
        click.echo(json.dumps(results if len(results) != 1 else results[0], indent=1))
    if kernel and not any(r["functions"] for r in results):
        raise click.BadParameter(f"no {'function' if functions else 'kernel'} named {kernel!r}", param_hint="--kernel")
    if failed:
        ctx.exit(2)
