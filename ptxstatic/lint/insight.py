"""A kernel's insight, what an editor's hover (and a report) shows about it: its prediction (``predict``:
time, power and energy scaling, the minimum-energy clocks, the physical model's quantities) and its basic
blocks ranked by their estimated share of the executed instructions, with the ``.cu`` lines each holds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

from ptxstatic.block_counts import BlockCounts
from ptxstatic.features.intensity import loop_weights
from ptxstatic.launch import Launch
from ptxstatic.ptx.ast import Function, Module

#: basic blocks an insight lists
HOT_BLOCKS = 3


@dataclass(frozen=True)
class HotBlock:
    """A basic block: its PTX label, estimated executions (relative without a launch), share of the
    kernel's executed instructions, loop depth, and the ``(file, line)`` positions its instructions come
    from."""

    name: str
    executions: float
    share: float
    loop_depth: int
    lines: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class KernelInsight:
    """A kernel's prediction (``predict.prediction``'s dict; None with the reason in ``error``) and hottest
    blocks."""

    name: str
    display_name: str
    prediction: dict | None
    hot_blocks: tuple[HotBlock, ...]
    launch: bool
    error: str | None = None


def hot_blocks(fn: Function, counts: BlockCounts | None, aliases: dict[str, str],
               limit: int = HOT_BLOCKS) -> tuple[HotBlock, ...]:
    """The ``limit`` blocks with the largest share of the kernel's executed instructions: executions from
    the launch's static block ``counts``, or without a launch the assumed trip count to the power of the
    loop depth (:func:`~ptxstatic.features.intensity.loop_weights`)."""
    from ptxstatic.analysis.cfg import build_cfg

    cfg = build_cfg(fn)
    depth = cfg.loop_depth
    runs = counts.of(fn.name) if counts is not None else loop_weights(cfg)
    work = {b.id: runs.get(b.id, 0.0) * len(b) for b in cfg.blocks}
    total = sum(work.values()) or 1.0
    ranked = sorted((b for b in cfg.blocks if work[b.id] > 0), key=lambda b: -work[b.id])[:limit]
    return tuple(HotBlock(b.name, float(runs.get(b.id, 0.0)), work[b.id] / total, depth.get(b.id, 0),
                          _lines(b.instructions, aliases)) for b in ranked)


def _lines(instructions: list, aliases: dict[str, str]) -> tuple[tuple[str, int], ...]:
    seen = {(aliases.get(i.loc.file, i.loc.file), i.loc.line) for i in instructions if i.loc is not None}
    return tuple(sorted(x for x in seen if x[1] > 0))


@lru_cache(maxsize=4)
def models_for(gpu: str | None):
    """The default prediction models of ``gpu`` (loaded once per process)."""
    from ptxstatic.predict import load_models

    return load_models(gpu)


def kernel_insight(module: Module, fn: Function, display_name: str, gpu: str | None, launch: Launch | None,
                   aliases: dict[str, str]) -> KernelInsight:
    """Predict ``fn`` and rank its blocks. An input the models cannot take gives an insight with ``error``; a
    launch that does not fit the kernel (a missing argument), the insight without it, saying why."""
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.predict import executed_estimate, predict_kernel
    from ptxstatic.ptx.launch_binding import bind

    try:
        bound = bind(module, fn, launch) if launch is not None else None
        estimate = executed_estimate(fn, bound)
        prediction = predict_kernel(module, fn, models_for(gpu), bound, estimate=estimate)
    except PtxstaticError as exc:
        if launch is not None:
            without = kernel_insight(module, fn, display_name, gpu, None, aliases)
            return dataclasses.replace(without, error=f"the configured launch does not fit: {exc}")
        return KernelInsight(fn.name, display_name, None, hot_blocks(fn, None, aliases), False, str(exc))
    counts = estimate[2].counts if estimate[2] is not None else None
    return KernelInsight(fn.name, display_name, prediction, hot_blocks(fn, counts, aliases), launch is not None)
