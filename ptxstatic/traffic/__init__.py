"""The memory traffic of a launch: per memory instruction its requests and sectors, per launch the bytes that
move through L1, L2 and DRAM, from emulated samples of the launch, the addresses' strides and a cache model of
the target GPU (docs/traffic.md)."""
