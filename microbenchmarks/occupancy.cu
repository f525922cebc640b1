// Occupancy sweeps: registers per thread (R live accumulators), static shared memory per block, and
// kernels meant to be launched at several block sizes and dynamic shared-memory sizes.
// Signature: (out, n, iters, seed) unless stated.
#include "common.cuh"

template <int R>
__device__ __forceinline__ void live_registers(float* out, int n, int iters, int seed) {
    float acc[R];
#pragma unroll
    for (int j = 0; j < R; ++j) acc[j] = global_id() * 1e-3f + j + seed;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int j = 0; j < R; ++j) acc[j] = fmaf(acc[j], 0.999f, 1e-3f);
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < R; ++j) s += acc[j];
    keep(out, n, s);
}

#define REGS(R) \
    KERNEL void occ_regs_##R(float* out, int n, int iters, int seed) { live_registers<R>(out, n, iters, seed); }
REGS(8)
REGS(32)
REGS(64)
REGS(128)
REGS(192)

template <int WORDS>
__device__ __forceinline__ void static_shared(float* out, int n, int iters, int seed) {
    __shared__ float buf[WORDS];
    for (int i = threadIdx.x; i < WORDS; i += blockDim.x) buf[i] = i + seed;
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) s += buf[(threadIdx.x + 32 * k) % WORDS];
    keep(out, n, s);
}

#define SMEM(KB) \
    KERNEL void occ_smem_##KB##k(float* out, int n, int iters, int seed) { static_shared<KB * 256>(out, n, iters, seed); }
SMEM(4)
SMEM(16)
SMEM(32)
SMEM(48)

// A mixed load of arithmetic and global traffic; launched at block sizes from 32 to 1024.
KERNEL void occ_block_size(const float* in, float* out, int n, int iters) {
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) {
        float x = in[i];
        for (int k = 0; k < iters; ++k) x = fmaf(x, 0.999f, 1e-3f);
        s += x;
    }
    keep(out, global_threads(), s);
}

// Uses `words` floats of dynamic shared memory; launched with several shared_bytes (up to 200 KiB),
// which limits the blocks per SM.
KERNEL void occ_dynamic_smem(float* out, int n, int iters, int words) {
    extern __shared__ float dyn[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) dyn[i] = i;
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) s = fmaf(s, 0.999f, dyn[(threadIdx.x + 32 * k) % words]);
    keep(out, n, s);
}
