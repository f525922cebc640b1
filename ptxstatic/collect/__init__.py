"""Measuring a GPU into a dataset (``ptxstatic collect``): the run (:mod:`.runner`), its manifest
(:mod:`.manifest`), compiling (:mod:`.compile`), block counts and features (:mod:`.features`), timed and
power-sampled loops (:mod:`.measure`) and clock settings (:mod:`.clocks`). See ``docs/collect.md``."""
