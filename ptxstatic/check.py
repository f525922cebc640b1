"""``ptxstatic check``, the CI gate: the lint pipeline over paths, then the baseline, the fail-on severity,
the report in the chosen format and the exit status.

Exit status: 0 when no finding (not in the baseline) is at or above the fail-on severity, 1 when one is,
2 for a usage or input error (a file that does not compile or parse, a bad configuration or baseline),
which wins over 1. :func:`run_check` is callable without click.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ptxstatic.findings import Severity
from ptxstatic.lint.baseline import judge, read_baseline, write_baseline
from ptxstatic.lint.batch import LintOptions, lint_paths
from ptxstatic.report.check_output import all_problems, github_report, json_report, problems_text, text_report

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json", "sarif", "github")
#: a run shows a progress bar on standard error once it has taken this long
PROGRESS_AFTER_S = 2.0


@dataclass(frozen=True)
class CheckOptions:
    """``fmt``: one of :data:`FORMATS`; ``fail_on``: the severity that fails (None: each file's
    configured ``fail-on``); ``baseline``: a baseline file (only new findings fail); ``write_baseline``:
    write the run's findings as a baseline; ``source_root``: SARIF's ``%SRCROOT%`` (default: the current
    directory)."""

    fmt: str = "text"
    fail_on: Severity | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    source_root: str | None = None


@dataclass(frozen=True)
class CheckOutcome:
    """The report (for standard output or ``--output``), the messages for standard error (input errors and
    notes), and the exit status."""

    report: str
    messages: str
    status: int


def run_check(paths: list[str], lint: LintOptions, options: CheckOptions, *, progress: bool = False) -> CheckOutcome:
    """Check ``paths``; ``progress`` shows a bar on standard error for runs longer than
    :data:`PROGRESS_AFTER_S`."""
    baseline = read_baseline(options.baseline) if options.baseline else None
    bar = _DelayedBar() if progress else None
    try:
        run = lint_paths(paths, lint, bar)
    finally:
        if bar is not None:
            bar.close()
    verdicts = judge(run, options.fail_on, baseline)
    errors = bool(all_problems(run))
    status = EXIT_ERROR if errors else EXIT_FINDINGS if any(v.fails for v in verdicts) else EXIT_OK
    if options.write_baseline:
        write_baseline(options.write_baseline, verdicts, run)
        status = EXIT_ERROR if errors else EXIT_OK
    if options.fmt == "json":
        report = json_report(run, verdicts, options.fail_on, status)
    elif options.fmt == "sarif":
        from ptxstatic.report.sarif import sarif_report

        report = sarif_report(run, verdicts, options.source_root)
    elif options.fmt == "github":
        report = github_report(run, verdicts, options.fail_on)
    else:
        report = text_report(run, verdicts, options.fail_on)
    return CheckOutcome(report, problems_text(run), status)


class _DelayedBar:
    """The progress callback: a rich bar (report.progress) that appears once the run is slow."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.start < PROGRESS_AFTER_S or done >= total:
                return
            from ptxstatic.report.progress import Progress

            self.bar = Progress(prefix="check: ").__enter__()
        self.bar.step("checking files", done, total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
