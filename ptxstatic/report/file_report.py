"""What the HTML report shows of one file, gathered from the pipelines it shares with ``check`` and ``predict``:
the findings and kernels of :func:`~ptxstatic.lint.document.analyse_document`, each kernel's prediction
(:func:`~ptxstatic.predict.predict_kernel`), its basic-block graph with loops and estimated block counts, the
``.cu`` lines of each block and the card of the model the predictions come from. Nothing here renders.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.config import Config
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.intensity import DEFAULT_TRIPS, loop_weights
from ptxstatic.findings import Finding
from ptxstatic.launch import Launch
from ptxstatic.lint.compile_db import CompileDatabase, find_database, load_database
from ptxstatic.lint.document import DocumentResult, Problem, analyse_document, kind_of
from ptxstatic.predict import Models, executed_estimate, predict_kernel
from ptxstatic.ptx.ast import Function, Module, SourceLoc
from ptxstatic.ptx.kernels import find_kernels
from ptxstatic.ptx.launch_binding import bind


@dataclass(frozen=True)
class BlockInfo:
    """One basic block: its PTX lines, estimated executions (summed over threads with a launch, else a
    relative weight), whether that count is exact (None: a weight, not a count), its loop depth and the ``.cu``
    lines it was compiled from."""

    id: int
    name: str
    ptx_lines: tuple[int, int]
    count: float
    exact: bool | None
    loop_depth: int
    source_file: str | None  # the kernel's own source file
    source_lines: tuple[int, ...]


@dataclass
class KernelReport:
    name: str
    display_name: str
    prediction: dict
    graph: BlockGraph
    blocks: list[BlockInfo]
    findings: list[Finding]


@dataclass
class FileReport:
    """Everything the page shows: per-kernel reports, the problems that kept parts of the file from being
    analysed, how block counts were obtained, the source files the blocks map to (path -> its lines) and the
    prediction model's card with the GPU's default clocks."""

    path: str
    kernels: list[KernelReport]
    problems: list[Problem]
    counts_method: str
    sources: dict[str, list[str]] = field(default_factory=dict)
    card: dict | None = None
    default_clocks: tuple[int, int] | None = None
    launch: Launch | None = None


def file_report(path: str, config: Config, models: Models, launch: Launch | None = None, *,
                kernel: str | None = None, nvcc_flags: str | None = None) -> FileReport:
    """The report of every kernel of a ``.cu`` or ``.ptx`` file (or only ``kernel``)."""
    if kind_of(path) not in ("cu", "ptx"):
        raise PtxstaticError(f"{path}: not a CUDA (.cu) or PTX (.ptx) file")
    if not os.path.isfile(path):
        raise PtxstaticError(f"{path}: no such file")
    doc = analyse_document(path, config, database=_database(path, config), nvcc_flags=nvcc_flags,
                           keep_module=True)
    module = doc.module
    if module is None or (not module.kernels and doc.problems):
        raise PtxstaticError(doc.problems[0].render() if doc.problems else f"{path}: nothing to report")
    functions = find_kernels(module, kernel) if kernel is not None else module.kernels
    if not functions:
        raise PtxstaticError(f"{path}: no kernels")
    root = doc.compile.directory if doc.compile is not None else None
    kernels = [_kernel(module, fn, doc, models, launch, root) for fn in functions]
    sources = _sources(kernels)
    method = ("static block counts of the launch, summed over threads" if launch is not None else
              f"no launch: relative weights, {DEFAULT_TRIPS:g}^(loop depth) per block")
    figures = models.figures
    return FileReport(path, kernels, list(doc.problems), method, sources,
                      models.dvfs.card if models.dvfs is not None else None,
                      figures.default_clocks if figures is not None else None, launch)


def _database(path: str, config: Config) -> CompileDatabase | None:
    """The build's ``compile_commands.json`` for a CUDA file, where there is one."""
    if kind_of(path) != "cu":
        return None
    found = find_database(path, config.build_path)
    return load_database(found) if found is not None else None


def _kernel(module: Module, fn: Function, doc: DocumentResult, models: Models, launch: Launch | None,
            root: str | None) -> KernelReport:
    bound = bind(module, fn, launch) if launch is not None else None
    estimate = executed_estimate(fn, bound)
    prediction = predict_kernel(module, fn, models, bound, estimate=estimate)
    graph = build_cfg(fn)
    counts, exact = _counts(fn, graph, estimate[2].counts if estimate[2] is not None else None)
    blocks = []
    for b in graph.blocks:
        file, lines = _block_source(b.instructions, root)
        blocks.append(BlockInfo(b.id, b.name, b.lines, counts.get(b.id, 0.0), exact.get(b.id) if launch else None,
                                graph.loop_depth.get(b.id, 0), file, lines))
    display = next((k.display_name for k in doc.kernels if k.name == fn.name), fn.name)
    findings = [f for f in doc.findings if f.kernel == fn.name]
    return KernelReport(fn.name, display, prediction, graph, blocks, findings)


def _counts(fn: Function, graph: BlockGraph, counts: BlockCounts | None) -> tuple[dict[int, float], dict[int, bool]]:
    """Executions of each block of the kernel: the static block counts the prediction used, or without a
    launch the relative weight it used (:func:`~ptxstatic.features.intensity.loop_weights`)."""
    if counts is None:
        return {b: float(w) for b, w in loop_weights(graph).items()}, {}
    return counts.of(fn.name), counts.exact.get(fn.name, {})


def _outermost(loc: SourceLoc) -> SourceLoc:
    while loc.inlined_at is not None:
        loc = loc.inlined_at
    return loc


def _block_source(instructions: list, root: str | None) -> tuple[str | None, tuple[int, ...]]:
    """The kernel's source file and the lines of it a block was compiled from: each instruction's position
    in the kernel itself (code inlined into it at its call site)."""
    locs = [_outermost(i.loc) for i in instructions if i.loc is not None]
    if not locs:
        return None, ()
    file = locs[0].file
    if root is not None and not os.path.isabs(file):
        file = os.path.join(root, file)
    return file, tuple(sorted({loc.line for loc in locs if loc.file == locs[0].file}))


def _sources(kernels: list[KernelReport]) -> dict[str, list[str]]:
    """The text of every source file a block maps to (files that cannot be read are left out)."""
    out: dict[str, list[str]] = {}
    for k in kernels:
        for b in k.blocks:
            if b.source_file is None or b.source_file in out:
                continue
            try:
                out[b.source_file] = Path(b.source_file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
    return out
