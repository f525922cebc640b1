// Kernels whose work grows with an argument, for the absolute-time estimate. Compiled (from the repository
// root) with: nvcc -ptx -arch=sm_80 tests/data/predict/roofline.cu -o tests/data/predict/roofline.ptx

// Streaming, memory-bound: y[i] = a * x[i] + y[i] over n elements, grid-stride loop (12 bytes per element,
// two flops). Its time should grow linearly with n and follow the memory clock.
extern "C" __global__ void saxpy_n(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// Compute-bound: `iters` rounds of four independent fused multiply-adds per thread, one store at the end.
// Its time should grow linearly with the loop count and follow the core clock.
extern "C" __global__ void fma_loop(float *out, float a, float b, int iters)
{
    float x = threadIdx.x, y = x + 1.0f, z = x + 2.0f, w = x + 3.0f;
    for (int i = 0; i < iters; ++i) {
        x = fmaf(x, a, b);
        y = fmaf(y, a, b);
        z = fmaf(z, a, b);
        w = fmaf(w, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y + z + w;
}
