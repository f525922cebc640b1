"""Every call of an external tool, each in one place with a timeout and clear errors: nvcc (:mod:`.nvcc`),
ptxas (:mod:`.ptxas`), the LLVM NVPTX back end through llvmlite (:mod:`.llvm`) and Nsight Compute
(:mod:`.ncu`), all run by :mod:`.process`; the nvcc hook runs the build's own compiler command
unchanged through :mod:`.passthrough`."""
