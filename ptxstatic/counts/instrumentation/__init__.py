"""CUDA-Flux-style basic-block counters: the pass on PTX (:mod:`.ptx_pass`), the counter map
(:mod:`.counter_map`) and the route through NVPTX LLVM IR (:mod:`.llvm_ir`). See ``docs/instrumentation.md``."""

from ptxstatic.lazy import lazy_exports

__all__ = ["CounterMap", "InstrumentOptions", "Instrumented", "instrument", "instrument_ir"]
__getattr__, __dir__ = lazy_exports(__name__, {
    "CounterMap": "ptxstatic.counts.instrumentation.counter_map",
    "InstrumentOptions": "ptxstatic.counts.instrumentation.ptx_pass",
    "Instrumented": "ptxstatic.counts.instrumentation.ptx_pass",
    "instrument": "ptxstatic.counts.instrumentation.ptx_pass",
    "instrument_ir": "ptxstatic.counts.instrumentation.llvm_ir",
})
