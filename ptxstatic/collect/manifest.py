"""Benchmark manifests: which kernels to measure, from which source, at which launches.

A manifest is JSON::

    {"suite": "microbenchmarks", "nvcc_flags": "-lineinfo", "min_seconds": 1.0,
     "benchmarks": [{"name": "fp32_fma_chain", "source": "fp32.cu", "kernel": "fp32_fma_chain",
                     "launches": [{...Launch.to_dict()..., "repeats": 1200, "min_seconds": 1.0}]}]}

``source`` is a ``.cu`` file (compiled with nvcc for the GPU's architecture) or a ``.ptx`` file, relative to
the manifest. Each launch is a :class:`~ptxstatic.launch.Launch` in ``to_dict`` form plus optional
hints: ``repeats`` (launches expected to fill ``min_seconds``) and ``min_seconds`` (the least time of
repeated launches per sample).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch

SOURCE_SUFFIXES = (".cu", ".ptx")


@dataclass(frozen=True)
class LaunchSpec:
    launch: Launch
    key: str  # canonical JSON of the launch: identifies it in the dataset
    repeats: int  # hint: launches expected to fill min_seconds (0: unknown)
    min_seconds: float


@dataclass(frozen=True)
class BenchSpec:
    name: str
    source: Path
    kernel: str
    launches: tuple[LaunchSpec, ...]


@dataclass(frozen=True)
class Manifest:
    path: Path
    suite: str
    nvcc_flags: str
    benchmarks: tuple[BenchSpec, ...]
    sha256: str

    def select(self, patterns: str | None) -> list[BenchSpec]:
        """Benchmarks whose names match one of the comma-separated shell patterns (all without patterns)."""
        if not patterns:
            return list(self.benchmarks)
        pats = [p.strip() for p in patterns.split(",") if p.strip()]
        chosen = [b for b in self.benchmarks if any(fnmatch.fnmatchcase(b.name, p) for p in pats)]
        if not chosen:
            raise PtxstaticError(f"{self.path}: no benchmark matches --only {patterns!r}")
        return chosen


def launch_key(launch: Launch) -> str:
    return json.dumps(launch.to_dict(), sort_keys=True, separators=(",", ":"))


def _launch(d: object, where: str, min_seconds: float) -> LaunchSpec:
    if not isinstance(d, dict):
        raise PtxstaticError(f"{where}: a launch must be an object")
    launch = Launch.from_dict(d)
    try:
        repeats = int(d.get("repeats", 0))
        seconds = float(d.get("min_seconds", min_seconds))
    except (TypeError, ValueError) as exc:
        raise PtxstaticError(f"{where}: bad repeats/min_seconds: {exc}") from None
    if repeats < 0 or seconds <= 0:
        raise PtxstaticError(f"{where}: repeats must be >= 0 and min_seconds > 0")
    return LaunchSpec(launch, launch_key(launch), repeats, seconds)


def _bench(d: object, i: int, base: Path, path: Path, min_seconds: float) -> BenchSpec:
    where = f"{path}: benchmark {i}"
    if not isinstance(d, dict):
        raise PtxstaticError(f"{where}: must be an object")
    try:
        name, source, launches = str(d["name"]), str(d["source"]), d["launches"]
    except KeyError as exc:
        raise PtxstaticError(f"{where}: missing {exc}") from None
    where = f"{path}: benchmark {name!r}"
    src = (base / source).resolve()
    if src.suffix not in SOURCE_SUFFIXES:
        raise PtxstaticError(f"{where}: source {source!r} must be a .cu or .ptx file")
    if not src.is_file():
        raise PtxstaticError(f"{where}: no source file {source!r}")
    if not isinstance(launches, list) or not launches:
        raise PtxstaticError(f"{where}: needs a non-empty list of launches")
    specs = tuple(_launch(x, f"{where}, launch {j}", min_seconds) for j, x in enumerate(launches))
    if len({s.key for s in specs}) != len(specs):
        raise PtxstaticError(f"{where}: the same launch is listed twice")
    return BenchSpec(name, src, str(d.get("kernel", name)), specs)


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest; every problem is a :class:`PtxstaticError` naming the place."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        data = json.loads(raw)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PtxstaticError(f"{path}: cannot read the manifest: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise PtxstaticError(f"{path}: a manifest is an object with a list of benchmarks")
    try:
        min_seconds = float(data.get("min_seconds", 1.0))
    except (TypeError, ValueError):
        raise PtxstaticError(f"{path}: min_seconds must be a number") from None
    base = p.resolve().parent
    benches = tuple(_bench(d, i, base, p, min_seconds) for i, d in enumerate(data["benchmarks"]))
    names = [b.name for b in benches]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise PtxstaticError(f"{path}: benchmark names listed twice: {', '.join(dup)}")
    return Manifest(p, str(data.get("suite", p.stem)), str(data.get("nvcc_flags", "")), benches,
                    hashlib.sha256(raw).hexdigest())
