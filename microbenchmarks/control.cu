// Control flow and divergence: uniform branches, branches that split warps 2, 4, ... 32 ways,
// data-dependent branches, variable trip counts, switches, direct and indirect calls, early exits.
// Signature: (out, n, iters, seed) unless stated; out holds n floats.
#include "common.cuh"

KERNEL void ctrl_uniform_branch(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.999f, b = 1e-3f;
    for (int k = 0; k < iters; ++k) {
        if (((k ^ seed) & 3) == 0) {
            x = sqrtf(x + b);
        } else {
            x = fmaf(x, a, b);
        }
    }
    keep(out, n, x);
}

// Lanes split into `ways` groups (1, 2, 4, ..., 32); each group runs a different number of steps.
KERNEL void ctrl_divergent_ways(float* out, int n, int iters, int ways) {
    float x = global_id() * 1e-3f, a = 0.999f, b = 1e-3f;
    int group = lane_id() % ways;
    for (int k = 0; k < iters; ++k) {
        for (int j = 0; j <= group; ++j) x = fmaf(x, a, b);
        x = sqrtf(x);
    }
    keep(out, n, x);
}

KERNEL void ctrl_divergent_if_else(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.999f + seed * 1e-9f, b = 1e-3f;
    bool odd = threadIdx.x & 1;
    for (int k = 0; k < iters; ++k) {
        if (odd) {
#pragma unroll
            for (int j = 0; j < 8; ++j) x = fmaf(x, a, b);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) x = sqrtf(x + b);
        }
    }
    keep(out, n, x);
}

// A branch on random data: `in` holds `mask + 1` floats uniform in [0, 1).
KERNEL void ctrl_data_branch(const float* in, float* out, int n, int iters, int mask) {
    float x = global_id() * 1e-3f, a = 0.999f, b = 1e-3f;
    int i = global_id();
    for (int k = 0; k < iters; ++k) {
        if (in[(i + 97 * k) & mask] < 0.5f) {
            x = fmaf(x, a, b);
            x = fmaf(x, a, b);
        } else {
            x = sqrtf(x + b);
        }
    }
    keep(out, n, x);
}

KERNEL void ctrl_variable_trip(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.999f, b = 1e-3f;
    int trips = (global_id() * 7 + seed) & 15;
    for (int k = 0; k < iters; ++k)
        for (int j = 0; j < trips; ++j) x = fmaf(x, a, b);
    keep(out, n, x);
}

KERNEL void ctrl_switch(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f;
    unsigned s = global_id() * 2654435761u + seed;
    for (int k = 0; k < iters; ++k) {
        s = s * 1664525u + 1013904223u;
        switch (s >> 29) {
            case 0: x = x * 0.5f + 1.0f; break;
            case 1: x = sqrtf(x + 2.0f); break;
            case 2: x = x * x * 1e-3f; break;
            case 3: x = __sinf(x); break;
            case 4: x = fabsf(x - 3.0f); break;
            case 5: x = __expf(-x); break;
            case 6: x = x + __int2float_rn(s & 255); break;
            default: x = rsqrtf(x + 1.0f); break;
        }
    }
    keep(out, n, x);
}

__device__ __noinline__ float step_noinline(float x, float a, float b) { return fmaf(sqrtf(x + b), a, b); }

KERNEL void ctrl_call(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.999f + seed * 1e-9f, b = 1e-3f;
    for (int k = 0; k < iters; ++k) x = step_noinline(x, a, b);
    keep(out, n, x);
}

__device__ __noinline__ float op0(float x) { return x * 0.5f + 1.0f; }
__device__ __noinline__ float op1(float x) { return sqrtf(x + 1.0f); }
__device__ __noinline__ float op2(float x) { return __sinf(x) + 1.5f; }
__device__ __noinline__ float op3(float x) { return fabsf(x - 2.0f); }
__device__ float (*const ops[4])(float) = {op0, op1, op2, op3};

KERNEL void ctrl_indirect_call(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) x = ops[(k + lane_id() + seed) & 3](x);
    keep(out, n, x);
}

// A quarter of the threads leave at once; the rest of each warp runs on partially populated.
KERNEL void ctrl_early_exit(float* out, int n, int iters, int seed) {
    int i = global_id();
    if (i >= n) return;
    float x = i * 1e-3f, a = 0.999f + seed * 1e-9f, b = 1e-3f;
    if ((i & 3) == 0) {
        out[i] = x;
        return;
    }
    for (int k = 0; k < iters; ++k) x = fmaf(x, a, b);
    out[i] = x;
}
