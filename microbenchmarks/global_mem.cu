// Global memory: streaming copies of several widths, read-only (non-coherent) loads, strided reads
// and writes (stride in elements; indices are masked with `mask` = elements - 1, a power of two),
// gathers and scatters through index arrays (their entries are hashed into [0, n)), misaligned and
// read-modify-write accesses.
#include "common.cuh"

KERNEL void gmem_copy_f32(const float* in, float* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) out[i] = in[i];
}

KERNEL void gmem_copy_f64(const double* in, double* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) out[i] = in[i];
}

KERNEL void gmem_copy_f32x4(const float4* in, float4* out, int n4) {
    for (int i = global_id(); i < n4; i += global_threads()) out[i] = in[i];
}

KERNEL void gmem_copy_u8(const unsigned char* in, unsigned char* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) out[i] = in[i] + 1;
}

KERNEL void gmem_read_sum(const float* in, float* out, int n) {
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) s += in[i];
    keep(out, global_threads(), s);
}

KERNEL void gmem_read_nc_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) s += __ldg(in + i);
    keep(out, global_threads(), s);
}

KERNEL void gmem_write_fill(float* out, int n, float value) {
    for (int i = global_id(); i < n; i += global_threads()) out[i] = value + i;
}

// Each thread reads `iters` elements, `stride` elements apart between neighbouring threads.
KERNEL void gmem_stride_read(const float* in, float* out, int mask, int stride, int iters) {
    float s = 0.0f;
    unsigned base = (unsigned)global_id() * stride;
    for (int k = 0; k < iters; ++k) s += in[(base + (unsigned)k * global_threads() * stride) & mask];
    keep(out, global_threads(), s);
}

KERNEL void gmem_stride_write(float* out, int mask, int stride, int iters) {
    unsigned base = (unsigned)global_id() * stride;
    for (int k = 0; k < iters; ++k) out[(base + (unsigned)k * global_threads() * stride) & mask] = k;
}

KERNEL void gmem_triad(const float* b, const float* c, float* a, int n, float s) {
    for (int i = global_id(); i < n; i += global_threads()) a[i] = b[i] + s * c[i];
}

// `idx` holds n integers; entry i sends element i to or from element scramble(idx[i]) % n.
KERNEL void gmem_gather(const float* in, const int* idx, float* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) out[i] = in[scramble(idx[i]) % n];
}

KERNEL void gmem_scatter(const float* in, const int* idx, float* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) out[scramble(idx[i]) % n] = in[i];
}

// Reads start one element past an aligned address, so every warp's 128-byte access spans two lines.
KERNEL void gmem_misaligned(const float* in, float* out, int n) {
    for (int i = global_id(); i < n - 1; i += global_threads()) out[i] = in[i + 1];
}

KERNEL void gmem_read_modify_write(float* x, int n, float a) {
    for (int i = global_id(); i < n; i += global_threads()) x[i] = x[i] * a + 1.0f;
}

// Square matrix transpose with no tiling: reads are coalesced, writes stride by `width`.
KERNEL void gmem_transpose_naive(const float* in, float* out, int width) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < width && y + j < width) out[x * width + y + j] = in[(y + j) * width + x];
}
