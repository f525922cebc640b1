// Pure arithmetic: four independent chains of fused multiply-adds per thread, fully unrolled,
// one store at the end. Its time should scale with the core clock and not with the memory clock.
extern "C" __global__ void fma_chain(float *out, float a, float b)
{
    float x = threadIdx.x, y = x + 1.0f, z = x + 2.0f, w = x + 3.0f;
#pragma unroll
    for (int i = 0; i < 256; ++i) {
        x = fmaf(x, a, b);
        y = fmaf(y, a, b);
        z = fmaf(z, a, b);
        w = fmaf(w, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y + z + w;
}
