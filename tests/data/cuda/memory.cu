// Global-memory flavours: read-only loads (__ldg, const __restrict__ ->
// ld.global.nc), volatile loads, vectorised float4 accesses, dynamically
// indexed per-thread arrays that live in local memory, __constant__ tables,
// and __device__ variables with initialisers (including pointer initialisers
// that become generic(sym) in PTX).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

__constant__ float c_poly[8] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, -0.03125f, 0.015625f, -0.0078125f};
__constant__ int c_perm[16];

struct LutEntry {
    float scale;
    int offset;
    short lanes[2];
};

__device__ int g_launch_counter = 0;
__device__ float g_gain[4] = {1.0f, 0.5f, 0.25f, 2.0f};
__device__ LutEntry g_lut[3] = {{1.0f, 0, {1, 2}}, {0.5f, 16, {3, 4}}, {2.0f, -16, {5, 6}}};
__device__ float *g_gain_ptr = g_gain;          // pointer initialiser: generic(g_gain)
__device__ float *g_gain_tail = g_gain + 2;     // pointer + offset initialiser
__device__ unsigned long long g_checksum = 0xcbf29ce484222325ull;

// KERNEL mem_ldg_gather: indexed gather through __ldg and const __restrict__ (non-coherent read-only loads).
extern "C" __global__ void mem_ldg_gather(const float *__restrict__ src, const int *__restrict__ idx,
                                          float *__restrict__ dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = __ldg(&src[__ldg(&idx[i])]);
}

// KERNEL mem_volatile_poll: thread 0 of each block polls a volatile flag set by the host or another kernel, bounded by max_polls.
// TRIP: thread 0: up to max_polls iterations (stops once the flag is non-zero); other threads: 0.
extern "C" __global__ void mem_volatile_poll(volatile int *flag, int *polls_out, int max_polls)
{
    if (threadIdx.x != 0)
        return;
    int p = 0;
    while (p < max_polls && *flag == 0)
        ++p;
    polls_out[blockIdx.x] = p;
}

// KERNEL mem_vector_copy4: float4 vectorised copy with a scalar tail (ld.global.v4 / st.global.v4).
// TRIP: vector loop ceil((n/4 - gid) / (blockDim.x*gridDim.x)) iterations; tail handled by block 0 only (n mod 4 elements).
extern "C" __global__ void mem_vector_copy4(const float *__restrict__ src, float *__restrict__ dst, int n)
{
    int n4 = n / 4;
    const float4 *s4 = reinterpret_cast<const float4 *>(src);
    float4 *d4 = reinterpret_cast<float4 *>(dst);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        float4 v = s4[i];
        v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;
        d4[i] = v;
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3))
        dst[n4 * 4 + threadIdx.x] = 2.0f * src[n4 * 4 + threadIdx.x];
}

// KERNEL mem_local_histogram: 32-bin per-thread histogram in a dynamically indexed local array (.local memory).
// TRIP: fill loop 32 (unrolled), counting loop per_thread iterations, output loop 32 iterations per thread.
extern "C" __global__ void mem_local_histogram(const uint8_t *__restrict__ data, int per_thread,
                                               unsigned *__restrict__ hist_out)
{
    unsigned h[32];
#pragma unroll
    for (int b = 0; b < 32; ++b)
        h[b] = 0;
    const uint8_t *p = data + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
    for (int j = 0; j < per_thread; ++j)
        h[p[j] >> 3]++; // data-dependent index forces the array into local memory
    unsigned *o = hist_out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * 32;
    for (int b = 0; b < 32; ++b)
        o[b] = h[b];
}

// KERNEL mem_constant_horner: polynomial evaluation from a __constant__ table (ld.const) plus a constant permutation lookup.
// TRIP: Horner loop 8 iterations per thread (fully unrolled by the compiler).
extern "C" __global__ void mem_constant_horner(const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float t = x[i];
    float acc = c_poly[7];
    for (int k = 6; k >= 0; --k)
        acc = acc * t + c_poly[k];
    y[c_perm[i & 15] + (i & ~15)] = acc;
}

// KERNEL mem_device_globals: reads __device__ variables with initialisers (arrays, structs, pointers) and bumps a global counter.
extern "C" __global__ void mem_device_globals(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        atomicAdd(&g_launch_counter, 1);
    if (i >= n)
        return;
    const LutEntry &e = g_lut[i % 3];
    float v = g_gain_ptr[i & 3] * e.scale + (float)(e.offset + e.lanes[i & 1]);
    out[i] = v + g_gain_tail[i & 1];
    if (i == n - 1)
        atomicXor(&g_checksum, (unsigned long long)__float_as_uint(v));
}
