"""Running a build's own compiler command unchanged, for the nvcc hook (a compiler launcher).

Unlike :func:`~ptxstatic.toolchain.process.run_tool`, the command inherits this process's standard input,
output and error, and has no time limit: how long a build step may take is the build's business. Only the
standard library is imported here, so that the compiler starts without waiting for the package.
"""

from __future__ import annotations

import os
import subprocess


def exec_command(argv: list[str]) -> None:
    """Replace this process by ``argv`` (``argv[0]`` searched on the PATH); raises ``OSError`` when that
    fails, and does not return otherwise."""
    os.execvp(argv[0], argv)


def start_command(argv: list[str]) -> subprocess.Popen:
    """Start ``argv`` as a child process with this process's standard streams; ``OSError`` when it cannot."""
    return subprocess.Popen(argv)
