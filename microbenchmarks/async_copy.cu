// Asynchronous global-to-shared copies (cp.async) with 4- and 16-byte transfers, single- and
// double-buffered, against the same kernel with ordinary loads. Each block walks chunks of
// blockDim.x elements (grid-stride), reduces each chunk from shared memory, and stores its sums.
// `in` holds n elements; out holds one value per thread of the launch.
#include <cuda_pipeline.h>

#include "common.cuh"

#define MAX_BLOCK 1024

KERNEL void cpasync_4B(const float* in, float* out, int n) {
    __shared__ float buf[MAX_BLOCK];
    float s = 0.0f;
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        if (i < n) __pipeline_memcpy_async(&buf[threadIdx.x], &in[i], 4);
        else buf[threadIdx.x] = 0.0f;
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        s += buf[(threadIdx.x + 1) % blockDim.x];
        __syncthreads();
    }
    keep(out, global_threads(), s);
}

// n4: number of float4 elements.
KERNEL void cpasync_16B(const float4* in, float* out, int n4) {
    __shared__ float4 buf[MAX_BLOCK];
    float s = 0.0f;
    for (int base = blockIdx.x * blockDim.x; base < n4; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        if (i < n4) __pipeline_memcpy_async(&buf[threadIdx.x], &in[i], 16);
        else buf[threadIdx.x] = make_float4(0, 0, 0, 0);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        float4 v = buf[(threadIdx.x + 1) % blockDim.x];
        s += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    keep(out, global_threads(), s);
}

KERNEL void cpasync_double_buffer(const float4* in, float* out, int n4) {
    __shared__ float4 buf[2][MAX_BLOCK];
    float s = 0.0f;
    int stride = gridDim.x * blockDim.x, base = blockIdx.x * blockDim.x, stage = 0;
    if (base + (int)threadIdx.x < n4) __pipeline_memcpy_async(&buf[0][threadIdx.x], &in[base + threadIdx.x], 16);
    __pipeline_commit();
    for (; base < n4; base += stride) {
        int next = base + stride + threadIdx.x;
        if (next < n4) __pipeline_memcpy_async(&buf[stage ^ 1][threadIdx.x], &in[next], 16);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        if (base + (int)threadIdx.x < n4) {
            float4 v = buf[stage][threadIdx.x];
            s += v.x + v.y + v.z + v.w;
        }
        __syncthreads();
        stage ^= 1;
    }
    __pipeline_wait_prior(0);
    keep(out, global_threads(), s);
}

KERNEL void sync_copy_16B(const float4* in, float* out, int n4) {
    __shared__ float4 buf[MAX_BLOCK];
    float s = 0.0f;
    for (int base = blockIdx.x * blockDim.x; base < n4; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        buf[threadIdx.x] = i < n4 ? in[i] : make_float4(0, 0, 0, 0);
        __syncthreads();
        float4 v = buf[(threadIdx.x + 1) % blockDim.x];
        s += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    keep(out, global_threads(), s);
}
