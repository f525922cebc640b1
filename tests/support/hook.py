"""Helpers for the nvcc hook tests: the hook as a launcher program, builds, and object comparison."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from support.paths import DATA, ROOT

PROJECT = DATA / "hook" / "project"
TMPXFT = re.compile(rb"tmpxft_[0-9a-f]{8}_[0-9a-f]{8}")
#: VS Code's $gcc problem matcher (vscode/extensions/cpp ... problemMatchers)
GCC_MATCHER = re.compile(r"^(.*?):(\d+):(\d*):?\s+(?:fatal\s+)?(warning|error):\s+(.*)$")


def masked(path: Path) -> bytes:
    """A file's bytes with nvcc's temporary-file names (``tmpxft_XXXXXXXX_XXXXXXXX``) masked, nothing else."""
    return TMPXFT.sub(b"tmpxft_XXXXXXXX_XXXXXXXX", path.read_bytes())


def tool(name: str) -> str | None:
    """A program from the test environment's bin directory (cmake, ninja from PyPI), else from the PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def hook_launcher(directory: Path) -> Path:
    """An executable ``ptxstatic-nvcc`` that runs this checkout's hook (as the console script does)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "ptxstatic-nvcc"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ptxstatic.hook.launcher "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def hook_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment for builds: this checkout importable, a private cache, the hook enabled."""
    env = dict(os.environ)
    env.pop("PTXSTATIC_DISABLE", None)
    env.pop("PTXSTATIC_STRICT", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PTXSTATIC_CACHE_DIR"] = str(tmp / "ptxstatic-cache")
    env.update(extra)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def copy_project(target: Path) -> Path:
    shutil.copytree(PROJECT, target)
    return target


def line_of(path: Path, text: str) -> int:
    """1-based number of the first line of ``path`` containing ``text``."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def diagnostics(stderr: str) -> list[re.Match]:
    """The lines of ``stderr`` that VS Code's $gcc matcher reads as warnings or errors."""
    return [m for m in map(GCC_MATCHER.match, stderr.splitlines()) if m]
