// Calls the header's helper under a thread-dependent condition: the finding is at the header's barrier.
#include "tile.cuh"

extern "C" __global__ void scan_partial(const float* in, float* out)
{
    __shared__ float tile[256];
    float v = in[threadIdx.x];
    if (threadIdx.x < blockDim.x / 2)
        v = stage(tile, v);  // expect-call: PS201
    out[threadIdx.x] = v;
}
