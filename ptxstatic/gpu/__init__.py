"""GPU access: the CUDA driver layer (:mod:`.driver`), kernel arguments (:mod:`.args`), the device protocols
(:mod:`.device`), :func:`~ptxstatic.gpu.open.open_device`, and the implementations: CUDA in a worker process
(:mod:`.cuda`, :mod:`.worker`), NVML (:mod:`.nvml`) and a fake device for tests (:mod:`.fake`)."""
