// Kernel attributes and odds and ends: __launch_bounds__ (.maxntid /
// .minnctapersm), __maxnreg__ (.maxnreg), thread-block clusters with
// __cluster_dims__ (sm_90: .explicitcluster / .reqnctapercluster), inline
// PTX via asm volatile (special registers, carry chains, predicates), and a
// cooperative-groups-free grid-wide reduction using __threadfence and a
// "last block done" atomic ticket.
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

// KERNEL misc_launch_bounds: __launch_bounds__(256, 4) elementwise clamp; blockDim.x must be <= 256.
extern "C" __global__ void __launch_bounds__(256, 4) misc_launch_bounds(float *v, int n, float lo, float hi)
{
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        v[i] = fminf(fmaxf(v[i], lo), hi);
}

// KERNEL misc_maxnreg: __maxnreg__(32) caps register use for a small 4x4 matrix-vector kernel.
extern "C" __global__ void __maxnreg__(32) misc_maxnreg(const float4 *__restrict__ m, const float4 *__restrict__ x,
                                                        float4 *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = x[i];
    float4 r0 = m[0], r1 = m[1], r2 = m[2], r3 = m[3];
    y[i] = make_float4(r0.x * v.x + r0.y * v.y + r0.z * v.z + r0.w * v.w,
                       r1.x * v.x + r1.y * v.y + r1.z * v.z + r1.w * v.w,
                       r2.x * v.x + r2.y * v.y + r2.z * v.z + r2.w * v.w,
                       r3.x * v.x + r3.y * v.y + r3.z * v.z + r3.w * v.w);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CLUSTER_2X1X1 __cluster_dims__(2, 1, 1)
#else
#define CLUSTER_2X1X1
#endif

// KERNEL misc_cluster_pair: compile-time 2x1x1 thread-block cluster on sm_90 (no cluster on older targets); each block records its cluster rank.
extern "C" __global__ void CLUSTER_2X1X1 misc_cluster_pair(unsigned *rank_out)
{
    unsigned rank = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
    if (threadIdx.x == 0)
        rank_out[blockIdx.x] = rank;
}

// KERNEL misc_inline_asm: asm volatile: %laneid / %smid / %clock64 special registers, add.cc/addc carry chain, and a setp/selp predicate block.
extern "C" __global__ void misc_inline_asm(const uint32_t *__restrict__ a, const uint32_t *__restrict__ b,
                                           uint64_t *__restrict__ sum, uint32_t *__restrict__ info)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane, smid;
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0));
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    uint32_t lo, hi;
    // 64-bit add of (a[2i+1]:a[2i]) + (b[2i+1]:b[2i]) with an explicit carry chain
    asm volatile("add.cc.u32 %0, %2, %4;\n\t"
                 "addc.u32 %1, %3, %5;"
                 : "=r"(lo), "=r"(hi)
                 : "r"(a[2 * i]), "r"(a[2 * i + 1]), "r"(b[2 * i]), "r"(b[2 * i + 1]));
    uint32_t bigger;
    asm("{\n\t"
        ".reg .pred p;\n\t"
        "setp.gt.u32 p, %1, %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t"
        "}"
        : "=r"(bigger)
        : "r"(hi), "r"(lo));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1));
    sum[i] = ((uint64_t)hi << 32) | lo;
    info[i] = (lane << 24) | (smid << 8) | (bigger << 7) | (uint32_t)((t1 - t0) & 0x7f);
}

__device__ unsigned int g_blocks_done = 0;

// KERNEL misc_grid_reduce_last_block: grid-wide sum without cooperative groups: per-block partials, __threadfence, and the last block to finish (atomicInc ticket) folds all partials.
// TRIP: element loop grid-stride; warp loop 5 iterations; final loop (last block, warp 0 only) ceil(gridDim.x/32) iterations.
extern "C" __global__ void misc_grid_reduce_last_block(const float *__restrict__ in, int n, float *partials,
                                                       float *result)
{
    __shared__ float warp_part[32];
    __shared__ bool is_last;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        warp_part[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float b = 0.0f;
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w)
            b += warp_part[w];
        partials[blockIdx.x] = b;
        __threadfence();
        unsigned ticket = atomicInc(&g_blocks_done, gridDim.x);
        is_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (is_last && threadIdx.x < 32) {
        float s = 0.0f;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += 32)
            s += ((volatile float *)partials)[b];
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) {
            *result = s;
            g_blocks_done = 0;
        }
    }
}

// KERNEL misc_trap_on_nan: aborts the grid with __trap() when a NaN is seen, otherwise copies; also uses __nanosleep back-off (sm_70+).
extern "C" __global__ void misc_trap_on_nan(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    if (isnan(x))
        __trap();
    if ((i & 1023) == 0)
        __nanosleep(100);
    out[i] = x;
}
