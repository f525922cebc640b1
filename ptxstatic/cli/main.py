"""The ``ptxstatic`` command: a click group whose sub-commands load their modules on first use."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys

import click

from ptxstatic.errors import PtxstaticError

#: command name -> "module:attribute" of its click command (imported only when the command runs)
COMMANDS: dict[str, str] = {
    "parse": "ptxstatic.cli.parse_cmd:parse",
    "analyze": "ptxstatic.cli.analyze_cmd:analyze",
    "blocks": "ptxstatic.cli.blocks_cmd:blocks",
    "features": "ptxstatic.cli.features_cmd:features",
    "instrument": "ptxstatic.cli.instrument_cmd:instrument",
    "profile": "ptxstatic.cli.profile_cmd:profile",
    "collect": "ptxstatic.cli.collect_cmd:collect",
    "train": "ptxstatic.cli.train_cmd:train",
    "evaluate": "ptxstatic.cli.evaluate_cmd:evaluate",
    "predict": "ptxstatic.cli.predict_cmd:predict",
    "nvcc": "ptxstatic.cli.nvcc_cmd:nvcc",
    "check": "ptxstatic.cli.check_cmd:check",
    "rules": "ptxstatic.cli.rules_cmd:rules",
    "rule": "ptxstatic.cli.rules_cmd:rule",
    "lsp": "ptxstatic.cli.lsp_cmd:lsp",
    "report": "ptxstatic.cli.report_cmd:report",
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is invoked or listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; an error that ends a ``--format json`` command is also its JSON document on
        standard output (``errors`` listing it), so that a reader of the output learns why it is empty."""
        try:
            return super().invoke(ctx)
        except PtxstaticError as exc:
            from ptxstatic.cli.options import FORMAT_KEY

            if ctx.meta.get(FORMAT_KEY) == "json" and ctx.invoked_subcommand:
                from ptxstatic.report.json_doc import error_document

                document = error_document(ctx.invoked_subcommand, exc)
                if document is not None:
                    click.echo(document)
            raise


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ptxstatic", prog_name="ptxstatic")
def cli() -> None:
    """Static performance, power and energy analysis of CUDA PTX."""


def main() -> None:
    """Console-script entry point: user-facing errors become one message and exit status 2; SIGTERM, SIGINT
    and SIGHUP stop the tools it runs and remove their temporary files, then end the process by the same
    signal."""
    from ptxstatic.toolchain.process import Terminated, stop_on_signals

    stop_on_signals()
    try:
        status = cli.main(standalone_mode=False)
    except PtxstaticError as exc:
        click.echo(exc.render(), err=True)
        sys.exit(2)
    except click.exceptions.Abort as exc:  # click's for a KeyboardInterrupt, a Terminated among them
        if isinstance(exc.__cause__, Terminated):
            _die_of(exc.__cause__.signum)
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if isinstance(exc, click.UsageError) else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    if isinstance(status, int):  # ctx.exit(N) inside a command returns N in non-standalone mode
        sys.exit(status)


def _die_of(signum: int) -> None:
    """End the process by ``signum`` with its default action, as the parent expects of a signalled child."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # where the default action does not end the process
