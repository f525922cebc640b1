"""Block counts of one launch from an instrumented run on the device, and the features they give.

The module is instrumented and loaded once per run (:func:`ptxstatic.counts.instrument`); each launch runs the
instrumented kernel once on the device, reads the counter array back and folds what this run added to it
into :class:`~ptxstatic.block_counts.BlockCounts` (:func:`ptxstatic.counts.measured.block_counts`). The
features are

* the per-thread executed mix in the form the tree models read
  (:func:`ptxstatic.features.sequence_features.features_from_sequence` of every block's instructions weighted by its
  count per thread, with the launch and totals over threads) and the ISA-group shares
  (:func:`~ptxstatic.features.sequence_features.group_histogram`);
* ``portable.*``: everything :func:`ptxstatic.features.portable.features_from_counts` gives for the counts
  (GPU Mangrove's twelve, groups and widths, divergence, strides, and with ``ptxas -v`` statistics
  registers, spills and occupancy on the measured GPU);
* ``dynamic_shared_bytes`` of the launch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.sequence import Run, kernel_sequence, run_length
from ptxstatic.block_counts import BlockCounts
from ptxstatic.collect.compile import CompiledSource
from ptxstatic.counts.instrumentation.ptx_pass import Instrumented
from ptxstatic.counts.measured import block_counts
from ptxstatic.dataset.samples import KernelRecord
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.portable import features_from_counts
from ptxstatic.features.sequence_features import features_from_sequence, group_histogram
from ptxstatic.gpu.device import Gpu
from ptxstatic.hardware.occupancy import GpuSpec
from ptxstatic.launch import Launch
from ptxstatic.ptx.ast import Module
from ptxstatic.toolchain.ptxas import PtxasFunction


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """For releasing device resources: after a fault the release itself may fail, which changes nothing."""
    with contextlib.suppress(PtxstaticError):
        yield


@contextlib.contextmanager
def loaded(gpu: Gpu, ptx: str, kernel: str, launch: Launch) -> Iterator[tuple[int, int]]:
    """(module, prepared launch) handles, released and unloaded afterwards."""
    module = gpu.load(ptx)
    try:
        prepared = gpu.prepare(module, kernel, launch)
        try:
            yield module, prepared
        finally:
            with quietly():
                gpu.release(prepared)
    finally:
        with quietly():
            gpu.unload(module)


def count_blocks(gpu: Gpu, module: int, instrumented: Instrumented, kernel: str, launch: Launch,
                 before: np.ndarray | None) -> tuple[BlockCounts, np.ndarray]:
    """Run the instrumented kernel of the loaded ``module`` once and fold what the run added to its counters
    (``before``: the counters after the module's previous run, None for its first); the counters now."""
    prepared = gpu.prepare(module, kernel, launch)
    try:
        gpu.run(prepared)
        raw = np.frombuffer(gpu.read_global(module, instrumented.counters.symbol), np.uint64).copy()
    finally:
        with quietly():
            gpu.release(prepared)
    added = raw - before if before is not None else raw
    return block_counts(instrumented.counters, [int(x) for x in added], kernel, launch), raw


def executed_runs(module: Module, counts: BlockCounts) -> list[Run]:
    """Every executed instruction of the launch as (item, executions per thread), block by block."""
    threads = max(1, counts.launch.threads)
    runs: list[Run] = []
    for fname, blocks in counts.counts.items():
        fn = module.function(fname)
        seq = kernel_sequence(fn)
        for b in build_cfg(fn).blocks:
            n = blocks.get(b.id, 0.0)
            if n:
                runs += [(item, n / threads) for item in seq[b.start: b.start + len(b)]]
    return runs  # type: ignore[return-value]


def launch_features(source: CompiledSource, kernel: str, counts: BlockCounts, target: GpuSpec | None,
                    ptxas: dict[str, PtxasFunction] | None) -> dict[str, float]:
    """The features of one counted launch (module docstring); ``target`` and ``ptxas`` enable occupancy."""
    launch = counts.launch
    runs = executed_runs(source.module, counts)
    features = features_from_sequence(runs, (launch.threads_per_block, launch.blocks)) | group_histogram(runs)
    features["dynamic_shared_bytes"] = float(launch.shared_bytes)
    rich = features_from_counts(source.module, kernel, counts, gpu=target, ptxas=ptxas)
    features.update({f"portable.{k}": float(v) for k, v in rich.items() if not isinstance(v, str)})
    return features


def kernel_record(source: CompiledSource, kernel: str, counts: BlockCounts, target: GpuSpec | None,
                  ptxas: dict[str, PtxasFunction] | None, label: str) -> KernelRecord:
    """The features of one counted launch and the kernel's static sequence (``label`` names the source)."""
    features = launch_features(source, kernel, counts, target, ptxas)
    runs = run_length(kernel_sequence(source.module.function(kernel)))
    return KernelRecord(counts, features, runs, label, kernel, source.arch, source.sha256)
