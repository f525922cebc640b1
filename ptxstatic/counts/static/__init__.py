"""Static block-count estimates without a GPU: the control flow interpreted over every thread of a launch
(:mod:`.estimate`, :mod:`.interp`, :mod:`.values`), loop fast-forward (:mod:`.loops`) and the Markov
fallback (:mod:`.markov`). See ``docs/static_counts.md``."""

from ptxstatic.lazy import lazy_exports

__all__ = ["StaticEstimate", "estimate_counts"]
__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "ptxstatic.counts.static.estimate"))
