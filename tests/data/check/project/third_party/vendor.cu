// Excluded by the project's configuration (extend-exclude): never reported.
extern "C" __global__ void vendor_kernel(float* x)
{
    if (threadIdx.x < 7)
        __syncthreads();
    x[threadIdx.x] = 0.0f;
}
