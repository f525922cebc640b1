// Math: accurate single precision library calls (sinf, expf, logf, powf),
// fast SFU intrinsics (__sinf, __expf, __fdividef, rsqrtf), double precision
// (sqrt, exp, sin, fma), 64-bit integer arithmetic, and integer bit
// intrinsics (__popc, __clz, __brev, __byte_perm, __funnelshift).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

// KERNEL math_accurate_f32: accurate libdevice sinf / expf / logf / powf / sqrtf (long straight-line slow paths and branches).
extern "C" __global__ void math_accurate_f32(const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = sinf(v) + expf(-v * v) + logf(1.0f + fabsf(v)) + powf(fabsf(v), 0.75f) + sqrtf(fabsf(v));
    }
}

// KERNEL math_fast_intrinsics: SFU intrinsics: __sinf, __cosf, __expf, __logf, __fdividef, rsqrtf, __saturatef.
extern "C" __global__ void math_fast_intrinsics(const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float s = __sinf(v) * __cosf(v);
        float e = __fdividef(__expf(v), 1.0f + __expf(v));
        y[i] = __saturatef(s + e) + rsqrtf(1.0f + v * v) + __logf(2.0f + v * v);
    }
}

// KERNEL math_f64: double precision: sqrt, exp, sin, fma, division and a double->float conversion.
extern "C" __global__ void math_f64(const double *__restrict__ x, double *__restrict__ y, float *__restrict__ yf, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double v = x[i];
        double r = fma(sqrt(fabs(v)), exp(-v), sin(v)) / (1.0 + v * v);
        y[i] = r;
        yf[i] = (float)r;
    }
}

// KERNEL math_int64_hash: 64-bit integer math: splitmix64 mixing (mul.lo.u64, shifts, xor), __umul64hi and 64-bit div/mod.
extern "C" __global__ void math_int64_hash(const uint64_t *__restrict__ keys, uint64_t *__restrict__ out,
                                           uint64_t seed, uint64_t buckets, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint64_t z = keys[i] + seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    uint64_t hi = __umul64hi(z, buckets);        // fast range reduction
    out[2 * i] = hi;
    out[2 * i + 1] = z % buckets + (uint64_t)((int64_t)z / -7);
}

// KERNEL math_bit_intrinsics: __popc, __clz, __ffs, __brev, __byte_perm, funnel shifts and 64-bit variants.
extern "C" __global__ void math_bit_intrinsics(const uint32_t *__restrict__ a, const uint64_t *__restrict__ b,
                                               uint32_t *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t x = a[i];
    uint64_t y = b[i];
    uint32_t r = __popc(x) + __clz(x) + __ffs(x) + __popcll(y) + __clzll(y);
    r ^= __brev(x);
    r += __byte_perm(x, r, 0x3120);
    r += __funnelshift_l(x, r, 7) ^ __funnelshift_r(r, x, 13);
    out[i] = r;
}
