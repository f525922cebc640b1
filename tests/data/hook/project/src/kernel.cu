// Kernels of the hook test project: one with a barrier under a thread-dependent condition (PS201).
#include "util.cuh"

__global__ void reverse_half(const float* in, float* out)
{
    __shared__ float tile[256];
    float v = in[threadIdx.x];
    if (threadIdx.x < blockDim.x / 2)
        v = exchange(tile, v);
    out[threadIdx.x] = v;
}

__global__ void reverse_all(const float* in, float* out)
{
    __shared__ float tile[256];
    out[threadIdx.x] = exchange(tile, in[threadIdx.x]);
}

void launch(const float* in, float* out, int threads)
{
    reverse_half<<<1, threads>>>(in, out);
    reverse_all<<<1, threads>>>(in, out);
}
