"""Training data for one GPU, read from a dataset store into arrays.

A sample is one measured benchmark (at one launch): its kernels' sequences concatenated in launch order
(dependencies never cross a kernel boundary, since each kernel's distances point inside it), and its
time, power and energy at every clock configuration of the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ptxstatic.data.store import ClockConfig, DatasetStore, Run
from ptxstatic.errors import PtxstaticError

TARGETS = ("time", "power", "energy")


@dataclass(frozen=True)
class ClockTable:
    """A GPU's clock configurations (MHz), memory clock ascending then core clock ascending."""

    f_mem: tuple[int, ...]
    f_core: tuple[int, ...]
    idle_power_w: tuple[float, ...] | None = None

    @classmethod
    def from_configs(cls, configs: list[ClockConfig]) -> ClockTable:
        idle = tuple(float(c.idle_power_w) for c in configs if c.idle_power_w is not None)
        return cls(
            tuple(c.f_mem for c in configs), tuple(c.f_core for c in configs),
            idle if len(idle) == len(configs) else None,
        )

    def __len__(self) -> int:
        return len(self.f_mem)

    @property
    def reference(self) -> int:
        """Index of the reference configuration: the highest memory clock, then the highest core clock."""
        return max(range(len(self)), key=lambda i: (self.f_mem[i], self.f_core[i]))

    def normalised(self) -> np.ndarray:
        """(configs, 2) array of (f_mem, f_core) divided by the reference configuration's clocks."""
        ref = self.reference
        return np.column_stack([
            np.asarray(self.f_mem, float) / self.f_mem[ref], np.asarray(self.f_core, float) / self.f_core[ref],
        ])

    def index(self, f_mem: int, f_core: int) -> int:
        for i, pair in enumerate(zip(self.f_mem, self.f_core)):
            if pair == (f_mem, f_core):
                return i
        raise PtxstaticError(f"no clock configuration mem {f_mem} MHz, core {f_core} MHz")

    def to_dict(self) -> dict:
        return {"f_mem": list(self.f_mem), "f_core": list(self.f_core),
                "idle_power_w": list(self.idle_power_w) if self.idle_power_w else None}

    @classmethod
    def from_dict(cls, d: dict) -> ClockTable:
        idle = d.get("idle_power_w")
        return cls(tuple(int(x) for x in d["f_mem"]), tuple(int(x) for x in d["f_core"]),
                   tuple(float(x) for x in idle) if idle else None)


def benchmark_family(name: str) -> str:
    """A benchmark's family: its name without the purely numeric parts (``fadd_l2d_90_10_64p`` ->
    ``fadd_l2d_64p``, ``L2_2048_8`` -> ``L2``), so that near-duplicates share a family."""
    return "_".join(p for p in name.split("_") if not p.isdigit()) or name


@dataclass
class DvfsDataset:
    """Measured benchmarks of one GPU: sequences and absolute time (ms), power (W), energy (mJ)."""

    gpu: str
    clocks: ClockTable
    names: list[str]
    runs: list[list[Run]]
    time: np.ndarray  # (samples, configs)
    power: np.ndarray
    energy: np.ndarray
    kernel_names: list[list[str]] = field(default_factory=list)
    source: str = ""
    license: str = ""

    def __len__(self) -> int:
        return len(self.names)

    def values(self, target: str) -> np.ndarray:
        if target not in TARGETS:
            raise PtxstaticError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
        return getattr(self, target)

    def scaling(self, target: str) -> np.ndarray:
        """Values relative to the reference (highest-clock) configuration of each sample."""
        v = self.values(target)
        return v / v[:, [self.clocks.reference]]

    def scaling_surfaces(self) -> np.ndarray:
        """(samples, 3, configs) time, power and energy scaling factors, in ``TARGETS`` order."""
        return np.stack([self.scaling(t) for t in TARGETS], axis=1)

    def families(self) -> list[str]:
        return [benchmark_family(n) for n in self.names]

    def subset(self, index: np.ndarray | list[int]) -> DvfsDataset:
        idx = [int(i) for i in index]
        return replace(
            self, names=[self.names[i] for i in idx], runs=[self.runs[i] for i in idx],
            time=self.time[idx], power=self.power[idx], energy=self.energy[idx],
            kernel_names=[self.kernel_names[i] for i in idx] if self.kernel_names else [],
        )


def load_dataset(store: DatasetStore, gpu: str, suite: str | None = None) -> DvfsDataset:
    """Every benchmark measured on ``gpu`` at every clock configuration (optionally of one suite)."""
    clocks = ClockTable.from_configs(store.clocks(gpu))
    if not len(clocks):
        raise PtxstaticError(f"{store.path}: GPU {gpu!r} has no clock configurations")
    benches = {b.id: b for b in store.benchmarks(suite)}
    names, runs, kernel_names, rows = [], [], [], []
    for bench_id, launch in store.measured(gpu):
        bench = benches.get(bench_id)
        if bench is None:
            continue
        ms = {(m.f_mem, m.f_core): m for m in store.measurements(bench_id, gpu, launch)}
        if len(ms) != len(clocks):
            continue  # not measured at every configuration: unusable for scaling surfaces
        kernels = store.kernels(bench_id)
        seq: list[Run] = []
        for k in kernels:
            seq += store.sequence(k.id)
        names.append(bench.name if not launch else f"{bench.name}@{launch}")
        runs.append(seq)
        kernel_names.append([k.name for k in kernels])
        rows.append([ms[(m, c)] for m, c in zip(clocks.f_mem, clocks.f_core)])
    if not rows:
        raise PtxstaticError(f"{store.path}: no benchmark is measured at every clock configuration of {gpu!r}")
    info = store.gpu_info(gpu)
    return DvfsDataset(
        gpu, clocks, names, runs,
        np.array([[m.time_ms for m in r] for r in rows]), np.array([[m.power_w for m in r] for r in rows]),
        np.array([[m.energy_mj for m in r] for r in rows]), kernel_names, info["source"], info["license"],
    )


def open_data(path: str | Path, progress: Callable[[str], None] | None = None) -> DatasetStore:
    """A dataset file, or a folder in the gpuPTXModel layout imported into a throw-away in-memory store."""
    p = Path(path)
    if p.is_dir():
        from ptxstatic.data.gpuptxmodel import import_folder

        store = DatasetStore(":memory:", create=True)
        import_folder(p, store, progress=progress)
        return store
    return DatasetStore(p)


def default_gpu(store: DatasetStore, gpu: str | None) -> str:
    """The GPU asked for, or the store's only GPU."""
    if gpu:
        store.gpu_id(gpu)
        return gpu
    gpus = store.gpus()
    if len(gpus) != 1:
        raise PtxstaticError(f"{store.path}: holds GPUs {', '.join(gpus) or 'none'}; choose one with --gpu")
    return gpus[0]
