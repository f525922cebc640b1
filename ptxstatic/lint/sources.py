"""Which files a run checks: the ``.cu``, ``.cuh`` and ``.ptx`` files named, and those under the directories
named (walked recursively, in name order), less what the configuration excludes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ptxstatic.config import Config
from ptxstatic.lint.document import Problem, kind_of


def discover(paths: list[str], config_of: Callable[[str], Config]) -> tuple[list[str], list[Problem]]:
    """(files to check in order, each once; problems: missing paths, dangling links, unreadable directories,
    files of another kind; an unreadable file is the problem of its document).

    ``config_of(path)`` gives the configuration in force for a path; its ``exclude`` and
    ``extend-exclude`` apply to what a directory walk finds and to files named (so that a pre-commit hook,
    which names files, skips what a walk skips); a directory named is walked even if excluded.
    """
    found: list[str] = []
    problems: list[Problem] = []
    for p in paths:
        if os.path.isdir(p):
            _walk(p, config_of, found, problems)
        elif os.path.islink(p) and not os.path.exists(p):
            problems.append(Problem(p, message="dangling symbolic link"))
        elif not os.path.exists(p):
            problems.append(Problem(p, message="no such file or directory"))
        elif kind_of(p) is None:
            problems.append(Problem(p, message="not a CUDA (.cu, .cuh) or PTX (.ptx) file"))
        elif not config_of(p).is_excluded(p):
            found.append(p)
    seen: set[str] = set()
    unique = []
    for f in found:
        real = os.path.realpath(f)
        if real not in seen:
            seen.add(real)
            unique.append(f)
    return unique, problems


def _walk(top: str, config_of: Callable[[str], Config], found: list[str], problems: list[Problem]) -> None:
    """Files under ``top`` (not below excluded directories; symbolic links to directories not followed)."""
    def unreadable(exc: OSError) -> None:
        problems.append(Problem(str(exc.filename or top), message=f"cannot read this directory: {exc.strerror or exc}"))

    for root, dirs, files in os.walk(top, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not _excluded(os.path.join(root, d), config_of))
        for name in sorted(files):
            path = os.path.join(root, name)
            if kind_of(name) is None:
                continue
            if os.path.islink(path) and not os.path.exists(path):
                problems.append(Problem(path, message="dangling symbolic link"))
            elif not _excluded(path, config_of):
                found.append(str(Path(path)))


def _excluded(path: str, config_of: Callable[[str], Config]) -> bool:
    """In a walk: the directories above were kept, and a directory named on the command line is walked
    even when the configuration excludes it."""
    return config_of(path).is_excluded(path, parents=False)
