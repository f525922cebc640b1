// Double-precision arithmetic: chains, independent chains, IEEE division and square root, conversions.
// Signature: (out, n, iters, seed); out holds n doubles.
#include "common.cuh"

KERNEL void fp64_add_chain(double* out, int n, int iters, int seed) {
    double x = global_id() * 1e-3, a = seed * 1e-9;
    for (int k = 0; k < iters; ++k) x = x + a;
    keep(out, n, x);
}

KERNEL void fp64_mul_chain(double* out, int n, int iters, int seed) {
    double x = 1.0 + global_id() * 1e-12, a = 1.0 + seed * 1e-12;
    for (int k = 0; k < iters; ++k) x = x * a;
    keep(out, n, x);
}

KERNEL void fp64_fma_chain(double* out, int n, int iters, int seed) {
    double x = global_id() * 1e-3, a = 0.9999 + seed * 1e-12, b = 1e-4;
    for (int k = 0; k < iters; ++k) x = fma(x, a, b);
    keep(out, n, x);
}

KERNEL void fp64_fma_ilp4(double* out, int n, int iters, int seed) {
    double a = 0.9999 + seed * 1e-12, b = 1e-4;
    double x0 = global_id() * 1e-3, x1 = x0 + 1.0, x2 = x0 + 2.0, x3 = x0 + 3.0;
    for (int k = 0; k < iters; ++k) {
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x2 = fma(x2, a, b);
        x3 = fma(x3, a, b);
    }
    keep(out, n, x0 + x1 + x2 + x3);
}

KERNEL void fp64_div(double* out, int n, int iters, int seed) {
    double x = 1.0 + global_id() * 1e-9, b = 1.5 + seed * 1e-9;
    for (int k = 0; k < iters; ++k) x = b / (x + 1.0);
    keep(out, n, x);
}

KERNEL void fp64_sqrt(double* out, int n, int iters, int seed) {
    double x = 1.0 + global_id() * 1e-9, a = 0.5 + seed * 1e-9;
    for (int k = 0; k < iters; ++k) x = sqrt(x + a);
    keep(out, n, x);
}

KERNEL void fp64_cvt_f32(double* out, int n, int iters, int seed) {
    double x = global_id() * 1e-3;
    float y = seed * 1e-3f;
    for (int k = 0; k < iters; ++k) {
        y = __double2float_rn(x) + y * 0.5f;
        x = (double)y * 0.999;
    }
    keep(out, n, x);
}
