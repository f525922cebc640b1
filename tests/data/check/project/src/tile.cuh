// A staging helper whose barrier is reported where a caller reaches it under a thread-dependent condition.
#pragma once

__device__ __forceinline__ float stage(float* tile, float v)
{
    tile[threadIdx.x] = v;
    __syncthreads();  // expect: PS201 (through scan_partial)
    return tile[(threadIdx.x + 1) % blockDim.x];
}
