// Histograms of hashed integer keys (global atomics; per-block shared histograms merged at the end),
// a bitonic-sort merge step, and an LSD radix-sort digit count.
// `in` holds n integer keys; bins is a power of two, at most 4096.
#include "common.cuh"

KERNEL void histogram_global(const int* in, unsigned* hist, int n, int bins) {
    for (int i = global_id(); i < n; i += global_threads()) atomicAdd(&hist[(scramble(in[i]) >> 8) & (bins - 1)], 1u);
}

KERNEL void histogram_shared(const int* in, unsigned* hist, int n, int bins) {
    __shared__ unsigned local[4096];
    for (int j = threadIdx.x; j < bins; j += blockDim.x) local[j] = 0;
    __syncthreads();
    for (int i = global_id(); i < n; i += global_threads()) atomicAdd(&local[(scramble(in[i]) >> 8) & (bins - 1)], 1u);
    __syncthreads();
    for (int j = threadIdx.x; j < bins; j += blockDim.x) atomicAdd(&hist[j], local[j]);
}

// One compare-exchange step (j, k) of a bitonic sort of n = 2^m elements.
KERNEL void bitonic_step(float* data, int n, int j, int k) {
    for (unsigned i = global_id(); i < (unsigned)n; i += global_threads()) {
        unsigned p = i ^ j;
        if (p > i && p < (unsigned)n) {
            float a = data[i], b = data[p];
            bool up = (i & k) == 0;
            if ((a > b) == up) {
                data[i] = b;
                data[p] = a;
            }
        }
    }
}

// Per-block counts of one 8-bit digit (shift in bits); counts holds 256 ints per block.
KERNEL void radix_digit_count(const int* in, unsigned* counts, int n, int shift) {
    __shared__ unsigned local[256];
    local[threadIdx.x & 255] = 0;
    __syncthreads();
    for (int i = global_id(); i < n; i += global_threads()) atomicAdd(&local[(scramble(in[i]) >> shift) & 255], 1u);
    __syncthreads();
    if (threadIdx.x < 256) counts[blockIdx.x * 256 + threadIdx.x] = local[threadIdx.x];
}
