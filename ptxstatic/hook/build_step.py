"""Running one compiler command under the hook: nvcc first, the analysis beside it, nvcc's result unchanged.

nvcc inherits the hook's standard input, output and error, so its messages reach the build as they are;
the diagnostics follow on standard error after nvcc has finished, and the hook exits with nvcc's status (or
dies of the same signal). Only ``--strict`` can change the status, and only of a step nvcc completed: to 1
when findings reach the configured ``fail-on`` severity or the analysis failed; the step's output file
(``-o``) is then removed so that the build tool retries the step next time, as after a compiler error.

The analysis runs in the build's analysis server (:mod:`.client`, :mod:`.server`) where it can: the hook
registers the compile before starting nvcc and receives the diagnostics when nvcc has finished. Without a
server (``PTXSTATIC_SERVER=0``, ``hook-server = false``, caching off, or none answering) it runs in a thread
of this process (:mod:`.lint_thread`); so it does when the server stops while nvcc runs, with the PTX nvcc
has not deleted yet, or after nvcc, with the PTX the server had taken in.
"""

from __future__ import annotations

import os
import select
import sys

try:  # signal's own module wraps this C core in enums, an import of several ms on every compile
    import _signal as signal
except ImportError:  # pragma: no cover - an interpreter without it
    import signal  # type: ignore[no-redef]

from ptxstatic.hook.client import Outcome, Session
from ptxstatic.limits import HOOK_SERVER_RESULT_S
from ptxstatic.toolchain.nvcc_command import NvccCommand, parse_command
from ptxstatic.toolchain.passthrough import exec_command, start_command

# Only what starting nvcc needs is imported before it starts (no pathlib, subprocess, tempfile or shutil): every
# millisecond before nvcc's start adds to the build; the in-process analysis loads in a thread beside nvcc.


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


class Child:
    """The compiler's process, with a pidfd (readable when it exits) where the system has them."""

    def __init__(self, argv: list[str]) -> None:
        self.pid = start_command(argv)
        self.returncode: int | None = None
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:  # noqa: SIM105 - no contextlib: it imports collections, on every compile
                os.kill(self.pid, sig)
            except OSError:
                pass

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


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
    session = _server_session(cmd, cwd, strict)
    try:
        child = Child(cmd.argv)
    except OSError as exc:
        if session is not None:
            session.close()
        sys.stderr.write(f"ptxstatic-nvcc: error: cannot run {cmd.argv[0]}: {exc.strerror or exc}\n")
        return 127
    signals = _forward_signals(child)
    try:
        if session is not None:
            status, outcome = _served(cmd, cwd, strict, child, session, signals)
        else:
            status, outcome = _in_process(cmd, cwd, strict, child, signals)
    finally:
        _restore(signals)
        child.close()
    if outcome.text:
        sys.stderr.write(outcome.text)
        sys.stderr.flush()
    if strict and status == 0 and (outcome.failures or outcome.findings_at_fail_level):
        if cmd.output:
            try:  # noqa: SIM105 - no contextlib (see above)
                os.unlink(os.path.join(cwd, cmd.output))
            except OSError:
                pass
        return 1
    return status


def _server_session(cmd: NvccCommand, cwd: str, strict: bool) -> Session | None:
    """The compile registered with the build's analysis server, or None to analyse in this process."""
    from ptxstatic.hook import client

    if not client.enabled():
        return None
    from ptxstatic.config_search import config_file, server_allowed
    from ptxstatic.user_cache import cache_dir

    config = config_file(os.path.join(cwd, cmd.inputs[0]))
    cache = cache_dir()
    if cache is None or not server_allowed(config):
        return None
    return client.open_session(cmd.argv, cwd, strict, config, cache)


def _served(cmd: NvccCommand, cwd: str, strict: bool, child: Child, session: Session,
            signals: dict[int, object]) -> tuple[int, Outcome]:
    """nvcc's status and the server's outcome; in this process when the server goes away first."""
    fds = [session.fileno()] + ([child.pidfd] if child.pidfd is not None else [])
    while child.poll() is None:
        ready = select.select(fds, [], [], None if child.pidfd is not None else 0.02)[0]
        if session.fileno() in ready and child.poll() is None:  # the server stopped while nvcc runs
            session.close()
            _remove(session.private)
            return _in_process(cmd, cwd, strict, child, signals)
    status = child.wait()
    _restore(signals)
    reply = session.receive(HOOK_SERVER_RESULT_S) if session.send({"status": status}) else None
    session.close()
    outcome = Outcome.from_message(reply) if reply is not None else None
    if outcome is not None:
        return status, outcome
    if not session.broken:
        return status, Outcome(f"ptxstatic: note: the analysis server did not answer in {HOOK_SERVER_RESULT_S:g} s; "
                               "nothing analysed (the build is not affected)\n")
    return status, _analyse_left(cmd, cwd, strict, session.private, status)


def _in_process(cmd: NvccCommand, cwd: str, strict: bool, child: Child,
                signals: dict[int, object]) -> tuple[int, Outcome]:
    """Capture and analyse nvcc's PTX in this process while nvcc (already started) runs."""
    from ptxstatic.hook.capture import PtxCapture, nvcc_temp_dir, private_dir
    from ptxstatic.hook.lint_thread import Analysis

    try:
        private = private_dir(nvcc_temp_dir())
    except OSError:  # no temporary directory to work in: build without analysis
        return child.wait(), Outcome()
    try:
        capture = PtxCapture(private, cmd.keep_dir, tuple(_stem(i) for i in cmd.inputs))
        capture.root_pid = child.pid
        capture.start()
        capture.scan()
        analysis = Analysis(cmd, cwd, strict)
        analysis.start()
        try:
            status = _wait(child, capture, analysis, cmd.best_target, cmd.sass_archs)
        finally:
            capture.close()
            _restore(signals)
        analysis.nvcc_finished(status)
        analysis.join()
        return status, analysis.outcome
    finally:
        _remove(private)


def _analyse_left(cmd: NvccCommand, cwd: str, strict: bool, private: str | None, status: int) -> Outcome:
    """The PTX a server that stopped after nvcc had taken in (in ``private``), analysed here."""
    from ptxstatic.hook.capture import captured_in
    from ptxstatic.hook.lint_thread import Analysis

    analysis = Analysis(cmd, cwd, strict)
    analysis.start()
    for captured in captured_in(private) if private else []:
        analysis.offer(captured)
    analysis.nvcc_finished(status)
    analysis.join()
    _remove(private)
    return analysis.outcome


def _remove(directory: str | None) -> None:
    if directory:
        from ptxstatic.hook.capture import remove_dir

        remove_dir(directory)


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _wait(child: Child, capture, analysis, best: str | None, assembled: list[str]) -> int:
    """Service the capture until nvcc exits (woken by the exit itself where pidfd is available).

    Once the PTX of every input for the ``best`` target is complete, and its cubin where nvcc assembles for
    that target (``assembled``), the watch is closed at once and the rest is waiting: closing an inotify watch
    costs the kernel a walk over the watched directory's entries, which is better spent beside nvcc than after
    it.
    """
    pending = set(capture.stems) if best is not None and capture.stems else None
    cubins: set[str] = set()  # origins of the best PTX whose cubin nvcc is assembling
    watch = capture.fileno()
    while child.poll() is None and (pending != set() or cubins):
        if watch is not None:
            fds = [watch] + ([child.pidfd] if child.pidfd is not None else [])
            ready = select.select(fds, [], [], None if child.pidfd is not None else 0.02)[0]
            done = capture.poll(0.0) if watch in ready else []
        else:
            done = capture.poll(0.01)
        for captured in done:
            analysis.offer(captured)
            if captured.sass is not None and captured.sass == best:
                cubins.discard(captured.origin)
            elif pending is not None and captured.target == best and captured.stem in pending:
                pending.discard(captured.stem)
                if best in assembled:
                    cubins.add(captured.origin)
    if pending == set() and not cubins:
        capture.close()
        child.wait()
    else:
        for captured in capture.poll(0.0):
            analysis.offer(captured)
    for captured in capture.finish():
        analysis.offer(captured)
    return child.wait()


def _forward_signals(child: Child) -> dict[int, object]:
    """While nvcc runs: ignore Ctrl-C (nvcc gets it from the terminal too), pass SIGTERM and SIGHUP on."""
    previous: dict[int, object] = {}

    def forward(sig: int, _frame: object) -> None:
        child.send_signal(sig)

    for sig, handler in ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward), (signal.SIGHUP, forward)):
        try:  # noqa: SIM105 - no contextlib (see Child.send_signal)
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or not settable here
            pass
    return previous


def _restore(signals: dict[int, object]) -> None:
    """The signal handlers as they were before nvcc started (once: later calls do nothing)."""
    for sig, handler in signals.items():
        signal.signal(sig, handler)
    signals.clear()


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
