// Arithmetic-intensity sweep from memory-bound to compute-bound: every element is read once, goes
// through K dependent FMAs (2K flops), and is written once; K = 1 ... 1024 in powers of two for f32
// (0.25 ... 256 flop/byte) and K = 1 ... 256 for f64.
#include "common.cuh"

template <int K, typename T>
__device__ __forceinline__ void intensity(const T* in, T* out, int n, T a, T b) {
    for (int i = global_id(); i < n; i += global_threads()) {
        T x = in[i];
#pragma unroll
        for (int k = 0; k < K; ++k) x = x * a + b;
        out[i] = x;
    }
}

#define F32(K) \
    KERNEL void ai_f32_k##K(const float* in, float* out, int n, float a) { intensity<K, float>(in, out, n, a, 1e-3f); }
#define F64(K) \
    KERNEL void ai_f64_k##K(const double* in, double* out, int n, double a) { intensity<K, double>(in, out, n, a, 1e-3); }

F32(1)
F32(2)
F32(4)
F32(8)
F32(16)
F32(32)
F32(64)
F32(128)
F32(256)
F32(512)
F32(1024)
F64(1)
F64(4)
F64(16)
F64(64)
F64(256)
