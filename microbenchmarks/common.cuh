// Shared helpers of the microbenchmark suite.
//
// Conventions: every kernel is extern "C" (plain PTX names); a kernel's work is set by its launch and
// its integer parameters (iteration counts, element counts, strides), never by the data; every memory
// access is bounded by an element count passed as a parameter (or masked with a power-of-two mask),
// so that no launch of the manifest can fault; every result reaches global memory so that the
// compiler cannot remove the work.
#pragma once
#include <cstdint>

#define KERNEL extern "C" __global__

__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int global_threads() { return gridDim.x * blockDim.x; }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }

// A multiplicative hash: spreads index data (written as 0, 1, 2, ...) over a range without a table.
__device__ __forceinline__ unsigned scramble(int v) { return (unsigned)v * 2654435761u; }

// Store a per-thread result when the thread is inside the output buffer.
template <typename T>
__device__ __forceinline__ void keep(T* out, int n, T value) {
    int i = global_id();
    if (i < n) out[i] = value;
}
