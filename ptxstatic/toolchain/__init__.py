"""Every call of an external tool, each in one place with a timeout and clear errors: nvcc (:mod:`.nvcc`),
ptxas (:mod:`.ptxas`) and the LLVM NVPTX back end through llvmlite (:mod:`.llvm`)."""
