"""``collect`` writes only into a dataset of its own, one run at a time: an SQLite file of something else is
refused before anything is written to it, and a second ``collect`` on a dataset another one is writing is
refused at once (it failed with ``IntegrityError`` half-way before)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT

from ptxstatic.collect.runner import dataset_lock

MANIFEST = ROOT / "microbenchmarks" / "manifest.json"


def collect(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", "collect", "--manifest", str(MANIFEST), "--db", str(db),
                           "--gpu", "fake", "--device", "fake", "--only", "fp32_add_chain"],
                          capture_output=True, text=True, timeout=300)


def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(tmp_path: Path):
    db = tmp_path / "theirs.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
    before = db.read_bytes()
    p = collect(db)
    assert p.returncode == 2
    assert p.stderr.strip().endswith("an SQLite database of something else (tables: orders), not a ptxstatic "
                                     "dataset; nothing was written to it: give a new file")
    assert db.read_bytes() == before


def test_a_second_collect_on_a_dataset_being_written_is_refused(tmp_path: Path):
    db = tmp_path / "run.sqlite"
    held = dataset_lock(str(db))
    try:
        p = collect(db)
    finally:
        held.close()
    assert p.returncode == 2
    assert "another ptxstatic collect is writing this dataset" in p.stderr
    assert not db.exists()
