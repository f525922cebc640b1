"""``ptxstatic nvcc -- COMPILER ARGS...``: the build-step hook as a sub-command (same as ``ptxstatic-nvcc``)."""

from __future__ import annotations

import click


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--strict", is_flag=True, envvar="PTXSTATIC_STRICT",
              help="Fail a step that compiled (status 1) when findings reach the configured fail-on severity "
                   "or the analysis fails; its output file is removed.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def nvcc(strict: bool, command: tuple[str, ...]) -> None:
    """Run the nvcc COMMAND unchanged and analyse the PTX of the CUDA it compiles.

    nvcc's output and exit status pass through; findings follow on stderr as compiler warnings
    (FILE:LINE:COL: warning: ... [PSnnn]). Steps that compile no CUDA pass straight through, and
    PTXSTATIC_DISABLE=1 turns the analysis off.
    """
    from ptxstatic.hook.build_step import exit_like, run_hook

    exit_like(run_hook(list(command), strict))
