"""Running a tool of the CUDA toolkit as a subprocess: found on the PATH, bounded in time, errors as messages,
and stopped early when the caller cancels (an editor's newer edit)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time

from ptxstatic.errors import PtxstaticError

#: seconds between looks at the cancel event while a cancellable tool runs
_CANCEL_POLL_S = 0.05


class ToolCancelled(PtxstaticError):
    """The caller cancelled the tool while it ran (it was killed)."""


def find(tool: str) -> str | None:
    """The tool's path on the PATH, or None."""
    return shutil.which(tool)


def run_tool(argv: list[str], timeout_s: float, what: str, *, cwd: str | None = None,
             cancel: threading.Event | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (its output captured as text, in ``cwd``) for at most ``timeout_s`` seconds; ``what`` names
    the job in the :class:`PtxstaticError` raised when the tool cannot start or does not finish in time.

    With ``cancel``, the tool is killed as soon as the event is set and :class:`ToolCancelled` is raised.
    """
    try:
        if cancel is None:
            return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                                  check=False, cwd=cwd)
        return _run_cancellable(argv, timeout_s, what, cwd, cancel)
    except subprocess.TimeoutExpired:
        raise PtxstaticError(f"{what}: {argv[0]} did not finish in {timeout_s:.0f} s") from None
    except OSError as exc:
        raise PtxstaticError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from None


def _run_cancellable(argv: list[str], timeout_s: float, what: str, cwd: str | None,
                     cancel: threading.Event) -> subprocess.CompletedProcess[str]:
    if cancel.is_set():
        raise ToolCancelled(f"{what}: cancelled")
    deadline = time.monotonic() + timeout_s
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", cwd=cwd,
                          start_new_session=os.name == "posix") as proc:
        while True:
            try:
                out, err = proc.communicate(timeout=_CANCEL_POLL_S)
                return subprocess.CompletedProcess(argv, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                if cancel.is_set() or time.monotonic() > deadline:
                    _kill_group(proc)
                    proc.communicate()
                    if cancel.is_set():
                        raise ToolCancelled(f"{what}: cancelled") from None
                    raise


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the tool and the programs it started (nvcc runs cicc, ptxas, the host compiler)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
