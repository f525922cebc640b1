"""``check`` over a tree with paths it cannot read (an unreadable file or directory, a dangling link): each is
one error among the results, every other file is still checked, and every output format lists it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support.check import SARIF_SCHEMA, env
from support.paths import DATA
from support.unreadable import make_unreadable, without_root_read

from ptxstatic.report.schemas import json_schema

ONE_FINDING = DATA / "check" / "local_memory.ptx"  # one PS301 finding
ERRORS = {"unreadable.cu": "cannot read: Permission denied",
          "tree/locked": "cannot read this directory: Permission denied",
          "dangling.ptx": "dangling symbolic link"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """ok.ptx (one PS301 finding), tree/also.ptx, and the three bad paths of ERRORS."""
    where = tmp_path / "work"
    (where / "tree" / "locked").mkdir(parents=True)
    shutil.copy(ONE_FINDING, where / "ok.ptx")
    shutil.copy(ONE_FINDING, where / "tree" / "also.ptx")
    shutil.copy(ONE_FINDING, where / "tree" / "locked" / "hidden.ptx")
    (where / "unreadable.cu").write_text("__global__ void k() {}\n")
    make_unreadable(where / "unreadable.cu")
    make_unreadable(where / "tree" / "locked")
    (where / "dangling.ptx").symlink_to(where / "gone.ptx")
    yield where
    (where / "tree" / "locked").chmod(0o755)


def _check(where: Path, fmt: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", "check", "--no-cache", "--format", fmt,
                           "unreadable.cu", "ok.ptx", "tree", "dangling.ptx"], cwd=where, env=env(where.parent),
                          capture_output=True, text=True, timeout=600, preexec_fn=without_root_read)


def _stderr_errors(proc: subprocess.CompletedProcess) -> dict[str, str]:
    return dict(line.split(": error: ", 1) for line in proc.stderr.splitlines() if ": error: " in line)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_unreadable_paths_are_errors_among_the_results(tree: Path, fmt: str):
    proc = _check(tree, fmt)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert _stderr_errors(proc) == ERRORS
    if fmt == "text":
        assert proc.stdout.count("[PS301]") == 2  # ok.ptx and tree/also.ptx were checked
        assert proc.stdout.rstrip().endswith("; 3 input errors")
    elif fmt == "json":
        doc = json.loads(proc.stdout)
        jsonschema.validate(doc, json_schema("check"), cls=jsonschema.Draft202012Validator)
        assert {e["file"]: e["message"] for e in doc["errors"]} == ERRORS
        assert {f["file"] for f in doc["findings"]} == {"ok.ptx", "tree/also.ptx"}
        assert doc["status"] == 2 and doc["summary"]["errors"] == 3
    elif fmt == "sarif":
        log = json.loads(proc.stdout)
        jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()), cls=jsonschema.Draft4Validator)
        [invocation] = log["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        notes = invocation["toolExecutionNotifications"]
        assert {n["message"]["text"] for n in notes} == set(ERRORS.values())
        assert len(log["runs"][0]["results"]) == 2
    else:
        errors = [line for line in proc.stdout.splitlines() if line.startswith("::error file=")]
        assert len(errors) == 3 and all("title=ptxstatic%3A input error" in e for e in errors)
        assert {e.split(",", 1)[0].removeprefix("::error file=") for e in errors} == set(ERRORS)
        assert proc.stdout.count("PS301 (local-memory)") == 2
