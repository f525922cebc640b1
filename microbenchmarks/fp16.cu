// Half and bfloat16 arithmetic (packed pairs and scalars) and conversions. Results are widened to
// float before the store. Signature: (out, n, iters, seed); out holds n floats.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"

KERNEL void fp16_hadd2_chain(float* out, int n, int iters, int seed) {
    __half2 x = __floats2half2_rn(global_id() * 1e-4f, 0.5f), a = __floats2half2_rn(seed * 1e-4f, 1e-4f);
    for (int k = 0; k < iters; ++k) x = __hadd2(x, a);
    keep(out, n, __low2float(x) + __high2float(x));
}

KERNEL void fp16_hfma2_chain(float* out, int n, int iters, int seed) {
    __half2 x = __floats2half2_rn(global_id() * 1e-4f, 0.5f);
    __half2 a = __floats2half2_rn(0.999f, 0.998f + seed * 1e-4f), b = __floats2half2_rn(1e-3f, 2e-3f);
    for (int k = 0; k < iters; ++k) x = __hfma2(x, a, b);
    keep(out, n, __low2float(x) + __high2float(x));
}

KERNEL void fp16_hfma2_ilp4(float* out, int n, int iters, int seed) {
    __half2 a = __floats2half2_rn(0.999f, 0.998f + seed * 1e-4f), b = __floats2half2_rn(1e-3f, 2e-3f);
    __half2 x0 = __floats2half2_rn(global_id() * 1e-4f, 0.5f), x1 = __hadd2(x0, b), x2 = __hadd2(x1, b),
            x3 = __hadd2(x2, b);
    for (int k = 0; k < iters; ++k) {
        x0 = __hfma2(x0, a, b);
        x1 = __hfma2(x1, a, b);
        x2 = __hfma2(x2, a, b);
        x3 = __hfma2(x3, a, b);
    }
    __half2 s = __hadd2(__hadd2(x0, x1), __hadd2(x2, x3));
    keep(out, n, __low2float(s) + __high2float(s));
}

KERNEL void fp16_hfma_scalar(float* out, int n, int iters, int seed) {
    __half x = __float2half(global_id() * 1e-4f), a = __float2half(0.999f + seed * 1e-4f), b = __float2half(1e-3f);
    for (int k = 0; k < iters; ++k) x = __hfma(x, a, b);
    keep(out, n, __half2float(x));
}

KERNEL void bf16_hfma2_chain(float* out, int n, int iters, int seed) {
    __nv_bfloat162 x = __floats2bfloat162_rn(global_id() * 1e-4f, 0.5f);
    __nv_bfloat162 a = __floats2bfloat162_rn(0.99f, 0.98f + seed * 1e-4f), b = __floats2bfloat162_rn(1e-2f, 2e-2f);
    for (int k = 0; k < iters; ++k) x = __hfma2(x, a, b);
    keep(out, n, __low2float(x) + __high2float(x));
}

KERNEL void fp16_convert(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-4f, a = seed * 1e-4f;
    for (int k = 0; k < iters; ++k) x = __half2float(__float2half_rn(x * 0.75f + a));
    keep(out, n, x);
}

KERNEL void fp16_h2exp2(float* out, int n, int iters, int seed) {
    __half2 x = __floats2half2_rn(global_id() * 1e-6f, 0.25f), a = __floats2half2_rn(-1.0f, -1.0f + seed * 1e-4f);
    for (int k = 0; k < iters; ++k) x = h2exp2(__hadd2(x, a));
    keep(out, n, __low2float(x) + __high2float(x));
}
