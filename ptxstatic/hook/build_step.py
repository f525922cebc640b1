"""Running one compiler command under the hook: nvcc first, the analysis beside it, nvcc's result unchanged.

nvcc inherits the hook's standard input, output and error, so its messages reach the build as they are;
the diagnostics follow on standard error after nvcc has finished, and the hook exits with nvcc's status (or
dies of the same signal). Only ``--strict`` can change the status, and only of a step nvcc completed: to 1
when findings reach the configured ``fail-on`` severity or the analysis failed; the step's output file
(``-o``) is then removed so that the build tool retries the step next time, as after a compiler error.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys

from ptxstatic.hook.capture import PtxCapture, nvcc_temp_dir
from ptxstatic.toolchain.nvcc_command import NvccCommand, parse_command
from ptxstatic.toolchain.passthrough import exec_command, start_command

# Only what starting nvcc needs is imported before it starts (no pathlib, tempfile or shutil): every
# millisecond before nvcc's start adds to the build; the rest loads in the analysis thread beside nvcc.


def disabled() -> bool:
    """``PTXSTATIC_DISABLE`` set to anything but empty or 0: the hook only runs the command."""
    return os.environ.get("PTXSTATIC_DISABLE", "") not in ("", "0")


def exec_compiler(argv: list[str]) -> None:
    """Replace this process by the command (the pass-through path); returns only if that fails."""
    try:
        exec_command(argv)
    except OSError as exc:
        sys.stderr.write(f"ptxstatic-nvcc: error: cannot run {argv[0]}: {exc.strerror or exc}\n")
        sys.exit(127)


def run_hook(argv: list[str], strict: bool = False) -> int:
    """Run the compiler command ``argv`` (compiler path first) and analyse what it compiles; returns the exit
    status for the hook process (negative: die of that signal)."""
    if not argv:
        sys.stderr.write("ptxstatic-nvcc: error: no compiler command given\n")
        return 2
    if disabled():
        exec_compiler(argv)
    cwd = os.getcwd()
    cmd = parse_command(argv, cwd)
    if not cmd.analysed:
        exec_compiler(argv)
    try:
        private = _private_dir()
    except OSError:  # no temporary directory to work in: build without analysis
        exec_compiler(argv)
    try:
        return _run_with_analysis(cmd, cwd, private, strict)
    finally:
        _remove(private)


def _private_dir() -> str:
    """A new directory for the captured PTX, beside nvcc's temporary files (so hard links work)."""
    path = os.path.join(nvcc_temp_dir(), f"ptxstatic-hook-{os.getpid()}-{os.urandom(4).hex()}")
    os.mkdir(path, 0o700)
    return path


def _remove(directory: str) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            os.unlink(entry.path)
        os.rmdir(directory)


def _run_with_analysis(cmd: NvccCommand, cwd: str, private: str, strict: bool) -> int:
    capture = PtxCapture(private, cmd.keep_dir, tuple(_stem(i) for i in cmd.inputs))
    try:
        proc = start_command(cmd.argv)
    except OSError as exc:
        sys.stderr.write(f"ptxstatic-nvcc: error: cannot run {cmd.argv[0]}: {exc.strerror or exc}\n")
        return 127
    capture.root_pid = proc.pid
    capture.start()
    capture.scan()
    previous = _forward_signals(proc)
    from ptxstatic.hook.lint_thread import Analysis

    analysis = Analysis(cmd, cwd, strict)
    analysis.start()
    try:
        status = _wait(proc, capture, analysis, cmd.best_target)
    finally:
        capture.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    analysis.nvcc_finished(status)
    analysis.join()
    outcome = analysis.outcome
    if outcome.text:
        sys.stderr.write(outcome.text)
        sys.stderr.flush()
    if strict and status == 0 and (outcome.failures or outcome.findings_at_fail_level):
        if cmd.output:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(cwd, cmd.output))
        return 1
    return status


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _wait(proc: subprocess.Popen, capture: PtxCapture, analysis, best: str | None) -> int:
    """Service the capture until nvcc exits (woken by the exit itself where pidfd is available).

    Once the PTX of every input for the ``best`` target is complete, the watch is closed at once and the rest
    is waiting: closing an inotify watch costs the kernel a walk over the watched directory's entries, which
    is better spent beside nvcc than after it.
    """
    pending = set(capture.stems) if best is not None and capture.stems else None
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError:
            pidfd = None
    watch = capture.fileno()
    try:
        while proc.poll() is None and pending != set():
            if watch is not None:
                ready, _, _ = select.select([watch] + ([pidfd] if pidfd is not None else []), [], [],
                                            None if pidfd is not None else 0.02)
                done = capture.poll(0.0) if watch in ready else []
            else:
                done = capture.poll(0.01)
            for captured in done:
                analysis.offer(captured)
                if pending is not None and captured.target == best:
                    pending.discard(captured.stem)
        if pending == set():
            capture.close()
            proc.wait()
        else:
            for captured in capture.poll(0.0):
                analysis.offer(captured)
        for captured in capture.finish():
            analysis.offer(captured)
    finally:
        if pidfd is not None:
            os.close(pidfd)
    return proc.returncode


def _forward_signals(proc: subprocess.Popen) -> dict[int, object]:
    """While nvcc runs: ignore Ctrl-C (nvcc gets it from the terminal too), pass SIGTERM and SIGHUP on."""
    previous: dict[int, object] = {}

    def forward(sig: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            proc.send_signal(sig)

    for sig, handler in ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward), (signal.SIGHUP, forward)):
        with contextlib.suppress(ValueError, OSError):  # not the main thread, or not settable here
            previous[sig] = signal.signal(sig, handler)
    return previous


def exit_like(status: int, fast: bool = False) -> None:
    """Exit with ``status``; a negative status is a signal, which this process then dies of, as nvcc did.

    ``fast`` (the console script, whose process ends here) skips the interpreter's teardown of every loaded
    module, about 10 ms of CPU on each compile; the standard streams are flushed first, and the analysis has
    already written its caches.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    if fast:
        os._exit(status)
    sys.exit(status)
