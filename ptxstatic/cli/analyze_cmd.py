"""``ptxstatic analyze``: per-kernel blocks, loops, instruction mix and dependency statistics."""

from __future__ import annotations

import click

from ptxstatic.cli import options
from ptxstatic.cli.inputs import streams


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--kernel", "-k", "kernel", metavar="NAME", help="Only this kernel (or function), by C++ or PTX name.")
@click.option("--functions/--kernels-only", default=False, help="Also analyse device functions (.func).")
@click.option("--call-graph", is_flag=True, help="Include each module's call graph.")
@options.output_format("text", "json")
@options.nvcc_flags
@click.pass_context
def analyze(ctx: click.Context, files: tuple[str, ...], kernel: str | None, functions: bool, call_graph: bool,
            fmt: str, nvcc_flags: str) -> None:
    """Analyse the kernels of PTX FILES (.ptx, .cu compiled with nvcc, directories, or - for stdin).

    Malformed functions are reported as FILE:LINE:COL errors and skipped; the rest of the file is still
    analysed, and the exit status is 2. Functions are read and analysed one at a time, so memory holds one
    function, not the file.
    """
    from ptxstatic.analyze import Selection, summaries
    from ptxstatic.report.analysis_text import function_summary, module_header
    from ptxstatic.report.json_doc import error_json, json_document, kernel_entry

    selection = Selection(kernel, functions)
    failed = False
    results, kernels, errors = [], [], []
    for stream in streams(files, nvcc_flags):
        m = stream.module
        shown = _echo_errors(m.errors, 0)
        if not m.items and not stream.deferred:  # nothing to analyse: the file's errors are all there is
            failed |= bool(m.errors)
            errors += [error_json(e, m.filename) for e in m.errors]
            continue
        if fmt == "text":
            click.echo(module_header(m))
        entry: dict = {"file": m.filename, "version": m.version, "target": list(m.target)}
        found = 0
        edges: list[dict] = []
        for s in summaries(stream, selection, edges if call_graph else None):
            shown = _echo_errors(m.errors, shown)
            kernels.append(kernel_entry(m.filename, s.name, s.to_dict()))
            found += 1
            if fmt == "text":
                click.echo(function_summary(s))
        _echo_errors(m.errors, shown)
        failed |= bool(m.errors)
        errors += [error_json(e, m.filename) for e in m.errors]
        if call_graph:
            entry["call_graph"] = edges
        results.append(entry)
        if fmt == "text":
            for c in edges:
                click.echo(f"  call {c['caller']} -> {c['callee']} (line {c['line']})")
            if kernel and not found:
                click.echo(f"  no kernel named {kernel}")
    if fmt == "json":
        click.echo(json_document("analyze", kernels, errors, files=results))
    if kernel and not kernels:
        raise click.BadParameter(f"no {'function' if functions else 'kernel'} named {kernel!r}", param_hint="--kernel")
    if failed:
        ctx.exit(2)


def _echo_errors(errors: list, shown: int) -> int:
    """Report on stderr the errors after the first ``shown``; returns how many are shown now."""
    for err in errors[shown:]:
        click.echo(err.render(), err=True)
    return len(errors)
