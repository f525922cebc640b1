"""Options shared by several commands."""

from __future__ import annotations

import click

from ptxstatic.toolchain.nvcc import DEFAULT_FLAGS

nvcc_flags = click.option(
    "--nvcc-flags", default=DEFAULT_FLAGS, show_default=True, metavar="FLAGS",
    help="Flags for nvcc when an input is a .cu file.",
)


def output_format(*choices: str) -> click.Option:
    return click.option(
        "--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True,
        help="Output format on stdout.",
    )
