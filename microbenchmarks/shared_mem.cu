// Shared memory: accesses with and without bank conflicts (a stride of s words makes gcd(s, 32)-way
// conflicts), broadcasts, 64- and 128-bit accesses, shared atomics, dynamic shared memory, and tiled
// transposes with and without padding. Blocks of 256 threads unless stated.
#include "common.cuh"

#define SMEM_WORDS 8192  // 32 KiB

// Every thread reads and writes words `stride` apart from its neighbours' (masked into the array).
KERNEL void smem_stride(float* out, int n, int iters, int stride) {
    __shared__ float buf[SMEM_WORDS];
    for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) buf[i] = i;
    __syncthreads();
    float s = 0.0f;
    unsigned j = threadIdx.x * stride;
    for (int k = 0; k < iters; ++k) {
        s += buf[j & (SMEM_WORDS - 1)];
        j += 32 * stride + 1;
    }
    __syncthreads();
    buf[(threadIdx.x * stride) & (SMEM_WORDS - 1)] = s;
    __syncthreads();
    keep(out, n, buf[threadIdx.x] + s);
}

KERNEL void smem_broadcast(float* out, int n, int iters, int seed) {
    __shared__ float buf[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = i + seed;
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) s += buf[k & 1023];
    keep(out, n, s);
}

KERNEL void smem_f64(double* out, int n, int iters, int seed) {
    __shared__ double buf[2048];
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) buf[i] = i + seed;
    __syncthreads();
    double s = 0.0;
    for (int k = 0; k < iters; ++k) s += buf[(threadIdx.x + k * 33) & 2047];
    keep(out, n, s);
}

KERNEL void smem_f32x4(float* out, int n, int iters, int seed) {
    __shared__ float4 buf[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = make_float4(i, i + 1, i + 2, seed);
    __syncthreads();
    float4 s = make_float4(0, 0, 0, 0);
    for (int k = 0; k < iters; ++k) {
        float4 v = buf[(threadIdx.x + k) & 1023];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    keep(out, n, s.x + s.y + s.z + s.w);
}

KERNEL void smem_atomic_add(float* out, int n, int iters, int bins) {
    __shared__ unsigned hist[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    unsigned h = global_id() * 2654435761u;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        atomicAdd(&hist[(h >> 16) % bins & 1023], 1u);
    }
    __syncthreads();
    keep(out, n, (float)hist[threadIdx.x & 1023]);
}

// Dynamic shared memory of `words` floats (the launch's shared_bytes = 4 * words).
KERNEL void smem_dynamic(float* out, int n, int iters, int words) {
    extern __shared__ float dyn[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) dyn[i] = i;
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) s += dyn[(threadIdx.x + 32 * k) % words];
    keep(out, n, s);
}

// 32x32 tiles, blocks of 32x8 threads; `width` a multiple of 32.
KERNEL void smem_transpose_padded(const float* in, float* out, int width) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y) out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

KERNEL void smem_transpose_conflicts(const float* in, float* out, int width) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y) out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

KERNEL void smem_u8(float* out, int n, int iters, int seed) {
    __shared__ unsigned char buf[4096];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x) buf[i] = (unsigned char)(i + seed);
    __syncthreads();
    unsigned s = 0;
    for (int k = 0; k < iters; ++k) s += buf[(threadIdx.x + 13 * k) & 4095];
    keep(out, n, (float)s);
}
