// With CHECK_BOUNDS (as the build defines it), out-of-range threads return before the barrier.
extern "C" __global__ void reduce_block(const float* in, float* out, int n)
{
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef CHECK_BOUNDS
    if (i >= n)
        return;
#endif
    buf[threadIdx.x] = in[i];
    __syncthreads();  // expect-with-CHECK_BOUNDS: PS201
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0] + buf[blockDim.x - 1];
}

extern "C" __global__ void lane_flag(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x % 32 == 0) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();  // expect: PS201
        out[threadIdx.x] = tile[threadIdx.x];
    }
}
