// Transcendental and special functions: the hardware approximations (MUFU unit) and the accurate
// library versions (long instruction sequences with branches). Signature: (out, n, iters, seed).
#include "common.cuh"

KERNEL void sfu_sin(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.5f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = __sinf(x) + a;
    keep(out, n, x);
}

KERNEL void sfu_cos(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f, a = 0.5f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = __cosf(x) + a;
    keep(out, n, x);
}

KERNEL void sfu_exp(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-6f, a = -1.0f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = __expf(x + a);
    keep(out, n, x);
}

KERNEL void sfu_log(float* out, int n, int iters, int seed) {
    float x = 2.0f + global_id() * 1e-6f, a = 2.0f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = __logf(x) + a;
    keep(out, n, x);
}

KERNEL void sfu_rsqrt(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, a = 0.75f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = rsqrtf(x) + a;
    keep(out, n, x);
}

KERNEL void sfu_fast_div(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, b = 1.5f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = __fdividef(b, x + 1.0f);
    keep(out, n, x);
}

KERNEL void sfu_tanh(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-6f, a = 0.25f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) {
        float t;
        asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(x));
        x = t + a;
    }
    keep(out, n, x);
}

KERNEL void libm_sin(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-2f, a = 100.0f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = sinf(x) * a;
    keep(out, n, x);
}

KERNEL void libm_exp(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-6f, a = -1.0f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = expf(x + a);
    keep(out, n, x);
}

KERNEL void libm_pow(float* out, int n, int iters, int seed) {
    float x = 1.0f + global_id() * 1e-6f, e = 0.75f + seed * 1e-6f;
    for (int k = 0; k < iters; ++k) x = powf(x + 1.0f, e);
    keep(out, n, x);
}

KERNEL void libm_sin_f64(double* out, int n, int iters, int seed) {
    double x = global_id() * 1e-2, a = 100.0 + seed * 1e-9;
    for (int k = 0; k < iters; ++k) x = sin(x) * a;
    keep(out, n, x);
}
