"""Measuring a GPU into a dataset (``ptxstatic collect``): the run (:mod:`.runner`), its manifest
(:mod:`.manifest`), compiling (:mod:`.compile`), block counts and features (:mod:`.features`), timed and
power-sampled loops (:mod:`.measure`), clock settings (:mod:`.clock_settings`), and hardware counters
(:mod:`.counters`, one launch a run: :mod:`.launch_once`). See ``docs/collect.md``."""
