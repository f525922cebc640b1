"""``ptxstatic features``: the portable features of one kernel launch (docs/features.md)."""

from __future__ import annotations

import json

import click

from ptxstatic.cli import options
from ptxstatic.cli.blocks_cmd import launch_options, make_launch


@click.command()
@click.argument("source", metavar="FILE")
@click.option("--kernel", "-k", required=True, metavar="NAME", help="The kernel (.entry).")
@click.option("--counts", "counts_file", metavar="COUNTS.json",
              help="Block counts (from `profile` or `blocks -o`); without it they are estimated statically "
                   "for the launch given by --grid/--block/--param.")
@launch_options
@click.option("--gpu", "gpu_name", metavar="NAME", help="GPU for occupancy and waves: titanx, t4, a100, h100, ...")
@options.output_format("text", "json")
@options.nvcc_flags
def features(source: str, kernel: str, counts_file: str | None, grid: str, block: str, shared_bytes: int,
             params: tuple[str, ...], gpu_name: str | None, fmt: str, nvcc_flags: str) -> None:
    """Portable features of KERNEL in FILE (.ptx or .cu): GPU Mangrove's twelve and richer ones.

    Occupancy, registers and spills need ptxas on the PATH (and --gpu for occupancy and waves).
    """
    from ptxstatic.cli.inputs import load
    from ptxstatic.counts.static.estimate import estimate_counts
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.features.occupancy import gpu_spec
    from ptxstatic.features.portable import FEATURES, features_from_counts
    from ptxstatic.ptx.printer import module as print_module
    from ptxstatic.toolchain.ptxas import ptxas_stats

    module = load(source, nvcc_flags, recover=False)
    if counts_file:
        counts = _load_counts(counts_file)
    else:
        counts = estimate_counts(module, kernel, make_launch(grid, block, shared_bytes, params)).counts
    target = gpu_spec(gpu_name) if gpu_name else None
    arch = target.arch if target else module.sm
    stats = None
    try:
        stats = ptxas_stats(print_module(module), arch) if arch else None
    except PtxstaticError as exc:
        click.echo(f"warning: no ptxas statistics: {exc}", err=True)
    values = features_from_counts(module, kernel, counts, gpu=target, ptxas=stats)
    if fmt == "json":
        click.echo(json.dumps({"kernel": kernel, "counts_source": counts.source, "features": values}, indent=1))
        return
    mangrove = [f.name for f in FEATURES if f.mangrove]
    click.echo(f"{module.filename}: {kernel}  (counts: {counts.source})")
    for name in mangrove + [k for k in values if k not in mangrove]:
        v = values.get(name)
        shown = f"{v:.6g}" if isinstance(v, float) else str(v)
        click.echo(f"  {name:<40} {shown}")


def _load_counts(path: str):
    """BlockCounts JSON, or the output of ``ptxstatic profile`` (which holds it under "counts")."""
    from pathlib import Path

    from ptxstatic.block_counts import BlockCounts
    from ptxstatic.errors import PtxstaticError

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PtxstaticError(f"{path}: cannot read block counts: {exc}") from None
    if isinstance(data, dict) and "source" not in data and isinstance(data.get("counts"), dict):
        data = data["counts"]
    return BlockCounts.from_dict(data)
