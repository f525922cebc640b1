// Matrix products: C = A B for n x n row-major matrices (n a multiple of 64): naive, shared-memory
// tiles of 16x16, register tiles (64x64 per block, 4x4 per thread), WMMA tensor-core tiles, and a
// matrix-vector product.
#include <cuda_fp16.h>
#include <mma.h>

#include "common.cuh"

// Blocks of 16x16 threads.
KERNEL void gemm_naive(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
}

// Blocks of exactly 16x16 threads.
KERNEL void gemm_smem16(const float* a, const float* b, float* c, int n) {
    __shared__ float ta[16][16], tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float s = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 16) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k) s += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = s;
}

// Blocks of exactly 16x16 threads computing a 64x64 tile of C; each thread computes 4x4.
KERNEL void gemm_reg4x4(const float* a, const float* b, float* c, int n) {
    __shared__ float ta[64][17], tb[16][64];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < n; k0 += 16) {
        for (int e = tid; e < 64 * 16; e += 256) {
            ta[e / 16][e % 16] = a[(row0 + e / 16) * n + k0 + e % 16];
            tb[e / 64][e % 64] = b[(k0 + e / 64) * n + col0 + e % 64];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            float ra[4], rb[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                ra[i] = ta[ty * 4 + i][k];
                rb[i] = tb[k][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) c[(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}

// f16 inputs, f32 output; blocks of 4 warps (128 threads), each warp one 16x16 tile of C.
KERNEL void gemm_wmma_f16(const half* a, const half* b, float* c, int n) {
    using namespace nvcuda;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tiles = n / 16, tr = warp / tiles, tc = warp % tiles;
    if (tr >= tiles) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        wmma::load_matrix_sync(fa, a + tr * 16 * n + k, n);
        wmma::load_matrix_sync(fb, b + k * n + tc * 16, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tr * 16 * n + tc * 16, acc, n, wmma::mem_row_major);
}

// y = A x, one warp per row (blocks of 256 threads).
KERNEL void gemv_warp_row(const float* a, const float* x, float* y, int rows, int cols) {
    int row = global_id() / 32;
    if (row >= rows) return;
    float s = 0.0f;
    for (int k = lane_id(); k < cols; k += 32) s += a[(long)row * cols + k] * x[k];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane_id() == 0) y[row] = s;
}
