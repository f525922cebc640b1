"""What a source file needs before its launches are measured, made on worker threads while the device measures.

For each source of the run, one job: compile it (``nvcc -ptx``, or read a ``.ptx`` file) and parse it, then
instrument it when some launch of it still needs its block counts, and take its ``ptxas -v`` statistics
when features will be computed. Jobs are queued in the order the measurements need the sources, so that the
first sample waits for one compile rather than all of them, and the rest compile beside the measurements.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.collect.compile import CompiledSource, compile_source
from ptxstatic.counts.instrumentation.ptx_pass import Instrumented, instrument
from ptxstatic.errors import PtxstaticError
from ptxstatic.toolchain.ptxas import PtxasFunction, ptxas_stats


@dataclass
class SourceWork:
    """A source compiled and parsed, with its instrumented module and ptxas statistics where needed."""

    compiled: CompiledSource
    instrumented: Instrumented | None
    ptxas: dict[str, PtxasFunction] | None
    notes: list[str] = field(default_factory=list)  # what the run should say (ptxas failing)


def prepare_source(path: Path, arch: str, flags: str, counting: bool) -> SourceWork:
    """Compile and parse ``path``; with ``counting``, instrument it and take its ptxas statistics."""
    compiled = compile_source(path, arch, flags)
    if not counting:
        return SourceWork(compiled, None, None)
    instrumented = instrument(compiled.module, source_text=compiled.ptx)
    try:
        return SourceWork(compiled, instrumented, ptxas_stats(compiled.ptx, arch))
    except PtxstaticError as exc:
        return SourceWork(compiled, instrumented, None, [f"{path.name}: no register or occupancy features: {exc}"])


class SourcePrep:
    """The run's source jobs on ``jobs`` threads (default: the CPU count)."""

    def __init__(self, arch: str, flags: str, jobs: int | None = None) -> None:
        self.arch, self.flags = arch, flags
        self.pool = ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2, thread_name_prefix="ptxstatic-prep")
        self.jobs: dict[Path, Future[SourceWork]] = {}

    def submit(self, paths: list[Path], counting: set[Path]) -> None:
        """Queue every source not queued yet, in the order given; those in ``counting`` are instrumented."""
        for path in paths:
            if path not in self.jobs:
                self.jobs[path] = self.pool.submit(prepare_source, path, self.arch, self.flags, path in counting)

    def get(self, path: Path) -> SourceWork:
        """The source's work, waiting for it; a source that does not compile raises its error."""
        return self.jobs[path].result()

    def close(self) -> None:
        """Drop the jobs not started (an interrupted or finished run); running ones end on their own."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> SourcePrep:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
