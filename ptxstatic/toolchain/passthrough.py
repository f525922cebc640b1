"""Running a build's own compiler command unchanged, for the nvcc hook (a compiler launcher).

Unlike :func:`~ptxstatic.toolchain.process.run_tool`, the command inherits this process's standard input,
output and error, and has no time limit: how long a build step may take is the build's business. Only the
standard library's ``os`` and ``_signal`` are used here, so that the compiler starts without waiting for the
package (``subprocess`` alone would cost more than the rest of the hook's start).
"""

from __future__ import annotations

import os

try:  # the C core of signal: its module's enums cost an import of several ms on every compile
    import _signal as signal
except ImportError:  # pragma: no cover - an interpreter without it
    import signal  # type: ignore[no-redef]


def exec_command(argv: list[str]) -> None:
    """Replace this process by ``argv`` (``argv[0]`` searched on the PATH); raises ``OSError`` when that
    fails, and does not return otherwise."""
    os.execvp(argv[0], argv)


def start_command(argv: list[str]) -> int:
    """Start ``argv`` (searched on the PATH) as a child process and return its process id; ``OSError`` when it
    cannot. It gets this process's environment, standard streams and inheritable descriptors (those the build
    gave the hook: the hook's own are not inheritable), and the default action for the signals Python ignores."""
    return os.posix_spawnp(argv[0], argv, os.environ, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
