"""Training data for one GPU, read from a dataset store into arrays.

A sample is one measured benchmark (at one launch): its kernels' sequences concatenated in launch order
(dependencies never cross a kernel boundary, since each kernel's distances point inside it), and its
time, power and energy at every clock configuration of the GPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ptxstatic.analysis.sequence import Run
from ptxstatic.dataset.store import ClockConfig, DatasetStore
from ptxstatic.dvfs import TARGETS, ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.sequence_features import LAUNCH, PORTABLE, TOTALS, features_from_sequence

#: the absolute models' features on data with launches
LAUNCH_PORTABLE = (*PORTABLE, *LAUNCH, *TOTALS)


def clock_table(configs: Sequence[ClockConfig]) -> ClockTable:
    """The clock table of a GPU's stored configurations (with idle power where every one has it)."""
    idle = tuple(float(c.idle_power_w) for c in configs if c.idle_power_w is not None)
    return ClockTable(tuple(c.f_mem for c in configs), tuple(c.f_core for c in configs),
                      idle if len(idle) == len(configs) else None)


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
    #: what keeps samples together in a split by benchmark: the benchmark (imported data) or the kernel's
    #: source and name (collected data, where each launch is a sample)
    groups: list[str] = field(default_factory=list)
    #: each sample's stored features (collected data: per launch, with the launch); {} if not one kernel
    features: list[dict[str, float]] = field(default_factory=list)

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
        return [benchmark_family(n.partition("@")[0]) for n in self.names]

    def grouping(self, by: str) -> list[str]:
        """The group of every sample for a split by ``benchmark`` or by ``family``."""
        return (self.groups or self.names) if by == "benchmark" else self.families()

    def absolute_feature_names(self) -> tuple[str, ...]:
        """The features absolute models train on: per thread plus the launch where every sample recorded
        its launch (measured with ``collect``), else per thread only (imported data has no launches)."""
        if self.features and all(set(LAUNCH_PORTABLE) <= f.keys() for f in self.features):
            return LAUNCH_PORTABLE
        return PORTABLE

    def feature_matrix(self, names: Sequence[str]) -> np.ndarray:
        """(samples, features) of the named features: stored ones where every sample has them, else
        per-thread ones computed from the sequences."""
        if self.features and all(set(names) <= f.keys() for f in self.features):
            rows = self.features
        elif set(names) <= set(PORTABLE):
            rows = [features_from_sequence(r) for r in self.runs]
        else:
            raise PtxstaticError(f"the data lacks features {', '.join(sorted(set(names) - set(PORTABLE)))} "
                                 "(launch features: measure with ptxstatic collect)")
        return np.array([[f[n] for n in names] for f in rows], dtype=float)

    def subset(self, index: np.ndarray | list[int]) -> DvfsDataset:
        idx = [int(i) for i in index]
        return replace(
            self, names=[self.names[i] for i in idx], runs=[self.runs[i] for i in idx],
            time=self.time[idx], power=self.power[idx], energy=self.energy[idx],
            kernel_names=[self.kernel_names[i] for i in idx] if self.kernel_names else [],
            groups=[self.groups[i] for i in idx] if self.groups else [],
            features=[self.features[i] for i in idx] if self.features else [],
        )


def load_dataset(store: DatasetStore, gpu: str, suite: str | None = None) -> DvfsDataset:
    """Every benchmark measured on ``gpu`` at every clock configuration (optionally of one suite).

    A GPU measured only at its default settings (``collect`` without ``--clocks``) has the clocks its board
    chose, which may differ from sample to sample: its table is then one configuration, the most common one,
    and each sample's one measurement stands for it (absolute models; there is no scaling to learn).
    """
    configs = store.clocks(gpu)
    if not configs:
        raise PtxstaticError(f"{store.path}: GPU {gpu!r} has no clock configurations")
    board_chosen = len(configs) > 1 and all(c.is_default for c in configs)
    benches = {b.id: b for b in store.benchmarks(suite)}
    samples = []
    for bench_id, launch in store.measured(gpu):
        if bench_id in benches:
            samples.append((benches[bench_id], launch, store.measurements(bench_id, gpu, launch)))
    if board_chosen:
        seen = Counter((m.f_mem, m.f_core) for _, _, ms in samples for m in ms)
        common = seen.most_common(1)[0][0] if seen else (configs[0].f_mem, configs[0].f_core)
        clocks = ClockTable((common[0],), (common[1],))
    else:
        clocks = clock_table(configs)
    names, runs, kernel_names, rows, groups, features = [], [], [], [], [], []
    for bench, launch, measured in samples:
        if board_chosen:
            row = measured[:1]
        else:
            ms = {(m.f_mem, m.f_core): m for m in measured}
            if len(ms) != len(clocks):
                continue  # not measured at every configuration: unusable for scaling surfaces
            row = [ms[(m, c)] for m, c in zip(clocks.f_mem, clocks.f_core)]
        kernels = store.kernels(bench.id)
        seq: list[Run] = []
        for k in kernels:
            seq += store.sequence(k.id)
        names.append(bench.name if not launch else f"{bench.name}@{launch}")
        runs.append(seq)
        kernel_names.append([k.name for k in kernels])
        rows.append(row)
        groups.append(bench.source or bench.name)
        features.append(store.features(kernels[0].id) if len(kernels) == 1 else {})
    if not rows:
        raise PtxstaticError(f"{store.path}: no benchmark is measured at every clock configuration of {gpu!r}")
    info = store.gpu_info(gpu)
    return DvfsDataset(
        gpu, clocks, names, runs,
        np.array([[m.time_ms for m in r] for r in rows]), np.array([[m.power_w for m in r] for r in rows]),
        np.array([[m.energy_mj for m in r] for r in rows]), kernel_names, info["source"], info["license"],
        groups, features,
    )


def open_data(path: str | Path, progress: Callable[[str], None] | None = None) -> DatasetStore:
    """A dataset file, or a folder in the gpuPTXModel layout imported into a throw-away in-memory store."""
    p = Path(path)
    if p.is_dir():
        from ptxstatic.dataset.gpuptxmodel import import_folder

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
