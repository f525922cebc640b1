"""Block counts of one launch from an instrumented run on the device, and the features they give.

The module is instrumented once (:func:`ptxstatic.counts.instrument.instrument`); each launch runs the
instrumented kernel once on the device, reads the counter array back and folds it into
:class:`~ptxstatic.counts.model.BlockCounts` (:func:`ptxstatic.counts.gpu.block_counts`). Features are the
portable and ISA-group features of the executed instruction mix (every block's instructions weighted by its
count per thread), plus the launch's dynamic shared memory and the registers, static shared memory and local
memory the driver reports for the compiled kernel.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.sequence import kernel_sequence
from ptxstatic.counts.gpu import block_counts
from ptxstatic.counts.instrument import Instrumented
from ptxstatic.counts.launch import Launch
from ptxstatic.counts.model import BlockCounts
from ptxstatic.data.collect_compile import CompiledSource
from ptxstatic.data.device import Gpu, KernelAttributes
from ptxstatic.data.samples import KernelRecord
from ptxstatic.data.seq_features import group_histogram, portable_features
from ptxstatic.data.store import Run, run_length
from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx.ast import Module


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


def count_blocks(gpu: Gpu, instrumented: Instrumented, kernel: str, launch: Launch) -> BlockCounts:
    """Run the instrumented kernel once and fold its counters."""
    with loaded(gpu, instrumented.text, kernel, launch) as (module, prepared):
        gpu.run(prepared)
        raw = np.frombuffer(gpu.read_global(module, instrumented.counters.symbol), np.uint64)
    return block_counts(instrumented.counters, [int(x) for x in raw], kernel, launch)


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


def launch_features(module: Module, counts: BlockCounts, attributes: KernelAttributes) -> dict[str, float]:
    """Portable features, ISA-group shares, and the launch's memory and register footprint."""
    launch = counts.launch
    runs = executed_runs(module, counts)
    features = portable_features(runs, (launch.threads_per_block, launch.blocks)) | group_histogram(runs)
    features["dynamic_shared_bytes"] = float(launch.shared_bytes)
    for name in ("registers", "static_shared_bytes", "local_bytes"):
        value = getattr(attributes, name)
        if value is not None:
            features[name] = float(value)
    return features


def kernel_record(source: CompiledSource, kernel: str, counts: BlockCounts, attributes: KernelAttributes,
                  label: str) -> KernelRecord:
    """The features of one counted launch and the kernel's static sequence (``label`` names the source)."""
    features = launch_features(source.module, counts, attributes)
    runs = run_length(kernel_sequence(source.module.function(kernel)))
    return KernelRecord(counts, features, runs, label, kernel, source.arch, source.sha256)
