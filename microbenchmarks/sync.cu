// Barriers and fences: block barriers with and without shared-memory exchange, named barriers,
// warp barriers, and memory fences at block and device scope.
// Signature: (out, n, iters, seed); blocks of 256 threads unless stated.
#include "common.cuh"

KERNEL void sync_barrier(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, 0.999f, 1e-3f);
        __syncthreads();
    }
    keep(out, n, x);
}

KERNEL void sync_barrier_exchange(float* out, int n, int iters, int seed) {
    __shared__ float buf[1024];
    float x = global_id() * 1e-3f + seed;
    for (int k = 0; k < iters; ++k) {
        buf[threadIdx.x] = x;
        __syncthreads();
        x = 0.5f * (x + buf[(threadIdx.x + 1 + k) % blockDim.x]);
        __syncthreads();
    }
    keep(out, n, x);
}

// Named barrier 1 over the whole block (bar.sync with an explicit thread count).
KERNEL void sync_named_barrier(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, 0.999f, 1e-3f);
        asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x));
    }
    keep(out, n, x);
}

KERNEL void sync_warp(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, 0.999f, 1e-3f);
        __syncwarp();
    }
    keep(out, n, x);
}

KERNEL void sync_fence_block(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    int i = global_id();
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, 0.999f, 1e-3f);
        if (i < n) out[i] = x;
        __threadfence_block();
    }
    keep(out, n, x);
}

KERNEL void sync_fence_device(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    int i = global_id();
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, 0.999f, 1e-3f);
        if (i < n) out[i] = x;
        __threadfence();
    }
    keep(out, n, x);
}
