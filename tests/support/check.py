"""Helpers for the ``ptxstatic check`` tests: the command as a subprocess, the test project, expectations."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.paths import DATA, ROOT

PROJECT = DATA / "check" / "project"
SARIF_SCHEMA = DATA / "check" / "sarif" / "sarif-schema-2.1.0.json"
_EXPECT = re.compile(r"//\s*(expect[\w-]*):\s*(PS\d{3})")


def env(tmp: Path, **extra: str) -> dict[str, str]:
    """This checkout importable, a private result cache under ``tmp``."""
    out = dict(os.environ)
    out["PYTHONPATH"] = str(ROOT) + (os.pathsep + out["PYTHONPATH"] if out.get("PYTHONPATH") else "")
    out["PTXSTATIC_CACHE_DIR"] = str(tmp / "cache")
    out.pop("PTXSTATIC_NO_CACHE", None)
    out.update(extra)
    return out


def check(*args: str, cwd: Path, tmp: Path, **extra: str) -> subprocess.CompletedProcess:
    """``ptxstatic check ARGS`` in ``cwd`` (a real process)."""
    return subprocess.run([sys.executable, "-m", "ptxstatic", "check", *args], cwd=cwd, env=env(tmp, **extra),
                          capture_output=True, text=True, timeout=600)


def check_json(*args: str, cwd: Path, tmp: Path, **extra: str) -> tuple[dict, subprocess.CompletedProcess]:
    proc = check("--format", "json", *args, cwd=cwd, tmp=tmp, **extra)
    return json.loads(proc.stdout), proc


def copy_project(tmp: Path) -> Path:
    return Path(shutil.copytree(PROJECT, tmp / "project"))


def expected(path: Path, marker: str = "expect") -> set[int]:
    """Lines of ``path`` with a ``// expect: PSnnn`` (or ``marker``) comment."""
    return {n for n, line in enumerate(path.read_text().splitlines(), 1)
            for m in [_EXPECT.search(line)] if m and m.group(1) == marker}


def found_lines(doc: dict, file_name: str) -> set[int]:
    """Lines of the JSON report's findings located in a file called ``file_name``."""
    return {f["location"]["line"] for f in doc["findings"] if Path(f["location"]["file"]).name == file_name}


def compile_commands(project: Path, build: Path, defines: dict[str, list[str]]) -> Path:
    """A ``compile_commands.json`` as CMake's Ninja generator writes it: one nvcc entry per source of
    ``defines`` (file name -> extra -D flags), absolute paths, object and dependency-file options."""
    build.mkdir(parents=True, exist_ok=True)
    nvcc = shutil.which("nvcc")
    entries = []
    for name, flags in defines.items():
        source = project / "src" / name
        obj = f"CMakeFiles/kernels.dir/src/{name}.o"
        command = (f"{nvcc} -forward-unknown-to-host-compiler {' '.join(flags)} -O3 -DNDEBUG -std=c++17 "
                   f"\"--generate-code=arch=compute_90,code=[compute_90,sm_90]\" -x cu -c {source} -o {obj} "
                   f"-MD -MT {obj} -MF {obj}.d")
        entries.append({"directory": str(build), "command": command, "file": str(source), "output": obj})
    path = build / "compile_commands.json"
    path.write_text(json.dumps(entries, indent=2))
    return path
