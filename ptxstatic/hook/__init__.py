"""The nvcc build-step hook: ``ptxstatic-nvcc nvcc ARGS...`` (or ``ptxstatic nvcc -- nvcc ARGS...``)."""
