"""``ptxstatic features``: the portable features of one kernel launch (docs/features.md)."""

from __future__ import annotations

import click

from ptxstatic.block_counts import BlockCounts
from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("source", metavar="FILE")
@click.option("--kernel", "-k", required=True, metavar="NAME",
              help="The kernel: its C++ name (saxpy, 'reduce<float>') or PTX name.")
@click.option("--counts", "counts_file", metavar="COUNTS.json",
              help="Block counts (from `profile` or `blocks -o`); without it they are estimated statically "
                   "for the launch given by the launch options.")
@options.launch_options(required=True)
@click.option("--gpu", "gpu_name", metavar="NAME", help="GPU for occupancy and waves: titanx, t4, a100, h100, ...")
@options.output_format("text", "json")
@options.max_seconds
@options.measured_profile
@options.nvcc_flags
def features(source: str, kernel: str, counts_file: str | None, launch: Launch, gpu_name: str | None, fmt: str,
             max_seconds: float, profile: BlockCounts | None, nvcc_flags: str) -> None:
    """Portable features of KERNEL in FILE (.ptx or .cu): GPU Mangrove's twelve and richer ones.

    Registers and spills come from ptxas -v for the GPU's architecture (--gpu, else the PTX's target); where
    ptxas cannot assemble for it (CUDA 13 has no Maxwell: --gpu titanx), they are estimated from the PTX and
    the `resources` feature says so. Occupancy and waves need --gpu.
    """
    from ptxstatic.cli.inputs import load
    from ptxstatic.counts.static.estimate import estimate_counts
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.features.portable import features_from_counts
    from ptxstatic.features.resources import kernel_resources
    from ptxstatic.hardware.occupancy import gpu_spec
    from ptxstatic.ptx.kernels import find_kernel
    from ptxstatic.ptx.launch_binding import bind
    from ptxstatic.report.features_text import features_text
    from ptxstatic.report.json_doc import json_document, kernel_entry
    from ptxstatic.toolchain.ptxas import target_arch

    module = load(source, nvcc_flags, recover=False, kernel=kernel)
    kernel = find_kernel(module, kernel).name
    if counts_file and profile is not None:
        raise PtxstaticError("--profile splits the branches of a static estimate; with --counts there is none")
    counts = (BlockCounts.load(counts_file) if counts_file
              else estimate_counts(bind(module, kernel, launch), max_seconds=max_seconds, profile=profile).counts)
    target = gpu_spec(gpu_name) if gpu_name else None
    stats = None
    try:
        stats = kernel_resources(module, target.arch if target else target_arch(module))
    except PtxstaticError as exc:
        click.echo(f"warning: no register or shared-memory figures: {exc}", err=True)
    values = features_from_counts(module, kernel, counts, gpu=target, ptxas=stats)
    if fmt == "json":
        entry = kernel_entry(module.filename, kernel, {"counts_source": counts.source, "features": values})
        click.echo(json_document("features", [entry], []))
    else:
        click.echo(features_text(module.filename, kernel, counts.source, values))
