// Kernels for the energy rules: PS501 (clocks that save energy at little cost in time) and PS502 (memory-
// or compute-bound). The marks hold for the default target, the GTX Titan X (the GPU whose models ptxstatic
// ships): the rules report at the kernel's first line.

// Streaming: one load and one store per multiply-add, the time follows the memory clock.
extern "C" __global__ void stream_triad(const float* a, const float* b, float* c, float s, int n)  // expect: PS502
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + s * b[i];
}

// Arithmetic on registers: 64 dependent multiply-adds per loaded value, the time follows the core clock.
extern "C" __global__ void fma_chain(const float* in, float* out, int rounds)  // expect: PS501, PS502
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i], y = 1.0f;
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int k = 0; k < 64; ++k)
            y = y * x + 0.5f;
    }
    out[i] = y;
}

// A polynomial per element: memory and issue time about even, neither class.
extern "C" __global__ void balanced_poly(const float* in, float* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = in[i], y = 0.0f;
#pragma unroll
        for (int k = 0; k < 48; ++k)
            y = y * x + k;
        out[i] = y;
    }
}
