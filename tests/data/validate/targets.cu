// Conversions and packed arithmetic whose PTX depends on the target: nvcc emits the hardware instruction where
// the target has it and an emulation elsewhere (tests/ptx/test_target_sweep.py compiles it for every target;
// targets_<arch>.ptx is its PTX for sm_89, sm_100a and sm_120, made by regenerate.py).
//   fp8 (e4m3, e5m2):        cvt.rn.satfinite.e4m3x2.f32, cvt.rn.f16x2.e4m3x2, ... on sm_89 and later
//   fp6, fp4, e8m0 scales:   cvt.rn.satfinite.e2m3x2.f32, cvt.rn.satfinite.e2m1x2.f32, cvt.rz.satfinite.ue8m0x2.f32
//                            on sm_100a and sm_120a (arch-specific)
//   tf32, bf16:              cvt.rna.tf32.f32 and cvt.rn.bf16x2.f32 on sm_80, bf16 add and cvt.f32.bf16 on sm_90
//   float2 arithmetic:       fma.rn.f32x2, add.rn.f32x2 on sm_100 and later
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <mma.h>

// KERNEL fp8_round_trip: float pairs to e4m3 and back through half2, then to e5m2 and back.
extern "C" __global__ void fp8_round_trip(const float2 *in, float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_fp8x2_storage_t e4 = __nv_cvt_float2_to_fp8x2(in[i], __NV_SATFINITE, __NV_E4M3);
    __half2 h = __half2(__nv_cvt_fp8x2_to_halfraw2(e4, __NV_E4M3));
    __nv_fp8x2_storage_t e5 = __nv_cvt_halfraw2_to_fp8x2(__half2_raw(h), __NV_SATFINITE, __NV_E5M2);
    out[i] = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(e5, __NV_E5M2)));
}

// KERNEL narrow_formats: float pairs to e2m1 (fp4), e2m3 and e3m2 (fp6) and e8m0 scale factors and back.
extern "C" __global__ void narrow_formats(const float2 *in, float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_fp4x2_storage_t f4 = __nv_cvt_float2_to_fp4x2(in[i], __NV_E2M1, cudaRoundNearest);
    __nv_fp6x2_storage_t f6 = __nv_cvt_float2_to_fp6x2(in[i], __NV_E2M3, cudaRoundNearest);
    __nv_fp6x2_storage_t g6 = __nv_cvt_float2_to_fp6x2(in[i], __NV_E3M2, cudaRoundNearest);
    __nv_fp8x2_storage_t s = __nv_cvt_float2_to_e8m0x2(in[i], __NV_SATFINITE, cudaRoundZero);
    float2 a = __half22float2(__half2(__nv_cvt_fp4x2_to_halfraw2(f4, __NV_E2M1)));
    float2 b = __half22float2(__half2(__nv_cvt_fp6x2_to_halfraw2(f6, __NV_E2M3)));
    float2 c = __half22float2(__half2(__nv_cvt_fp6x2_to_halfraw2(g6, __NV_E3M2)));
    float2 d = __bfloat1622float2(__nv_bfloat162(__nv_cvt_e8m0x2_to_bf162raw(s)));
    out[i] = make_float2(a.x + b.x + c.x + d.x, a.y + b.y + c.y + d.y);
}

// KERNEL tf32_bf16: tf32 rounding as the tensor cores take it, float pairs to bf16 pairs, bf16 arithmetic.
extern "C" __global__ void tf32_bf16(const float2 *in, float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float2 v = in[i];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    v.x = nvcuda::wmma::__float_to_tf32(v.x);
#endif
    __nv_bfloat162 b = __float22bfloat162_rn(v);
    b = __hadd2(b, b);
    __nv_bfloat16 s = __hadd(b.x, b.y);
    out[i] = make_float2(__bfloat162float(s), __bfloat162float(b.y));
}

// KERNEL float2_arith: packed float2 fused multiply-add and add (one instruction each on sm_100 and later).
extern "C" __global__ void float2_arith(const float2 *a, const float2 *b, float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
    out[i] = __fadd2_rn(__ffma2_rn(a[i], b[i], out[i]), a[i]);
#else
    out[i] = make_float2(fmaf(a[i].x, b[i].x, out[i].x) + a[i].x, fmaf(a[i].y, b[i].y, out[i].y) + a[i].y);
#endif
}
