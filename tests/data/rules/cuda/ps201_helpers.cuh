// Helpers for ps201_barrier.cu: a barrier inside an inlined device function, so that findings carry an
// inlined-at chain (innermost location in this header, call site in the .cu file).
#pragma once

__device__ __forceinline__ float stage_through_shared(float* tile, float v)
{
    tile[threadIdx.x] = v;
    __syncthreads();  // expect: PS201 (through ps201_inlined_helper and ps201_lane_subset_helper)
    return tile[(threadIdx.x + 1) % blockDim.x];
}

__device__ __noinline__ void publish_and_wait(float* tile, float v)
{
    tile[threadIdx.x] = v;
    __syncthreads();
}
