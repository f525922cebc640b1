// Atomics and reductions on global and shared memory, from fully contended (one address) to
// uncontended (one address per thread), with and without a returned value.
// Targets are sized by `slots` (a power of two: addresses are masked with slots - 1).
#include "common.cuh"

KERNEL void atom_add_one_address(unsigned* target, int iters) {
    unsigned v = 0;
    for (int k = 0; k < iters; ++k) v += atomicAdd(target, 1u);
    if (v == 0xffffffffu) target[1] = v;  // keeps the returned values alive
}

KERNEL void atom_add_distinct(unsigned* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1), v = 0;
    for (int k = 0; k < iters; ++k) v += atomicAdd(target + i, 1u);
    if (v == 0xffffffffu) target[0] = v;
}

// A reduction without a returned value (red.global.add, written as PTX: nvcc emits atom for atomicAdd).
KERNEL void red_add_distinct(unsigned* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1);
    for (int k = 0; k < iters; ++k)
        asm volatile("red.global.add.u32 [%0], 1;" ::"l"(target + ((i + k * 32) & (slots - 1))) : "memory");
}

KERNEL void atom_add_f32_bins(float* target, int slots, int iters) {
    unsigned h = global_id() * 2654435761u;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        atomicAdd(target + ((h >> 8) & (slots - 1)), 1.0f);
    }
}

KERNEL void atom_add_f64(double* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1);
    for (int k = 0; k < iters; ++k) atomicAdd(target + ((i + k) & (slots - 1)), 1.0);
}

KERNEL void atom_cas_max_f32(float* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1);
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) {
        x = x * 1.0001f + 1e-3f;
        int* addr = (int*)(target + ((i + k) & (slots - 1)));
        int old = *addr, assumed;
        do {
            assumed = old;
            if (__int_as_float(assumed) >= x) break;
            old = atomicCAS(addr, assumed, __float_as_int(x));
        } while (old != assumed);
    }
}

KERNEL void atom_exch(unsigned* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1), v = global_id();
    for (int k = 0; k < iters; ++k) v = atomicExch(target + ((i + k) & (slots - 1)), v + 1u);
    if (v == 0xffffffffu) target[0] = v;
}

KERNEL void atom_min_max(int* target, int slots, int iters) {
    unsigned i = global_id() & (slots - 1);
    int x = global_id();
    for (int k = 0; k < iters; ++k) {
        atomicMin(target + ((i + k) & (slots - 1)), x - k);
        atomicMax(target + ((i + 3 * k) & (slots - 1)), x + k);
    }
}

KERNEL void atom_shared_then_global(unsigned* target, int slots, int iters) {
    __shared__ unsigned local[256];
    for (int j = threadIdx.x; j < 256; j += blockDim.x) local[j] = 0;
    __syncthreads();
    unsigned h = global_id() * 2654435761u;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        atomicAdd(&local[h >> 24], 1u);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < 256; j += blockDim.x) atomicAdd(target + (j & (slots - 1)), local[j]);
}

// One atomic per warp (the leader adds the warp's count), the usual warp-aggregation idiom.
KERNEL void atom_warp_aggregated(unsigned* target, int slots, int iters) {
    unsigned i = (global_id() / 32) & (slots - 1);
    for (int k = 0; k < iters; ++k) {
        unsigned active = __activemask();
        if (lane_id() == __ffs(active) - 1) atomicAdd(target + ((i + k) & (slots - 1)), __popc(active));
    }
}
