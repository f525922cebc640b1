"""Files a child process cannot read, also where the tests run as root (root reads any file): the child is
started without the capabilities that let root ignore file permissions (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, dropped from its bounding set before it executes)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def make_unreadable(path: Path) -> Path:
    """No permission on ``path`` for anyone (a file cannot be read, a directory cannot be listed)."""
    path.chmod(0)
    return path


def without_root_read() -> None:
    """``preexec_fn`` of a child that must meet file permissions as an ordinary user does."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
