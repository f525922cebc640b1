"""Basic-block execution counts of a kernel launch, three ways: estimated statically without a GPU
(:mod:`.static`), inserted as counters into the code (:mod:`.instrumentation`), and measured on a GPU by
running the instrumented kernel (:mod:`.measured`). Every way gives a :class:`ptxstatic.block_counts.BlockCounts`.

The names below are imported on first use, so ``import ptxstatic.counts`` is free::

    from ptxstatic.counts import estimate_counts
    from ptxstatic.ptx.launch_binding import bind
    est = estimate_counts(bind(module, "saxpy", Launch((64, 1, 1), (256, 1, 1), args={"n": 1 << 20})))
"""

from ptxstatic.lazy import lazy_exports

__all__ = ["CounterMap", "InstrumentOptions", "Instrumented", "ProfileResult", "StaticEstimate", "estimate_counts",
           "instrument", "instrument_ir", "profile"]
__getattr__, __dir__ = lazy_exports(__name__, {
    "StaticEstimate": "ptxstatic.counts.static.estimate",
    "estimate_counts": "ptxstatic.counts.static.estimate",
    "CounterMap": "ptxstatic.counts.instrumentation.counter_map",
    "InstrumentOptions": "ptxstatic.counts.instrumentation.ptx_pass",
    "Instrumented": "ptxstatic.counts.instrumentation.ptx_pass",
    "instrument": "ptxstatic.counts.instrumentation.ptx_pass",
    "instrument_ir": "ptxstatic.counts.instrumentation.llvm_ir",
    "ProfileResult": "ptxstatic.counts.measured",
    "profile": "ptxstatic.counts.measured",
})
