// Single-precision arithmetic: dependent chains (latency-bound per warp, throughput-bound at full
// occupancy), independent chains (instruction-level parallelism), and the slow IEEE operations.
// Signature: (out, n, iters, seed); out holds n floats, one per thread.
#include "common.cuh"

KERNEL void fp32_add_chain(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = seed * 1e-7f;
    for (int k = 0; k < iters; ++k) x = x + a;
    keep(out, n, x);
}

KERNEL void fp32_mul_chain(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-9f, a = 1.0f + seed * 1e-8f;
    for (int k = 0; k < iters; ++k) x = x * a;
    keep(out, n, x);
}

KERNEL void fp32_fma_chain(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.9999f + seed * 1e-9f, b = 1e-4f;
    for (int k = 0; k < iters; ++k) x = fmaf(x, a, b);
    keep(out, n, x);
}

KERNEL void fp32_fma_ilp4(float* out, int n, int iters, int seed) {
    float a = 0.9999f + seed * 1e-9f, b = 1e-4f;
    float x0 = global_id() * 1e-3f, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
    for (int k = 0; k < iters; ++k) {
        x0 = fmaf(x0, a, b);
        x1 = fmaf(x1, a, b);
        x2 = fmaf(x2, a, b);
        x3 = fmaf(x3, a, b);
    }
    keep(out, n, x0 + x1 + x2 + x3);
}

KERNEL void fp32_div(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, b = 1.5f + seed * 1e-7f;
    for (int k = 0; k < iters; ++k) x = b / (x + 1.0f);
    keep(out, n, x);
}

KERNEL void fp32_sqrt(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, a = 0.5f + seed * 1e-7f;
    for (int k = 0; k < iters; ++k) x = sqrtf(x + a);
    keep(out, n, x);
}

KERNEL void fp32_rcp(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, a = 1.0f + seed * 1e-7f;
    for (int k = 0; k < iters; ++k) x = __frcp_rn(x + a);
    keep(out, n, x);
}

KERNEL void fp32_minmax(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 1.0001f + seed * 1e-8f, lo = -1e3f, hi = 1e3f;
    for (int k = 0; k < iters; ++k) x = fminf(fmaxf(x * a - 0.5f, lo), hi);
    keep(out, n, x);
}

KERNEL void fp32_cvt_int(float* out, int n, int iters, int seed) {
    float x = global_id() * 0.5f;
    int m = seed;
    for (int k = 0; k < iters; ++k) {
        m = __float2int_rz(x) + m;
        x = __int2float_rn(m & 0xffff) * 0.5f;
    }
    keep(out, n, x);
}
