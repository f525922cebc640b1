// Tensor cores: WMMA 16x16x16 GEMM tiles with half inputs (sm_70+), bf16
// inputs (sm_80+), int8 inputs (sm_72+), and hand-written inline PTX using
// ldmatrix + mma.sync.m16n8k16 (sm_80+). Architecture-specific bodies are
// guarded by __CUDA_ARCH__; on older targets those kernels compile to a stub.
// See loops.cu for the KERNEL / TRIP annotation format.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>

using namespace nvcuda;

// KERNEL wmma_gemm_f16: one warp per 16x16 output tile of C = A*B (A row-major MxK, B col-major KxN, half in, float accumulate).
// TRIP: K loop K/16 iterations per warp.
__global__ void wmma_gemm_f16(const half *__restrict__ a, const half *__restrict__ b, float *__restrict__ c, int M,
                              int N, int K)
{
    int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
    if (warp_m * 16 >= M || warp_n * 16 >= N)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + warp_m * 16 * K + k, K);
        wmma::load_matrix_sync(fb, b + warp_n * 16 * K + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + warp_m * 16 * N + warp_n * 16, acc, N, wmma::mem_row_major);
}

// KERNEL wmma_gemm_bf16: as wmma_gemm_f16 but with __nv_bfloat16 inputs; real body only for sm_80+.
// TRIP: K loop K/16 iterations per warp (sm_80+).
__global__ void wmma_gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
                               float *__restrict__ c, int M, int N, int K)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
    if (warp_m * 16 >= M || warp_n * 16 >= N)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + warp_m * 16 * K + k, K);
        wmma::load_matrix_sync(fb, b + warp_n * 16 * K + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + warp_m * 16 * N + warp_n * 16, acc, N, wmma::mem_row_major);
#endif
}

// KERNEL wmma_gemm_s8: a single 16x16x16 int8 x int8 -> int32 tile per warp (one mma, no K loop).
__global__ void wmma_gemm_s8(const signed char *__restrict__ a, const signed char *__restrict__ b,
                             int *__restrict__ c)
{
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::fill_fragment(acc, 0);
    wmma::load_matrix_sync(fa, a + tile * 256, 16);
    wmma::load_matrix_sync(fb, b + tile * 256, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c + tile * 256, acc, 16, wmma::mem_row_major);
}

// KERNEL mma_m16n8k16_ldmatrix: one warp computes a 16x8 tile with inline-asm ldmatrix.x4 / ldmatrix.x2.trans + mma.sync.m16n8k16 (sm_80+).
// TRIP: K loop K/16 iterations per warp (sm_80+); staging loops 256/32 = 8 and 128/32 = 4 iterations per lane.
extern "C" __global__ void mma_m16n8k16_ldmatrix(const half *__restrict__ a, const half *__restrict__ b,
                                                 float *__restrict__ c, int K)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __shared__ __align__(16) half sa[16 * 16];
    __shared__ __align__(16) half sb[16 * 8];
    int lane = threadIdx.x & 31;
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = lane; e < 256; e += 32) // A tile: 16 rows x 16 cols, row-major
            sa[e] = a[(e / 16) * K + k0 + (e % 16)];
        for (int e = lane; e < 128; e += 32) // B tile: 16 rows (k) x 8 cols (n), row-major
            sb[e] = b[(k0 + e / 8) * 8 + (e % 8)];
        __syncwarp();
        uint32_t ra[4], rb[2];
        uint32_t a_addr = (uint32_t)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
        uint32_t b_addr = (uint32_t)__cvta_generic_to_shared(&sb[(lane % 16) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
                     : "r"(a_addr));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(rb[0]), "=r"(rb[1])
                     : "r"(b_addr));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
        __syncwarp();
    }
    int row = lane / 4, col = (lane % 4) * 2;
    c[row * 8 + col] = d[0];
    c[row * 8 + col + 1] = d[1];
    c[(row + 8) * 8 + col] = d[2];
    c[(row + 8) * 8 + col + 1] = d[3];
#endif
}
