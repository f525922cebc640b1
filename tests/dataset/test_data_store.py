"""The SQLite dataset store: round trips, run-length sequences, and clear errors on foreign files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ptxstatic.analysis.sequence import SeqItem, as_runs, run_length
from ptxstatic.dataset.dataset import load_dataset
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement
from ptxstatic.errors import PtxstaticError

FMA = SeqItem("fma", "fp32", "", "f32", 1, 3, 1, False, 1, "arith")
LD = SeqItem("ld", "mem.global", "global", "f32", 1, 1, 1, False, 0, "none")
ST = SeqItem("st", "mem.global", "global", "f32", 1, 2, 0, True, 1, "arith")
CLOCKS = [ClockConfig(m, c, (m, c) == (2000, 1000), 10.0 + c / 100) for m in (1000, 2000) for c in (500, 1000)]


def _fill(store: DatasetStore) -> int:
    with store.transaction():
        store.add_gpu("toy", CLOCKS, description="a toy GPU")
        b = store.add_benchmark("suite", "bench")
        store.add_kernel(b, 0, "k0", run_length([LD, FMA, FMA, FMA, ST]), {"instructions": 5.0})
        store.add_kernel(b, 1, "k1", run_length([FMA]), {"instructions": 1.0})
        store.add_measurements(b, "toy", [
            Measurement(c.f_mem, c.f_core, 100.0 / c.f_core, 50.0, 5000.0 / c.f_core, 5, 0.1, 0.5) for c in CLOCKS
        ])
    return b


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    b = _fill(DatasetStore(path, create=True))
    with DatasetStore(path) as s:
        assert s.gpus() == ["toy"]
        assert s.clocks("toy") == CLOCKS
        k0, k1 = s.kernels(b)
        assert s.sequence(k0.id) == [(LD, 1), (FMA, 3), (ST, 1)] and k0.n_instructions == 5
        assert s.features(k1.id) == {"instructions": 1.0}
        assert s.measurements(b, "toy")[0].repeats == 5
        data = load_dataset(s, "toy")
        assert data.names == ["bench"] and data.runs[0] == [(LD, 1), (FMA, 3), (ST, 1), (FMA, 1)]
        assert data.clocks.reference == 3 and data.scaling("time")[0].tolist() == [2.0, 1.0, 2.0, 1.0]


def test_replacing_a_benchmark_drops_its_kernels(tmp_path: Path) -> None:
    s = DatasetStore(tmp_path / "d.db", create=True)
    b = _fill(s)
    with s.transaction():
        assert s.add_benchmark("suite", "bench") == b
        s.add_kernel(b, 0, "only", run_length([LD]), {})
    assert [k.name for k in s.kernels(b)] == ["only"]


def test_measurement_at_an_unknown_configuration_is_refused(tmp_path: Path) -> None:
    s = DatasetStore(tmp_path / "d.db", create=True)
    b = _fill(s)
    with pytest.raises(PtxstaticError, match="does not list"):
        s.add_measurements(b, "toy", [Measurement(1234, 500, 1.0, 1.0, 1.0)])


def test_foreign_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PtxstaticError, match="no such dataset"):
        DatasetStore(tmp_path / "missing.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(PtxstaticError, match="not a ptxstatic dataset"):
        DatasetStore(junk)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(PtxstaticError, match="schema version"):
        DatasetStore(other)
    with pytest.raises(PtxstaticError, match="no GPU named 'nope'"):
        DatasetStore(":memory:", create=True).clocks("nope")


def test_as_runs_flattens_the_nested_executed_form() -> None:
    nested = [(LD, 1), ([(FMA, 1), ([(ST, 1)], 2)], 3), FMA]
    assert as_runs(nested) == [(LD, 1), (FMA, 3), (ST, 6), (FMA, 1)]
    assert as_runs([LD, FMA]) == [(LD, 1), (FMA, 1)]
