"""The SQLite dataset store: benchmarks and their kernels' instruction sequences and features, GPUs with
their clock tables, and measurements per (benchmark, launch, GPU, f_mem, f_core).

The schema is documented in ``docs/dataset.md``. Sequences are stored per kernel in run-length form
(consecutive identical :class:`SeqItem` rows merged, with a repeat count), which is lossless.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.analysis.sequence import Run, SeqItem
from ptxstatic.errors import PtxstaticError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS gpus (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '', license TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS clock_configs (
    gpu_id INTEGER NOT NULL REFERENCES gpus(id), f_mem INTEGER NOT NULL, f_core INTEGER NOT NULL,
    is_default INTEGER NOT NULL DEFAULT 0, idle_power_w REAL,
    PRIMARY KEY (gpu_id, f_mem, f_core)
);
CREATE TABLE IF NOT EXISTS benchmarks (
    id INTEGER PRIMARY KEY, suite TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',
    UNIQUE (suite, name)
);
CREATE TABLE IF NOT EXISTS kernels (
    id INTEGER PRIMARY KEY, benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id),
    position INTEGER NOT NULL, name TEXT NOT NULL, n_instructions INTEGER NOT NULL,
    UNIQUE (benchmark_id, position)
);
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY, opcode TEXT NOT NULL, grp TEXT NOT NULL, space TEXT NOT NULL,
    dtype TEXT NOT NULL, vec INTEGER NOT NULL, n_src INTEGER NOT NULL, n_dst INTEGER NOT NULL,
    guarded INTEGER NOT NULL, dep_distance INTEGER NOT NULL, dep_kind TEXT NOT NULL,
    UNIQUE (opcode, grp, space, dtype, vec, n_src, n_dst, guarded, dep_distance, dep_kind)
);
CREATE TABLE IF NOT EXISTS sequence_runs (
    kernel_id INTEGER NOT NULL REFERENCES kernels(id), step INTEGER NOT NULL,
    item_id INTEGER NOT NULL REFERENCES items(id), count INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, step)
);
CREATE TABLE IF NOT EXISTS features (
    kernel_id INTEGER NOT NULL REFERENCES kernels(id), name TEXT NOT NULL, value REAL NOT NULL,
    PRIMARY KEY (kernel_id, name)
);
CREATE TABLE IF NOT EXISTS measurements (
    benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id), launch TEXT NOT NULL DEFAULT '',
    gpu_id INTEGER NOT NULL REFERENCES gpus(id), f_mem INTEGER NOT NULL, f_core INTEGER NOT NULL,
    time_ms REAL NOT NULL, power_w REAL NOT NULL, energy_mj REAL NOT NULL,
    repeats INTEGER, time_spread REAL, power_spread REAL,
    PRIMARY KEY (benchmark_id, launch, gpu_id, f_mem, f_core),
    FOREIGN KEY (gpu_id, f_mem, f_core) REFERENCES clock_configs(gpu_id, f_mem, f_core)
);
"""

@dataclass(frozen=True)
class ClockConfig:
    """One (memory, core) clock pair of a GPU, in MHz, with the GPU's idle power there if known."""

    f_mem: int
    f_core: int
    is_default: bool = False
    idle_power_w: float | None = None


@dataclass(frozen=True)
class Measurement:
    """Time, power and energy of one benchmark run at one clock configuration.

    ``power_w`` is the mean board power while the kernels run (idle power included);
    ``energy_mj`` = ``power_w`` × ``time_ms``. ``repeats`` and the spreads are None when not recorded.
    """

    f_mem: int
    f_core: int
    time_ms: float
    power_w: float
    energy_mj: float
    repeats: int | None = None
    time_spread: float | None = None
    power_spread: float | None = None


@dataclass(frozen=True)
class Benchmark:
    id: int
    suite: str
    name: str
    source: str


@dataclass(frozen=True)
class Kernel:
    id: int
    benchmark_id: int
    position: int
    name: str
    n_instructions: int


class DatasetStore:
    """A dataset in one SQLite file (WAL journal, set by the writers, which open it with ``create``: opening a
    dataset to read it does not change the file); ``":memory:"`` gives a throw-away store."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = str(path)
        if self.path != ":memory:" and not create and not Path(self.path).is_file():
            raise PtxstaticError(f"{self.path}: no such dataset (create one with an importer)")
        try:
            self.db = sqlite3.connect(self.path)
            self.db.execute("PRAGMA foreign_keys = ON")
            if create:  # a writer's file is WAL (set in the file); a reader leaves the file's bytes as they are
                self._refuse_foreign()
                if self.path != ":memory:":
                    self.db.execute("PRAGMA journal_mode = WAL")
                self.db.executescript(_SCHEMA)
                self.db.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
                self.db.commit()
            version = self.meta("schema_version")
        except sqlite3.DatabaseError as exc:
            raise PtxstaticError(f"{self.path}: not a ptxstatic dataset ({exc})") from None
        if version != str(SCHEMA_VERSION):
            raise PtxstaticError(
                f"{self.path}: dataset schema version {version!r}, this ptxstatic reads {SCHEMA_VERSION}"
            )
        self._item_ids: dict[SeqItem, int] = {}

    def _refuse_foreign(self) -> None:
        """Refuse, before writing anything, an SQLite file with tables but not a ptxstatic dataset's."""
        tables = [r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if tables and "meta" not in tables:
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            self.db.close()
            raise PtxstaticError(f"{self.path}: an SQLite database of something else (tables: {shown}), not a "
                                 "ptxstatic dataset; nothing was written to it: give a new file")

    # ------------------------------------------------------------------------------------------ basics
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> DatasetStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Commit everything done inside the block at once, or nothing if it raises."""
        with self.db:
            yield

    def meta(self, key: str) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------------------------------ GPUs
    def add_gpu(
        self, name: str, clocks: Sequence[ClockConfig], *, description: str = "", source: str = "",
        license: str = "",
    ) -> int:
        """Insert or replace a GPU and its clock table; returns its id."""
        row = self.db.execute("SELECT id FROM gpus WHERE name = ?", (name,)).fetchone()
        if row:
            gpu_id = row[0]
            self.db.execute(
                "UPDATE gpus SET description = ?, source = ?, license = ? WHERE id = ?",
                (description, source, license, gpu_id),
            )
        else:
            gpu_id = self.db.execute(
                "INSERT INTO gpus (name, description, source, license) VALUES (?, ?, ?, ?)",
                (name, description, source, license),
            ).lastrowid
        self.db.executemany(
            "INSERT OR REPLACE INTO clock_configs VALUES (?, ?, ?, ?, ?)",
            [(gpu_id, c.f_mem, c.f_core, int(c.is_default), c.idle_power_w) for c in clocks],
        )
        return int(gpu_id)

    def gpu_id(self, name: str) -> int:
        row = self.db.execute("SELECT id FROM gpus WHERE name = ?", (name,)).fetchone()
        if row is None:
            known = ", ".join(self.gpus()) or "none"
            raise PtxstaticError(f"{self.path}: no GPU named {name!r} (known: {known})")
        return int(row[0])

    def gpus(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM gpus ORDER BY name")]

    def gpu_info(self, name: str) -> dict[str, str]:
        row = self.db.execute(
            "SELECT description, source, license FROM gpus WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            self.gpu_id(name)
        return {"description": row[0], "source": row[1], "license": row[2]}

    def clocks(self, gpu: str) -> list[ClockConfig]:
        """The GPU's clock configurations, memory clock ascending, then core clock ascending."""
        rows = self.db.execute(
            "SELECT f_mem, f_core, is_default, idle_power_w FROM clock_configs WHERE gpu_id = ? "
            "ORDER BY f_mem, f_core", (self.gpu_id(gpu),),
        )
        return [ClockConfig(m, c, bool(d), p) for m, c, d, p in rows]

    # ------------------------------------------------------------------------------ benchmarks, kernels
    def add_benchmark(self, suite: str, name: str, source: str = "") -> int:
        """Insert a benchmark (or replace one of the same suite and name, dropping its kernels)."""
        row = self.db.execute(
            "SELECT id FROM benchmarks WHERE suite = ? AND name = ?", (suite, name)
        ).fetchone()
        if row:
            self._drop_kernels(row[0])
            self.db.execute("UPDATE benchmarks SET source = ? WHERE id = ?", (source, row[0]))
            return int(row[0])
        return int(self.db.execute(
            "INSERT INTO benchmarks (suite, name, source) VALUES (?, ?, ?)", (suite, name, source)
        ).lastrowid)

    def _drop_kernels(self, benchmark_id: int) -> None:
        ids = [r[0] for r in self.db.execute("SELECT id FROM kernels WHERE benchmark_id = ?", (benchmark_id,))]
        for table in ("sequence_runs", "features"):
            self.db.executemany(f"DELETE FROM {table} WHERE kernel_id = ?", [(i,) for i in ids])
        self.db.execute("DELETE FROM kernels WHERE benchmark_id = ?", (benchmark_id,))

    def add_kernel(
        self, benchmark_id: int, position: int, name: str, runs: Sequence[Run], features: dict[str, float],
    ) -> int:
        """Insert a kernel of a benchmark (``position``: launch order) with its sequence and features."""
        kernel_id = int(self.db.execute(
            "INSERT INTO kernels (benchmark_id, position, name, n_instructions) VALUES (?, ?, ?, ?)",
            (benchmark_id, position, name, sum(c for _, c in runs)),
        ).lastrowid)
        self.db.executemany(
            "INSERT INTO sequence_runs VALUES (?, ?, ?, ?)",
            [(kernel_id, step, self._item_id(item), count) for step, (item, count) in enumerate(runs)],
        )
        self.db.executemany(
            "INSERT INTO features VALUES (?, ?, ?)", [(kernel_id, k, float(v)) for k, v in features.items()]
        )
        return kernel_id

    def _item_id(self, item: SeqItem) -> int:
        cached = self._item_ids.get(item)
        if cached is not None:
            return cached
        values = (
            item.opcode, item.group, item.space, item.dtype, item.vec, item.n_src, item.n_dst,
            int(item.guarded), item.dep_distance, item.dep_kind,
        )
        self.db.execute(
            "INSERT OR IGNORE INTO items (opcode, grp, space, dtype, vec, n_src, n_dst, guarded, "
            "dep_distance, dep_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values,
        )
        row = self.db.execute(
            "SELECT id FROM items WHERE opcode = ? AND grp = ? AND space = ? AND dtype = ? AND vec = ? AND "
            "n_src = ? AND n_dst = ? AND guarded = ? AND dep_distance = ? AND dep_kind = ?", values,
        ).fetchone()
        self._item_ids[item] = int(row[0])
        return int(row[0])

    def benchmarks(self, suite: str | None = None) -> list[Benchmark]:
        sql = "SELECT id, suite, name, source FROM benchmarks"
        rows = self.db.execute(sql + " WHERE suite = ? ORDER BY id", (suite,)) if suite else self.db.execute(
            sql + " ORDER BY id"
        )
        return [Benchmark(*r) for r in rows]

    def kernels(self, benchmark_id: int) -> list[Kernel]:
        rows = self.db.execute(
            "SELECT id, benchmark_id, position, name, n_instructions FROM kernels WHERE benchmark_id = ? "
            "ORDER BY position", (benchmark_id,),
        )
        return [Kernel(*r) for r in rows]

    def sequence(self, kernel_id: int) -> list[Run]:
        """The kernel's sequence as (item, repeat count) runs, in order."""
        rows = self.db.execute(
            "SELECT i.opcode, i.grp, i.space, i.dtype, i.vec, i.n_src, i.n_dst, i.guarded, i.dep_distance, "
            "i.dep_kind, r.count FROM sequence_runs r JOIN items i ON i.id = r.item_id "
            "WHERE r.kernel_id = ? ORDER BY r.step", (kernel_id,),
        )
        return [(SeqItem(*r[:7], bool(r[7]), *r[8:10]), int(r[10])) for r in rows]

    def features(self, kernel_id: int) -> dict[str, float]:
        rows = self.db.execute("SELECT name, value FROM features WHERE kernel_id = ?", (kernel_id,))
        return {name: float(value) for name, value in rows}

    # ---------------------------------------------------------------------------------- measurements
    def add_measurements(
        self, benchmark_id: int, gpu: str, rows: Sequence[Measurement], launch: str = "",
    ) -> None:
        """Insert or replace measurements of a benchmark (``launch``: JSON launch spec, '' if unknown)."""
        gpu_id = self.gpu_id(gpu)
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (benchmark_id, launch, gpu_id, m.f_mem, m.f_core, m.time_ms, m.power_w, m.energy_mj,
                     m.repeats, m.time_spread, m.power_spread)
                    for m in rows
                ],
            )
        except sqlite3.IntegrityError:
            raise PtxstaticError(
                f"{self.path}: a measurement of benchmark {benchmark_id} is at a clock configuration "
                f"that GPU {gpu!r} does not list"
            ) from None

    def measured(self, gpu: str) -> list[tuple[int, str]]:
        """(benchmark id, launch) pairs that have measurements on the GPU, by benchmark id."""
        return [(int(b), str(launch)) for b, launch in self.db.execute(
            "SELECT DISTINCT benchmark_id, launch FROM measurements WHERE gpu_id = ? ORDER BY benchmark_id, "
            "launch", (self.gpu_id(gpu),),
        )]

    def measurements(self, benchmark_id: int, gpu: str, launch: str = "") -> list[Measurement]:
        rows = self.db.execute(
            "SELECT f_mem, f_core, time_ms, power_w, energy_mj, repeats, time_spread, power_spread "
            "FROM measurements WHERE benchmark_id = ? AND gpu_id = ? AND launch = ? ORDER BY f_mem, f_core",
            (benchmark_id, self.gpu_id(gpu), launch),
        )
        return [Measurement(*r) for r in rows]
