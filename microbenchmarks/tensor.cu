// Tensor cores through WMMA (f16, bf16, tf32, int8, f64) and a raw mma.sync. Every warp multiplies one
// of `tiles` input tile pairs `iters` times into its accumulator and stores it (256 values per warp,
// 64 for f64). Inputs: a and b hold `tiles` tiles each; out holds one tile per warp of the launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "common.cuh"

using namespace nvcuda;

__device__ __forceinline__ int warp_id() { return global_id() / 32; }

KERNEL void wmma_f16_f32acc(const half* a, const half* b, float* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a + 256 * t, 16);
    wmma::load_matrix_sync(fb, b + 256 * t, 16);
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 256 * warp_id(), acc, 16, wmma::mem_row_major);
}

KERNEL void wmma_f16_f16acc(const half* a, const half* b, half* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, half> acc;
    wmma::load_matrix_sync(fa, a + 256 * t, 16);
    wmma::load_matrix_sync(fb, b + 256 * t, 16);
    wmma::fill_fragment(acc, __float2half(0.0f));
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 256 * warp_id(), acc, 16, wmma::mem_row_major);
}

KERNEL void wmma_bf16_f32acc(const __nv_bfloat16* a, const __nv_bfloat16* b, float* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a + 256 * t, 16);
    wmma::load_matrix_sync(fb, b + 256 * t, 16);
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 256 * warp_id(), acc, 16, wmma::mem_row_major);
}

// tf32: m16n16k8 tiles (a: 16x8, b: 8x16 floats, 128 each).
KERNEL void wmma_tf32_f32acc(const float* a, const float* b, float* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::load_matrix_sync(fa, a + 128 * t, 8);
    wmma::load_matrix_sync(fb, b + 128 * t, 8);
    for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 256 * warp_id(), acc, 16, wmma::mem_row_major);
}

KERNEL void wmma_s8_s32acc(const signed char* a, const signed char* b, int* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::load_matrix_sync(fa, a + 256 * t, 16);
    wmma::load_matrix_sync(fb, b + 256 * t, 16);
    wmma::fill_fragment(acc, 0);
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 256 * warp_id(), acc, 16, wmma::mem_row_major);
}

// f64: m8n8k4 tiles (a: 8x4, b: 4x8 doubles, 32 each); 64 outputs per warp.
KERNEL void wmma_f64(const double* a, const double* b, double* out, int tiles, int iters) {
    int t = warp_id() % tiles;
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::load_matrix_sync(fa, a + 32 * t, 4);
    wmma::load_matrix_sync(fb, b + 32 * t, 4);
    wmma::fill_fragment(acc, 0.0);
    for (int k = 0; k < iters; ++k) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(out + 64 * warp_id(), acc, 8, wmma::mem_row_major);
}

// Raw mma.sync.m16n8k16 (f16 inputs, f32 accumulators) with fragments held in registers.
KERNEL void mma_sync_m16n8k16(const unsigned* a, const unsigned* b, float* out, int tiles, int iters) {
    int t = warp_id() % tiles, l = lane_id();
    unsigned a0 = a[128 * t + 4 * l], a1 = a[128 * t + 4 * l + 1], a2 = a[128 * t + 4 * l + 2],
             a3 = a[128 * t + 4 * l + 3];
    unsigned b0 = b[64 * t + 2 * l], b1 = b[64 * t + 2 * l + 1];
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    for (int k = 0; k < iters; ++k) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float* o = out + 128 * warp_id() + 4 * l;
    o[0] = c0;
    o[1] = c1;
    o[2] = c2;
    o[3] = c3;
}
