"""This repository's pre-commit hook, run by pre-commit (from PyPI) on a new git repository: a commit with a
finding is refused and shows it; suppressing it lets the commit through. Offline: the hook is taken from this
checkout (``repo:`` its path, ``rev:`` its commit) and runs the ptxstatic installed here."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.check import PROJECT, env
from support.paths import ROOT, needs_nvcc

pre_commit = pytest.importorskip("pre_commit", reason="pre-commit is not installed (the test extra has it)")


def _git(*args: str, cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=600)


@needs_nvcc
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not on the PATH")
def test_pre_commit_refuses_a_finding_and_accepts_the_fix(tmp_path: Path):
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if rev.returncode != 0:
        pytest.skip("this checkout is not a git repository")
    shown = subprocess.run(["git", "show", f"{rev.stdout.strip()}:.pre-commit-hooks.yaml"], cwd=ROOT,
                           capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip("the checked-out commit has no .pre-commit-hooks.yaml yet")
    bin_dir = tmp_path / "bin"  # `ptxstatic` on the PATH, as an installed console script would be
    bin_dir.mkdir()
    script = bin_dir / "ptxstatic"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ptxstatic "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    environ = env(tmp_path, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
                  PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                  GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL=os.devnull)
    repo = tmp_path / "repo"
    repo.mkdir()
    kernel = repo / "reduce.cu"
    shutil.copy(PROJECT / "src" / "reduce.cu", kernel)
    (repo / "ptxstatic.toml").write_text('nvcc-flags = "-arch=sm_90 -lineinfo"\n')
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {ROOT}\n  rev: {rev.stdout.strip()}\n  hooks:\n  - id: ptxstatic-check-system\n")
    assert _git("init", "-q", cwd=repo, environ=environ).returncode == 0
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=environ,
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    _git("add", ".", cwd=repo, environ=environ)
    refused = _git("commit", "-m", "add a kernel", cwd=repo, environ=environ)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    line = next(n for n, text in enumerate(kernel.read_text().splitlines(), 1) if "// expect: PS201" in text)
    assert f"reduce.cu:{line}:9: warning: " in refused.stdout + refused.stderr
    assert _git("log", cwd=repo, environ=environ).returncode != 0  # nothing committed
    # suppress the finding on its line: the commit goes through
    lines = kernel.read_text().splitlines()
    lines[line - 1] = lines[line - 1].replace("// expect: PS201", "// ptxstatic: ignore[PS201]")
    kernel.write_text("\n".join(lines) + "\n")
    _git("add", ".", cwd=repo, environ=environ)
    accepted = _git("commit", "-m", "add a kernel", cwd=repo, environ=environ)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert re.search(r"^ptxstatic check \(installed\)\.+Passed$", accepted.stdout + accepted.stderr, re.M)
