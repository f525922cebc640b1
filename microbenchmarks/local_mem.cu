// Local memory: per-thread arrays indexed at run time, register spills forced by launch bounds,
// and a recursive device function (call stack in local memory).
#include "common.cuh"

KERNEL void local_dynamic_index(float* out, int n, int iters, int seed) {
    float buf[64];
    for (int j = 0; j < 64; ++j) buf[j] = j * 0.5f + global_id();
    unsigned h = global_id() + seed;
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        s += buf[h >> 26];
        buf[(h >> 20) & 63] = s * 0.5f;
    }
    keep(out, n, s);
}

// 96 live accumulators under a 32-register limit (launch bounds 1024 threads, 2 blocks per SM).
KERNEL void __launch_bounds__(1024, 2) local_spill(float* out, int n, int iters, int seed) {
    float acc[96];
#pragma unroll
    for (int j = 0; j < 96; ++j) acc[j] = global_id() + j + seed;
    for (int k = 0; k < iters; ++k) {
#pragma unroll
        for (int j = 0; j < 96; ++j) acc[j] = fmaf(acc[j], 0.999f, acc[(j + 1) % 96] * 1e-3f);
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 96; ++j) s += acc[j];
    keep(out, n, s);
}

struct Particle {
    float pos[16], vel[16];
};

KERNEL void local_struct(float* out, int n, int iters, int seed) {
    Particle p;
    for (int j = 0; j < 16; ++j) {
        p.pos[j] = global_id() + j;
        p.vel[j] = 1e-3f * (j + seed);
    }
    for (int k = 0; k < iters; ++k) {
        int j = (k * 5 + global_id()) & 15;
        p.pos[j] += p.vel[(j + 3) & 15];
        p.vel[j] *= 0.999f;
    }
    float s = 0.0f;
    for (int j = 0; j < 16; ++j) s += p.pos[j];
    keep(out, n, s);
}

__device__ float descend(float x, int depth) {
    if (depth <= 0) return x;
    return descend(fmaf(x, 0.999f, 1e-3f), depth - 1) * 0.5f + x * 0.5f;
}

KERNEL void local_recursion(float* out, int n, int iters, int depth) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) x = descend(x, depth);
    keep(out, n, x);
}
