// Kernels for the resource rules: PS301 (local memory), PS302 (register spills) and PS303 (occupancy).
// A line marked "expect: PS3nn" is where the rule must report; kernels named ok_* must stay silent.
// Block sizes come from __launch_bounds__ (the rules read .maxntid).

// ------------------------------------------------------------------------- PS301 local memory

// A per-thread histogram indexed with values known only at run time cannot live in registers: local memory.
extern "C" __global__ void __launch_bounds__(256) ps301_dynamic_index(const int* keys, float* out, int n)
{
    float hist[64] = {};
    for (int k = 0; k < n; ++k)
        hist[keys[k * 256 + threadIdx.x] & 63] += 1.0f;  // expect: PS301
    out[threadIdx.x] = hist[threadIdx.x & 63];
}

// The same array read at indices the compiler knows after unrolling: registers only.
extern "C" __global__ void __launch_bounds__(256) ok_constant_index(const int* idx, float* out)
{
    float table[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        table[k] = k * out[k];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        s += table[k] * idx[k];
    out[threadIdx.x] = s;
}

// ------------------------------------------------------------------------- PS302 register spills

// 48 accumulators live across a loop, squeezed into 32 registers by __launch_bounds__(256, 8): ptxas spills.
#define ACCUMULATE(N)                                                        \
    float acc[N];                                                            \
    _Pragma("unroll") for (int k = 0; k < N; ++k) acc[k] = in[k];            \
    for (int j = 0; j < n; ++j) {                                            \
        float x = in[j * 64 + threadIdx.x];                                  \
        _Pragma("unroll") for (int k = 0; k < N; ++k) acc[k] = acc[k] * x + k; \
    }                                                                        \
    float s = 0.0f;                                                          \
    _Pragma("unroll") for (int k = 0; k < N; ++k) s += acc[k] * acc[(k + 1) % N]; \
    out[threadIdx.x] = s;

extern "C" __global__ void __launch_bounds__(256, 8) ps302_squeezed(const float* in, float* out, int n)  // expect: PS302
{
    ACCUMULATE(48)
}

// The same work without the register cap: no spills.
extern "C" __global__ void __launch_bounds__(256) ok_unsqueezed(const float* in, float* out, int n)
{
    ACCUMULATE(48)
}

// ------------------------------------------------------------------------- PS303 occupancy

// Many live accumulators at 256 threads per block: about 100 registers per thread, registers limit occupancy.
extern "C" __global__ void __launch_bounds__(256) ps303_registers(const float* in, float* out, int n)  // expect: PS303
{
    ACCUMULATE(96)
}

// 48 KiB of shared memory for 128 threads: shared memory limits the resident blocks.
extern "C" __global__ void __launch_bounds__(128) ps303_shared(const float* in, float* out)  // expect: PS303
{
    __shared__ float tile[12288];
    for (int k = threadIdx.x; k < 12288; k += 128)
        tile[k] = in[blockIdx.x * 12288 + k];
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = tile[(threadIdx.x * 97) % 12288];
}

// A small tile and few registers: full occupancy.
extern "C" __global__ void __launch_bounds__(256) ok_small_tile(const float* in, float* out)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
}
