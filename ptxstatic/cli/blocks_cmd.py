"""``ptxstatic blocks``: static per-block execution counts of one kernel launch, without a GPU."""

from __future__ import annotations

import click

from ptxstatic.block_counts import BlockCounts
from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("source", metavar="FILE")
@click.option("--kernel", "-k", required=True, metavar="NAME",
              help="The kernel: its C++ name (saxpy, 'reduce<float>') or PTX name.")
@options.launch_options(required=True)
@options.output_format("text", "json")
@click.option("-o", "--output", metavar="COUNTS.json", help="Also write the counts as BlockCounts JSON.")
@options.max_seconds
@options.measured_profile
@options.nvcc_flags
def blocks(source: str, kernel: str, launch: Launch, fmt: str, output: str | None, max_seconds: float,
           profile: BlockCounts | None, nvcc_flags: str) -> None:
    """Estimate how often each basic block of KERNEL in FILE (.ptx or .cu) runs in one launch.

    Control flow is interpreted over every thread of the launch; counts are exact where it depends only on
    the launch configuration and scalar arguments (CTAs counted by classes that provably take the same path),
    and flagged as estimates (with the reason) where it depends on data or the interpretation ran out of time
    (--max-seconds); --profile splits data-dependent branches as they went in a measured run. See
    docs/static_counts.md.
    """
    from ptxstatic.cli.inputs import load
    from ptxstatic.counts.static.estimate import estimate_counts
    from ptxstatic.ptx.launch_binding import bind
    from ptxstatic.report.blocks_text import estimate_text
    from ptxstatic.report.json_doc import json_document, kernel_entry

    module = load(source, nvcc_flags, recover=False, kernel=kernel)
    bound = bind(module, kernel, launch)
    kernel = bound.name
    est = estimate_counts(bound, max_seconds=max_seconds, profile=profile)
    if output:
        est.counts.save(output)
    if fmt == "json":
        click.echo(json_document("blocks", [kernel_entry(module.filename, kernel, est.to_dict())], []))
    else:
        click.echo(estimate_text(module, est))
