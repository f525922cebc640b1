// No finding: every thread reaches the barrier.
extern "C" __global__ void copy_tile(const float* in, float* out)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
