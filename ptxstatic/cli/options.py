"""Options shared by several commands, and the one launch-option parser of every command that takes a launch."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from ptxstatic.toolchain.nvcc import DEFAULT_FLAGS

if TYPE_CHECKING:
    from ptxstatic.block_counts import BlockCounts

nvcc_flags = click.option(
    "--nvcc-flags", default=DEFAULT_FLAGS, show_default=True, metavar="FLAGS",
    help="Flags for nvcc when an input is a .cu file.",
)


#: where ``--format`` is remembered in the context's ``meta`` (shared with the group, which reports an error
#: that ends a ``--format json`` command as a JSON document)
FORMAT_KEY = "ptxstatic.format"


def output_format(*choices: str) -> click.Option:
    def remember(ctx: click.Context, param: click.Parameter, value: str) -> str:
        ctx.meta[FORMAT_KEY] = value
        return value

    return click.option(
        "--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True,
        help="Output format on stdout.", callback=remember,
    )


def instrument_options(command: Callable) -> Callable:
    """``--mode``, ``--stride``, ``--banks`` of the instrumentation pass (``instrument`` and ``profile``)."""
    from ptxstatic.counts.instrumentation.counter_map import MODES

    command = click.option("--banks", default=16, show_default=True, help="Counter banks (a power of two).")(command)
    command = click.option("--stride", default=1, show_default=True,
                           help="Sample mode: only CTAs whose linear id is a multiple of this count.")(command)
    return click.option("--mode", type=click.Choice(MODES), default="all", show_default=True,
                        help="all CTAs; a sample of CTAs (extrapolated to the grid); or one warp of CTA 0.")(command)


def launch_options(*, required: bool, runs_kernels: bool = False) -> Callable[[Callable], Callable]:
    """``--grid X[,Y,Z] --block X[,Y,Z] --shared BYTES --param NAME=VALUE`` (``--arg`` is the same option) and
    ``--launch GRID/BLOCK|JSON|FILE.json``, given to the command as one ``launch`` argument.

    ``--launch`` gives the whole configuration; ``--grid``, ``--block`` and ``--shared`` override its parts,
    and every ``--param`` is added to its arguments. Without any of them the launch is one thread
    (``required``) or None. ``runs_kernels``: buffers are allocated and filled (``buf:`` specs).
    """
    param_help = ("A kernel argument by PTX name, index or param_<index>: n=4096, alpha=1.5"
                  + (", x=buf:f32:4096[:FILL[:V]][:out]." if runs_kernels else ". Pointer arguments need no value."))
    options = (
        click.option("--grid", metavar="X[,Y,Z]", help="CTAs per grid dimension [default: 1]."),
        click.option("--block", metavar="X[,Y,Z]", help="Threads per CTA dimension [default: 1]."),
        click.option("--shared", "shared_bytes", type=int, metavar="BYTES",
                     help="Dynamic shared memory per CTA [default: 0]."),
        click.option("--param", "--arg", "params", multiple=True, metavar="NAME=VALUE", help=param_help),
        click.option("--launch", "launch_spec", metavar="GRID/BLOCK|JSON|FILE.json",
                     help="The launch in one option: 1024/256, or Launch JSON inline or in a file."),
    )

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def with_launch(*args, grid: str | None, block: str | None, shared_bytes: int | None,
                        params: tuple[str, ...], launch_spec: str | None, **kwargs):
            launch = resolve_launch(grid, block, shared_bytes, params, launch_spec, required)
            return command(*args, launch=launch, **kwargs)

        for option in reversed(options):
            with_launch = option(with_launch)
        return with_launch

    return decorate


def resolve_launch(grid: str | None, block: str | None, shared_bytes: int | None, params: tuple[str, ...],
                   spec: str | None, required: bool):
    """The :class:`~ptxstatic.launch.Launch` the launch options describe (None: no launch given)."""
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.launch import Launch, dim3, launch_from_spec, parse_arg

    launch = launch_from_spec(spec) if spec else None
    if params and launch is None and not (grid or block):
        raise PtxstaticError("--param needs a launch: give --grid and --block, or --launch GRID/BLOCK")
    if launch is None and (grid or block or shared_bytes is not None or required):
        launch = Launch()
    if launch is None:
        return None
    if grid:
        launch.grid = dim3(grid)
    if block:
        launch.block = dim3(block)
    if shared_bytes is not None:
        launch.shared_bytes = shared_bytes
    given = [parse_arg(p) for p in params]
    names = [name for name, _ in given]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise PtxstaticError(f"--param {twice} is given twice; give each parameter once")
    launch.args.update(given)
    return launch.validate()


def max_seconds(command: Callable) -> Callable:
    """``--max-seconds S``: CPU seconds the static block-count interpreter may run (docs/static_counts.md)."""
    from ptxstatic.limits import STATIC_MAX_SECONDS

    return click.option("--max-seconds", type=click.FloatRange(min=0.0, min_open=True), default=STATIC_MAX_SECONDS,
                        show_default=True, metavar="S",
                        help="Stop interpreting block counts after S CPU seconds; threads not counted by then "
                             "get branch-probability estimates, flagged.")(command)


def measured_profile(command: Callable) -> Callable:
    """``--profile COUNTS.json``: block counts measured in a run of the kernel, loaded as ``profile``
    (a :class:`~ptxstatic.block_counts.BlockCounts` or None)."""

    def load(ctx: click.Context, param: click.Parameter, value: str | None) -> BlockCounts | None:
        from ptxstatic.block_counts import BlockCounts
        from ptxstatic.errors import PtxstaticError

        if not value:
            return None
        counts = BlockCounts.load(value)
        if counts.source == "static":
            raise PtxstaticError(f"--profile {value}: these counts are a static estimate; give counts measured "
                                 "in a run (`ptxstatic profile`, or the emulator's)")
        return counts

    return click.option("--profile", "profile", metavar="COUNTS.json", callback=load,
                        help="Block counts measured in a run of the kernel, of any launch (`ptxstatic profile` "
                             "on a GPU, or the emulator's): data-dependent branches are split as they went there "
                             "instead of by the 1/2 and 1/8 heuristics.")(command)
