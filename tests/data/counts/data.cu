// Kernels whose control flow depends on the data they load, or on integer arithmetic that wraps, for the
// static block-count estimator (tests/counts/test_counts_data.py). MARK(k) emits "pmevent k;", an
// instruction with no data effect that cannot be if-converted: the block holding it is entered exactly as
// often as its source line runs. Regenerate the PTX with regenerate.py (nvcc, sm_90, -lineinfo).
#define MARK(k) asm volatile("pmevent %0;" ::"n"(k))

// Each thread loops as often as its element of `trips` says (iota: thread t loops t times).
extern "C" __global__ void trips_from_buffer(const int *trips, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips[i]; ++k) {
        MARK(0);
        acc += k * 0.5f;
    }
    out[i] = acc;
}

// A histogram-style branch on a loaded value inside a loop over a row of the input.
extern "C" __global__ void count_above(const float *in, int *out, int cols, float threshold)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int above = 0;
#pragma unroll 1
    for (int c = 0; c < cols; ++c) {
        if (in[row * cols + c] > threshold) {
            MARK(1);
            ++above;
        }
    }
    out[row] = above;
}

// A scan for the first zero of each thread's row, at most n elements: how long it runs is data.
extern "C" __global__ void find_zero(const int *in, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int i = 0;
#pragma unroll 1
    while (i < n && in[t * n + i] != 0) {
        MARK(2);
        ++i;
    }
    out[t] = i;
}

// The values are staged through shared memory: what the branch reads is not the input as the launch gives
// it but what the CTA wrote (the emulated sample measures it).
extern "C" __global__ void staged_branch(const int *in, int *out, int n)
{
    __shared__ int tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    int v = tile[(threadIdx.x * 7) % blockDim.x];
    if (v % 3 == 0) {
        MARK(3);
        out[i] = v;
    }
}

// A guard on a 32-bit global index, which wraps past 2^32 threads.
extern "C" __global__ void guard_wrap(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        MARK(4);
        out[i] = 1.0f;
    }
}

// The same guard on an unsigned index: past 2^31 threads the index is not below n until it wraps to 0.
extern "C" __global__ void guard_wrap_unsigned(float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        MARK(7);
        out[i] = 1.0f;
    }
}

// An unsigned index that wraps every 16 CTAs when the stride is 2^28.
extern "C" __global__ void stride_wrap(float *out, unsigned stride, unsigned n)
{
    unsigned i = blockIdx.x * stride + threadIdx.x;
    if (i < n) {
        MARK(5);
        out[threadIdx.x] = 1.0f;
    }
}

// A 64-bit trip count per thread.
extern "C" __global__ void long_trips(float *out, long long m)
{
    float acc = 0.0f;
#pragma unroll 1
    for (long long k = 0; k < m; ++k) {
        MARK(6);
        acc += 1.0f;
    }
    out[threadIdx.x] = acc;
}

// A triangular nest bounded by parameters (correlation's shape): thread j runs m - j - 1 rows of n steps.
extern "C" __global__ void pair_sums(const float *data, float *out, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m - 1) {
#pragma unroll 1
        for (int k = j + 1; k < m; ++k) {
            float s = 0.0f;
#pragma unroll 1
            for (int i = 0; i < n; ++i) {
                MARK(8);
                s += data[i * m + j] * data[i * m + k];
            }
            out[j * m + k] = s;
        }
    }
}

// A switch on a hash that changes every iteration: which case runs follows no pattern the iterations repeat.
extern "C" __global__ void hash_switch(float *out, int iters)
{
    unsigned s = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
    float x = 1.0f;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        MARK(9);
        s = s * 1664525u + 1013904223u;
        switch (s >> 30) {
        case 0: MARK(10); x = x * 0.5f + 1.0f; break;
        case 1: MARK(11); x = x + 2.0f; break;
        case 2: MARK(12); x = x * x * 1e-3f; break;
        default: MARK(13); x = x - 3.0f; break;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
