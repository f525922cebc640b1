// Shared helpers of the hook test project.
#pragma once

__device__ __forceinline__ float exchange(float* tile, float v)
{
    tile[threadIdx.x] = v;
    __syncthreads();
    return tile[blockDim.x - 1 - threadIdx.x];
}
