// Asynchronous global->shared copies: the __pipeline_memcpy_async primitives
// (cp.async on sm_80+, synchronous fallback before), a double-buffered tile
// loop with __pipeline_wait_prior, and cuda::memcpy_async completed through a
// block-scoped cuda::barrier (libcu++).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cuda_pipeline.h>
#include <cuda/barrier>
#include <cooperative_groups.h>

// KERNEL async_pipeline_copy: stage one 16-byte chunk per thread into shared memory with __pipeline_memcpy_async, then scale it.
extern "C" __global__ void async_pipeline_copy(const float4 *__restrict__ in, float4 *__restrict__ out, float s)
{
    __shared__ float4 stage[256];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    __pipeline_memcpy_async(&stage[threadIdx.x], &in[g], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    float4 v = stage[threadIdx.x];
    out[g] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

// KERNEL async_double_buffer_sum: double-buffered tile pipeline: prefetch tile t+1 with cp.async while summing tile t; blockDim.x == 128.
// TRIP: tile loop ntiles iterations per thread.
extern "C" __global__ void async_double_buffer_sum(const float *__restrict__ in, float *__restrict__ out, int ntiles)
{
    __shared__ __align__(16) float buf[2][128];
    const float *base = in + (size_t)blockIdx.x * ntiles * 128;
    float acc = 0.0f;
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &base[threadIdx.x], sizeof(float));
    __pipeline_commit();
    for (int t = 0; t < ntiles; ++t) {
        int cur = t & 1;
        if (t + 1 < ntiles)
            __pipeline_memcpy_async(&buf[cur ^ 1][threadIdx.x], &base[(t + 1) * 128 + threadIdx.x], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        acc += buf[cur][(threadIdx.x * 5) & 127];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// KERNEL async_memcpy_barrier: whole-block cuda::memcpy_async of a 1 KiB tile (aligned_size_t<16>) completed on a cuda::barrier.
// TRIP: scale loop ceil((256 - threadIdx.x)/blockDim.x) iterations per thread.
__global__ void async_memcpy_barrier(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ __align__(16) float tile[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cooperative_groups::this_thread_block();
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    cuda::memcpy_async(block, tile, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof(tile)), bar);
    bar.arrive_and_wait();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        out[blockIdx.x * 256 + i] = tile[i] * 0.5f;
}
