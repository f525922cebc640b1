// Reduced precision arithmetic: half2 (__half2) packed SIMD math, half
// conversions, and __nv_bfloat162 arithmetic (native on sm_80+, emulated by
// the headers on older targets).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// KERNEL half2_axpy_relu: packed half2 FMA followed by a half2 ReLU (__hfma2, __hmax2).
// TRIP: grid-stride loop over n/2 half2 pairs.
extern "C" __global__ void half2_axpy_relu(int n2, __half2 a, const __half2 *__restrict__ x, __half2 *__restrict__ y)
{
    const __half2 zero = __float2half2_rn(0.0f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x)
        y[i] = __hmax2(__hfma2(a, x[i], y[i]), zero);
}

// KERNEL half_convert_dot: float <-> half conversions and a half2 dot product accumulated in float.
// TRIP: pair loop len/2 iterations per thread.
extern "C" __global__ void half_convert_dot(const __half *__restrict__ a, const __half *__restrict__ b,
                                            float *__restrict__ out, int len)
{
    const __half2 *a2 = reinterpret_cast<const __half2 *>(a + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * len);
    const __half2 *b2 = reinterpret_cast<const __half2 *>(b + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * len);
    float acc = 0.0f;
    for (int j = 0; j < len / 2; ++j) {
        float2 p = __half22float2(__hmul2(a2[j], b2[j]));
        acc += p.x + p.y;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = __half2float(__float2half_rn(acc));
}

// KERNEL bf16x2_scale_add: __nv_bfloat162 multiply-add (native bf16x2 fma on sm_80+, computed in float on older targets).
extern "C" __global__ void bf16x2_scale_add(const __nv_bfloat162 *__restrict__ x, const __nv_bfloat162 *__restrict__ y,
                                            __nv_bfloat162 *__restrict__ out, float s, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        __nv_bfloat162 sv = __float2bfloat162_rn(s);
        out[i] = __hfma2(x[i], sv, y[i]) + __hmul2(y[i], y[i]);
#else
        float2 xf = __bfloat1622float2(x[i]), yf = __bfloat1622float2(y[i]);
        out[i] = __floats2bfloat162_rn(xf.x * s + yf.x + yf.x * yf.x, xf.y * s + yf.y + yf.y * yf.y);
#endif
    }
}

// KERNEL bf16_to_f32_sum: widening bf16 -> f32 conversion and a float accumulation.
// TRIP: element loop len iterations per thread.
extern "C" __global__ void bf16_to_f32_sum(const __nv_bfloat16 *__restrict__ x, float *__restrict__ out, int len)
{
    const __nv_bfloat16 *p = x + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * len;
    float acc = 0.0f;
    for (int j = 0; j < len; ++j)
        acc += __bfloat162float(p[j]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
