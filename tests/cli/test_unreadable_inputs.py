"""Inputs that cannot be read or are not PTX, among good ones: each is one ``FILE: error:`` line and an entry
of ``errors`` in ``--format json``, the other inputs are still analysed, and the exit status is 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support.paths import ROOT
from support.unreadable import make_unreadable, without_root_read

from ptxstatic.report.schemas import json_schema

EXAMPLE = ROOT / "examples" / "saxpy_reduce.ptx"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, preexec_fn=without_root_read)


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLE, tmp_path / "good.ptx")
    (tmp_path / "dangling.ptx").symlink_to(tmp_path / "gone.ptx")
    (tmp_path / "locked.ptx").write_text(EXAMPLE.read_text())
    make_unreadable(tmp_path / "locked.ptx")
    (tmp_path / "empty.ptx").write_bytes(b"")
    (tmp_path / "binary.ptx").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00")
    (tmp_path / "none").mkdir()
    return tmp_path


ERRORS = {
    "dangling.ptx": (0, "dangling symbolic link (to {tmp}/gone.ptx, which does not exist)"),
    "missing.ptx": (0, "no such file or directory"),
    "locked.ptx": (0, "cannot read: Permission denied"),
    "none": (0, "no .ptx or .cu files in this directory"),
    "empty.ptx": (1, "missing .version directive at the start of the file"),
    "binary.ptx": (1, "file is not UTF-8 text (is it a cubin or an object file?)"),
}
NAMES = ["good.ptx", *ERRORS]


@pytest.mark.parametrize("command", ["analyze", "parse"])
def test_every_input_is_read_and_every_error_reported(inputs: Path, command: str):
    proc = run(command, *NAMES, cwd=inputs)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    want = {name: message.format(tmp=inputs) for name, (_, message) in ERRORS.items()}
    got = dict(line.split(": error: ", 1) for line in proc.stderr.splitlines() if ": error: " in line)
    assert {name.split(":")[0]: message for name, message in got.items()} == want
    assert "saxpy" in proc.stdout  # the good file was analysed


@pytest.mark.parametrize("command", ["analyze", "parse"])
def test_json_lists_every_error(inputs: Path, command: str):
    proc = run(command, "--format", "json", *NAMES, cwd=inputs)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, json_schema(command), cls=jsonschema.Draft202012Validator)
    assert {(e["file"], e["line"], e["message"]) for e in doc["errors"]} == {
        (name, line, message.format(tmp=inputs)) for name, (line, message) in ERRORS.items()}
    assert {k["kernel"] for k in doc["kernels"]} >= {"saxpy"}


@pytest.mark.parametrize("command", [["predict"], ["blocks", "-k", "saxpy"], ["features", "-k", "saxpy"]])
@pytest.mark.parametrize("name", ["empty.ptx", "binary.ptx", "locked.ptx", "dangling.ptx"])
def test_a_command_of_one_file_says_why_in_its_json(inputs: Path, command: list[str], name: str):
    """A command that stops at its one input's error still prints its JSON document, with the error."""
    proc = run(*command, "--format", "json", name, cwd=inputs)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, json_schema(command[0]), cls=jsonschema.Draft202012Validator)
    line, message = ERRORS[name]
    assert doc["kernels"] == [] and [(e["file"], e["line"], e["message"]) for e in doc["errors"]] == [
        (name, line, message.format(tmp=inputs))]
    assert proc.stderr.startswith(f"{name}:")


@pytest.mark.parametrize("command", [
    ["train", "bottleneck", "--gpu", "h200", "--out", "model", "--data", "missing.sqlite"],
    ["train", "bottleneck", "--gpu", "h200", "--out", "model", "--data", "good.ptx", "--counters", "missing.sqlite"],
    ["train", "physical", "--out", "model", "--data", "missing.sqlite"],
    ["evaluate", "--model", "model", "--data", "missing.sqlite"],
])
def test_a_dataset_that_is_not_there_is_one_error_and_not_created(inputs: Path, command: list[str]):
    """A dataset path that does not exist is refused before anything runs: no traceback, and no empty
    database left where it was named (SQLite would create one on opening)."""
    done = run(*command, cwd=inputs)
    assert done.returncode == 2, done.stderr
    assert "'missing.sqlite' does not exist" in done.stderr and "Traceback" not in done.stderr
    assert not (inputs / "missing.sqlite").exists() and not (inputs / "model").exists()
