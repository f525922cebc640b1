"""The collect tables across versions: a version-1 dataset (before the power columns) is migrated when opened for
writing and read as it is when not, the shared H200 datasets included (read-only files)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from support.paths import ROOT

from ptxstatic.dataset.dataset import load_dataset
from ptxstatic.dataset.samples import (
    ADDED,
    SCHEMA,
    SCHEMA_KEY,
    SCHEMA_VERSION,
    Sample,
    SampleStore,
    columns,
    dataset_stats,
    utc_now,
)
from ptxstatic.dataset.store import DatasetStore
from ptxstatic.gpu.device import LIMITING

# measured on an H200 with collect's version-1 tables (not part of the repository)
H200_DATA = ROOT.parent / "shared" / "data" / "h200-default-clocks"
V1_COLUMNS = ["gpu", "benchmark", "launch", "setting", "status", "started_at", "finished_at", "time_ms", "power_w",
              "power_source", "time_mad_ms", "time_median_ms", "loop_s", "warnings"]


def version_1(path: Path) -> None:
    """A dataset as collect wrote it before version 2 (its tables, one ok sample, no version key), then copied
    with a rollback journal, as a file handed on may be."""
    with DatasetStore(path, create=True) as store, store.transaction():
        store.db.executescript(SCHEMA)
        store.db.execute(f"INSERT INTO collect_samples ({', '.join(V1_COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(V1_COLUMNS))})",
                         ("old", "k", "{}", "default", "ok", utc_now(), utc_now(), 1.5, 300.0, "energy-counter", 0.01,
                          1.5, 1.1, json.dumps(["sampled power 210.0 W differs from the energy counter's"])))
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_version_1_dataset_is_read_as_it_is_and_migrated_for_writing(tmp_path):
    path = tmp_path / "old.sqlite"
    version_1(path)
    before = digest(path)
    with DatasetStore(path) as store:  # reading: not a byte changes
        stats = dataset_stats(store, "old", LIMITING)
        assert stats["samples_ok"] == 1 and stats["power_steady"] == {"steady": 0, "not_steady": 0, "unknown": 1}
        assert stats["power_repeat_spread"] is None and stats["overhead_s"] is None
        assert not set(ADDED) & columns(store.db, "collect_samples") and store.meta(SCHEMA_KEY) is None
    assert digest(path) == before
    with DatasetStore(path) as store:  # opened for writing: the columns are added, the old row keeps its values
        samples = SampleStore(store)
        assert set(ADDED) <= columns(store.db, "collect_samples")
        assert store.meta(SCHEMA_KEY) == str(SCHEMA_VERSION)
        old = samples.sample("old", "k", "{}", "default")
        assert old.power_w == 300.0 and old.power_steady is None and old.power_trust is None
        new = Sample("old", "k2", "{}", "default", "failed", utc_now(), utc_now(), "a fault", wall_s=0.5)
        samples.write(new, "t", 0, None, None, None)
        assert samples.sample("old", "k2", "{}", "default") == new
        SampleStore(store)  # a second open changes nothing
        assert samples.done("old") == {("k", "{}", "default"), ("k2", "{}", "default")}


@pytest.mark.skipif(not H200_DATA.is_dir(), reason=f"the H200 measurements are not at {H200_DATA}")
@pytest.mark.parametrize("name", ["microbenchmarks-1s.sqlite", "microbenchmarks-short.sqlite"])
def test_the_shared_h200_datasets_still_load(tmp_path, name):
    original = H200_DATA / name
    before = digest(original)
    with DatasetStore(original) as store:
        n = len(load_dataset(store, "h200"))
        stats = dataset_stats(store, "h200", LIMITING)
    assert n == stats["samples_ok"] > 100 and stats["power_steady"]["unknown"] == n
    assert digest(original) == before  # read, not written

    copy = tmp_path / name
    shutil.copy(original, copy)
    with DatasetStore(copy) as store:
        SampleStore(store)
        assert len(load_dataset(store, "h200")) == n
        assert dataset_stats(store, "h200", LIMITING)["samples_ok"] == n
