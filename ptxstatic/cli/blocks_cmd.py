"""``ptxstatic blocks``: static per-block execution counts of one kernel launch, without a GPU."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from ptxstatic.cli import options


def launch_options(f: Callable) -> Callable:
    """--grid, --block, --shared and --param, shared by the commands that need a launch."""
    for opt in reversed((
        click.option("--grid", default="1", show_default=True, metavar="X[,Y,Z]", help="CTAs per grid dimension."),
        click.option("--block", default="1", show_default=True, metavar="X[,Y,Z]",
                     help="Threads per CTA dimension."),
        click.option("--shared", "shared_bytes", default=0, show_default=True,
                     help="Dynamic shared memory per CTA (bytes)."),
        click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
                     help="A kernel argument by PTX name, index or param_<index>: n=4096, 2=1.5. "
                          "Pointer arguments need no value."),
    )):
        f = opt(f)
    return f


def make_launch(grid: str, block: str, shared_bytes: int, params: tuple[str, ...]):
    from ptxstatic.launch import Launch, dim3, parse_arg

    return Launch(dim3(grid), dim3(block), shared_bytes, dict(parse_arg(p) for p in params))


@click.command()
@click.argument("source", metavar="FILE")
@click.option("--kernel", "-k", required=True, metavar="NAME", help="The kernel (.entry) to estimate.")
@launch_options
@options.output_format("text", "json")
@click.option("-o", "--output", metavar="COUNTS.json", help="Also write the counts as BlockCounts JSON.")
@options.nvcc_flags
def blocks(source: str, kernel: str, grid: str, block: str, shared_bytes: int, params: tuple[str, ...], fmt: str,
           output: str | None, nvcc_flags: str) -> None:
    """Estimate how often each basic block of KERNEL in FILE (.ptx or .cu) runs in one launch.

    Control flow is interpreted over every thread of the launch; counts are exact where it depends only on
    the launch configuration and scalar arguments, and flagged as estimates (with the reason) where it
    depends on data. See docs/static_counts.md.
    """
    from ptxstatic.analysis.cfg import build_cfg
    from ptxstatic.cli.inputs import load
    from ptxstatic.counts.static.estimate import estimate_counts

    module = load(source, nvcc_flags, recover=False)
    est = estimate_counts(module, kernel, make_launch(grid, block, shared_bytes, params))
    if output:
        est.counts.save(output)
    if fmt == "json":
        click.echo(json.dumps(est.to_dict(), indent=1))
        return
    launch = est.counts.launch
    click.echo(f"{module.filename}: {kernel}  grid {launch.grid}  block {launch.block}  ({est.method})")
    for note in est.notes:
        click.echo(f"  note: {note}")
    click.echo(f"  {'function':<32} {'block':>5} {'label':<16} {'lines':<11} {'count':>16}  status")
    for fn, counts in est.counts.counts.items():
        cfg = build_cfg(module.function(fn))
        why = est.reasons.get(fn, {})
        for b, c in counts.items():
            blk = cfg.blocks[b]
            lines = "{}-{}".format(*blk.lines)
            status = f"estimated: {why[b]}" if b in why else "exact"
            count = f"{c:.0f}" if c == int(c) else f"{c:.2f}"
            click.echo(f"  {fn[:32]:<32} {b:>5} {blk.name[:16]:<16} {lines:<11} {count:>16}  {status}")
    for r in est.functions():
        click.echo(f"  {r.name}: {r.blocks} blocks, {r.exact} exact, {r.estimated} estimated")
