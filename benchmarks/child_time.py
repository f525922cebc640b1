"""Timing one command as a child process: its wall-clock seconds and the CPU seconds of it and its children,
as the operating system accounts them."""

from __future__ import annotations

import resource
import subprocess
import time
from typing import Any


def run_timed(cmd: list[str], **kwargs: Any) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd`` (output captured as text; ``kwargs`` go to :func:`subprocess.run`) and return it with its
    wall-clock seconds and CPU seconds (user + system, the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
