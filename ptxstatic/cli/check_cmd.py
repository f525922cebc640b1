"""``ptxstatic check PATHS``: the CI gate (``ptxstatic.check``); exit 0 clean, 1 findings, 2 input error."""

from __future__ import annotations

import os

import click


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(readable=False))  # an unreadable path is its own error
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: compiler-style diagnostics; json: ptxstatic's report "
              "(report/schemas/check.schema.json); sarif: SARIF 2.1.0 for code scanning; github: Actions annotations.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE, not stdout.")
@click.option("--fail-on", type=click.Choice(["note", "warning", "error"]),
              help="Exit 1 when a new finding is at or above this severity [default: the configuration's fail-on, "
                   "else warning].")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Findings listed in FILE do not fail.")
@click.option("--write-baseline", type=click.Path(dir_okay=False),
              help="Write the findings of this run to FILE as the baseline (exit 0 unless an input error).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Use this ptxstatic.toml / pyproject.toml for every path instead of finding each one's.")
@click.option("--build-dir", type=click.Path(file_okay=False),
              help="Where compile_commands.json is [default: the configuration's build-dir, else found "
                   "walking up from each file, in each directory and its build/].")
@click.option("--nvcc-flags", metavar="FLAGS",
              help="nvcc flags for CUDA files that compile_commands.json does not list [default: the "
                   "configuration's nvcc-flags, else -arch=sm_80 -lineinfo].")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="CPUs",
              help="Files analysed at once (processes).")
@click.option("--no-cache", is_flag=True, help="Analyse every file again; do not use or fill the result cache.")
@click.option("--source-root", type=click.Path(file_okay=False),
              help="SARIF's %SRCROOT%: locations are relative to it [default: the current directory].")
def check(paths: tuple[str, ...], fmt: str, output: str | None, fail_on: str | None, baseline: str | None,
          write_baseline: str | None, config_file: str | None, build_dir: str | None, nvcc_flags: str | None,
          jobs: int, no_cache: bool, source_root: str | None) -> int:
    """Check CUDA (.cu, .cuh) and PTX files, and the directories under PATHS [default: .], for findings.

    \b
    Exit status: 0 no new finding at or above --fail-on; 1 such findings; 2 a usage or input error
    (a file that does not compile or parse, a bad configuration, compile_commands.json or baseline);
    the other files are still checked and reported.
    """
    from ptxstatic.check import CheckOptions, run_check
    from ptxstatic.files import write_atomic
    from ptxstatic.findings import Severity
    from ptxstatic.lint.batch import LintOptions

    lint = LintOptions(config=config_file, build_dir=build_dir, nvcc_flags=nvcc_flags, jobs=jobs,
                       use_cache=not no_cache)
    options = CheckOptions(fmt=fmt, fail_on=Severity.parse(fail_on) if fail_on else None, baseline=baseline,
                           write_baseline=write_baseline, source_root=source_root)
    outcome = run_check(list(paths) or ["."], lint, options, progress=True)
    click.echo(outcome.messages, err=True, nl=False)
    if output:
        write_atomic(output, outcome.report)
    else:
        click.echo(outcome.report, nl=False)
    return outcome.status
