"""Program analysis of a parsed kernel: basic-block graphs with loops and dominators (:mod:`.cfg`),
registers and def-use chains (:mod:`.registers`, :mod:`.defuse`), dependence on special registers
(:mod:`.deps`), instruction sequences (:mod:`.sequence`), the sequence a launch executes (:mod:`.executed`)
and per-function summaries (:mod:`.summary`).

The names below are imported on first use::

    from ptxstatic.analysis import build_cfg
    cfg = build_cfg(module.function("saxpy"))
    [(loop.header, loop.depth) for loop in cfg.loops]
"""

from ptxstatic.lazy import lazy_exports

_EXPORTS = {
    "BasicBlock": "cfg", "BlockGraph": "cfg", "Loop": "cfg", "build_cfg": "cfg", "call_graph": "cfg",
    "DefUse": "defuse", "def_use": "defuse",
    "Run": "sequence", "SeqItem": "sequence", "as_runs": "sequence", "kernel_sequence": "sequence",
    "run_length": "sequence",
    "ExecutedSequence": "executed", "executed_sequence": "executed",
    "FunctionSummary": "summary", "summarize": "summary", "summarize_module": "summary",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, {n: f"ptxstatic.analysis.{m}" for n, m in _EXPORTS.items()})
