"""Helpers for the nvcc hook tests: the hook as a launcher program, builds, and object comparison."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from support.paths import DATA, ROOT

PROJECT = DATA / "hook" / "project"
#: the ``ptxstatic-nvcc`` script that installing the package puts on the PATH
HOOK_SCRIPT = ROOT / "scripts" / "ptxstatic-nvcc"
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
    """An executable ``ptxstatic-nvcc`` that runs this checkout's hook script (as installed)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "ptxstatic-nvcc"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HOOK_SCRIPT}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def hook_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment for builds: this checkout importable, a private cache (so a test's analysis server is its
    own), the hook and its server enabled, the server stopping 20 s after the test's last compile."""
    env = dict(os.environ)
    for name in ("PTXSTATIC_DISABLE", "PTXSTATIC_STRICT", "PTXSTATIC_SERVER", "PTXSTATIC_NO_CACHE"):
        env.pop(name, None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PTXSTATIC_CACHE_DIR"] = str(tmp / "ptxstatic-cache")
    env["PTXSTATIC_SERVER_IDLE"] = "20"
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


def expect_ps201(stderr: str, src: Path, header: str, caller: str = "") -> None:
    """Exactly one PS201 warning, at the barrier in util.cuh (shown as ``header``), with the call site in
    kernel.cu (shown as ``caller``) as an inlined-from note."""
    warnings = [m for m in diagnostics(stderr) if m.group(4) == "warning"]
    assert len(warnings) == 1, stderr
    w = warnings[0]
    assert w.group(1) == header and int(w.group(2)) == line_of(src / "util.cuh", "__syncthreads"), stderr
    assert w.group(5).endswith("[PS201]")
    call = line_of(src / "kernel.cu", "v = exchange(tile, v);")
    caller = caller or header.replace("util.cuh", "kernel.cu")
    assert any(line.startswith(f"{caller}:{call}:") and line.endswith(": note: inlined from here")
               for line in stderr.splitlines()), stderr


# ------------------------------------------------------------------------------------ the analysis server


def server_dir(env: dict[str, str]) -> Path:
    """Where the analysis servers of builds with ``env`` keep their sockets, locks and logs."""
    return Path(env["PTXSTATIC_CACHE_DIR"]) / "hook-server"


def server_pids(env: dict[str, str]) -> list[int]:
    """The process ids written in the servers' lock files (a server writes its own when it starts)."""
    return [int(text) for p in sorted(server_dir(env).glob("*.lock")) if (text := p.read_text().strip())]


def server_log(env: dict[str, str]) -> str:
    return "".join(p.read_text() for p in sorted(server_dir(env).glob("*.log")))


def server_socket(env: dict[str, str]) -> Path:
    """The socket the last server started served on, from its log (beside the lock, or in a short directory
    where that path would be too long for a socket)."""
    return Path([line for line in server_log(env).splitlines() if " serving " in line][-1].split(" serving ", 1)[1])


def serving(pid: int) -> bool:
    """Whether process ``pid`` is a running analysis server (a zombie is not: nobody may reap an orphan in a
    container; a lock file keeps the id of a server that has stopped, which another process may have now)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX" and b"ptxstatic.hook.server" in command


def wait_until(condition, timeout: float, step: float = 0.05) -> bool:
    """Whether ``condition()`` became true within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def stop_servers(env: dict[str, str]) -> None:
    """End the analysis servers a test's builds started (SIGTERM; they finish what they serve, and remove their
    sockets), and remove the sockets of those the test killed."""
    pids = [pid for pid in server_pids(env) if serving(pid)]
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    assert wait_until(lambda: not any(map(serving, pids)), 30)
    if server_dir(env).is_dir():
        for line in server_log(env).splitlines():
            if " serving " in line:
                Path(line.split(" serving ", 1)[1]).unlink(missing_ok=True)
