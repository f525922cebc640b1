"""Running a tool of the CUDA toolkit as a subprocess: found on the PATH, bounded in time and in the output
kept, errors as messages, and stopped early when the caller cancels (an editor's newer edit).

Every tool runs in a session of its own and is registered while it runs, and the temporary directories the
tools work in are made by :func:`scratch_directory` and registered too, so that :func:`stop_on_signals`
can end it all when the process is told to stop (SIGTERM, SIGINT, SIGHUP): the tools and the programs they
started are killed and the directories removed on every exit path, in forked worker processes as well
(:func:`stop_workers` passes the stop on to a pool's workers).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import IO

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import TOOL_OUTPUT_BYTES

#: seconds between looks at the cancel event and the deadline while a tool runs
_POLL_S = 0.05
#: the signals that end a run cleanly (the tools killed, the temporary directories removed)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))

_lock = threading.RLock()  # re-entrant: the signal handler may run while the main thread holds it
_running: set[subprocess.Popen] = set()
_scratch: set[str] = set()
_stopping = threading.Event()  # set once the process is told to stop: no tool starts after it


class ToolCancelled(PtxstaticError):
    """The caller cancelled the tool while it ran (it was killed)."""


class ToolTimeout(PtxstaticError):
    """The tool did not finish in the time allowed (it was killed)."""


class Terminated(KeyboardInterrupt):
    """The process was told to stop by a signal (``signum``); raised in the main thread once the tools are
    killed and the temporary directories removed, so that the rest unwinds as on any other exit (a
    ``KeyboardInterrupt``, so that code that finishes its work on Ctrl-C does so on SIGTERM too)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


def find(tool: str) -> str | None:
    """The tool's path on the PATH, or None."""
    return shutil.which(tool)


def run_tool(argv: list[str], timeout_s: float, what: str, *, cwd: str | None = None,
             cancel: threading.Event | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (in ``cwd``) for at most ``timeout_s`` seconds and return what it printed as text, each
    stream cut at :data:`~ptxstatic.limits.TOOL_OUTPUT_BYTES` (the rest is left on disk until the tool
    ends, never in memory); ``what`` names the job in the :class:`PtxstaticError` raised when the tool
    cannot start or does not finish in time (it is killed with the programs it started).

    With ``cancel``, the tool is killed as soon as the event is set and :class:`ToolCancelled` is raised.
    """
    if _stopping.is_set() or (cancel is not None and cancel.is_set()):
        raise ToolCancelled(f"{what}: cancelled")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # unnamed: gone with the process
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                                    start_new_session=os.name == "posix")
        except OSError as exc:
            raise PtxstaticError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from None
        with _lock:
            _running.add(proc)
        try:
            _wait(proc, argv, timeout_s, what, cancel)
        finally:
            if proc.returncode is None:  # timed out, cancelled or interrupted: the tool and what it started
                _kill_group(proc)
                proc.wait()
            with _lock:
                _running.discard(proc)
        return subprocess.CompletedProcess(argv, proc.returncode, _read(out), _read(err))


def _wait(proc: subprocess.Popen, argv: list[str], timeout_s: float, what: str,
          cancel: threading.Event | None) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=_POLL_S)
            return
        except subprocess.TimeoutExpired:
            if _stopping.is_set() or (cancel is not None and cancel.is_set()):
                raise ToolCancelled(f"{what}: cancelled") from None
            if time.monotonic() > deadline:
                raise ToolTimeout(f"{what}: {os.path.basename(argv[0])} did not finish in {timeout_s:.0f} s and "
                                  "was stopped") from None


def _read(stream: IO[bytes]) -> str:
    """A tool's output stream as text, at most :data:`TOOL_OUTPUT_BYTES` of it."""
    size = stream.seek(0, os.SEEK_END)
    stream.seek(0)
    text = stream.read(TOOL_OUTPUT_BYTES).decode("utf-8", errors="replace")
    if size > TOOL_OUTPUT_BYTES:
        text += f"\n[{size - TOOL_OUTPUT_BYTES} more bytes of output not read (limits.TOOL_OUTPUT_BYTES)]\n"
    return text


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the running tool and the programs it started (nvcc runs cicc, ptxas, the host compiler)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[str]:
    """A temporary directory (``ptxstatic-...``), removed when the block ends and, if the process is told to
    stop meanwhile, by :func:`stop_on_signals`'s handler."""
    path = tempfile.mkdtemp(prefix=prefix)
    with _lock:
        _scratch.add(path)
    try:
        yield path
    finally:
        with _lock:
            _scratch.discard(path)
        shutil.rmtree(path, ignore_errors=True)


def stop_on_signals() -> None:
    """Install the handler of :data:`STOP_SIGNALS` that the process does not ignore (a command-line process
    calls it once, first; the worker processes it forks inherit it): kill the running tools, remove the
    scratch directories, then raise :class:`Terminated` in the main thread; a forked worker process exits
    at once."""
    main_pid = os.getpid()

    def handler(signum: int, frame: object) -> None:
        stop_everything()
        if os.getpid() != main_pid:
            os._exit(128 + signum)
        raise Terminated(signum)

    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP, a background job's SIGINT
            signal.signal(signum, handler)


def stop_workers() -> None:
    """Tell this process's worker processes to stop (SIGTERM): forked workers run the handler of
    :func:`stop_on_signals`, killing their tools and removing their scratch directories; for a caller whose
    every child process is such a worker (a pool of analyses)."""
    for child in multiprocessing.active_children():
        with contextlib.suppress(OSError):
            child.terminate()


def stop_everything() -> None:
    """Kill every running tool and remove every scratch directory of this process; no tool starts after it."""
    _stopping.set()
    with _lock:
        running, scratch = list(_running), list(_scratch)
    for proc in running:
        if proc.returncode is None:
            _kill_group(proc)
    for path in scratch:
        shutil.rmtree(path, ignore_errors=True)
