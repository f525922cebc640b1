// Kernels the language-server tests open: one with a barrier under a thread-dependent branch (PS201),
// one streaming loop and one arithmetic loop (hover predictions, hottest blocks).

extern "C" __global__ void tile_reverse(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x < 16) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = tile[15 - threadIdx.x];
    }
}

extern "C" __global__ void stream_add(const float* a, const float* b, float* c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}

extern "C" __global__ void polynomial(float* x, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int s = 0; s < steps; ++s) {
        v = v * 1.0001f + 0.5f;
        v = v * v * 0.25f - v;
    }
    x[i] = v;
}
