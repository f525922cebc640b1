// Constant memory and kernel parameters: uniform indices (one broadcast per warp), divergent indices
// (serialised), double-precision tables, and many by-value kernel parameters.
#include "common.cuh"

__constant__ float ctab[1024] = {0.5f, 0.25f, 0.125f, 1.0f, 2.0f, 0.75f, 1.5f, 0.875f};
__constant__ double dtab[512] = {0.5, 0.25, 0.125, 1.0, 2.0, 0.75, 1.5, 0.875};

KERNEL void const_uniform(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) x = fmaf(x, ctab[(k + seed) & 1023], 1e-3f);
    keep(out, n, x);
}

KERNEL void const_divergent(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) x = fmaf(x, ctab[(threadIdx.x * 33 + k + seed) & 1023], 1e-3f);
    keep(out, n, x);
}

KERNEL void const_f64(double* out, int n, int iters, int seed) {
    double x = global_id() * 1e-3;
    for (int k = 0; k < iters; ++k) x = fma(x, dtab[(k + seed) & 511], 1e-3);
    keep(out, n, x);
}

// Eight by-value float parameters read in the loop (ld.param, or constant bank reads in SASS).
KERNEL void param_many(float* out, int n, int iters, float c0, float c1, float c2, float c3, float c4, float c5,
                       float c6, float c7) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) {
        x = fmaf(x, c0, c1);
        x = fmaf(x, c2, c3);
        x = fmaf(x, c4, c5);
        x = fmaf(x, c6, c7);
    }
    keep(out, n, x);
}
