// Kernels for rule PS102 (shared-memory bank conflicts).
// A line marked "expect: PS102" is where the rule must report (the figures are derived in
// tests/rules/test_rule_ps102.py); kernels named ok_* must stay silent.
// Launch used by the tests: the default launch (blocks of 32 x 4 threads: a warp is one row of 32 threadIdx.x).

#define TILE 32
#define ROWS 8

// ------------------------------------------------------------------------------------- must report

// Matrix transpose through a shared tile without padding: a warp reads a column of the tile.
extern "C" __global__ void ps102_transpose(const float* __restrict__ in, float* __restrict__ out, int width)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];  // expect: PS102
}

// Every second float of a shared array, written and read.
extern "C" __global__ void ps102_stride2(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float s[2 * TILE * ROWS];
    int t = threadIdx.y * TILE + threadIdx.x;
    s[2 * threadIdx.x + 64 * threadIdx.y] = in[t];  // expect: PS102
    __syncthreads();
    out[t] = s[2 * threadIdx.x + 64 * threadIdx.y + 1];  // expect: PS102
}

// Every second double: 64-bit accesses, each half-warp spans 256 bytes.
extern "C" __global__ void ps102_double_stride2(const double* __restrict__ in, double* __restrict__ out)
{
    __shared__ double d[2 * TILE * ROWS];
    int t = threadIdx.y * TILE + threadIdx.x;
    d[t] = in[t];
    __syncthreads();
    out[t] = d[(2 * t) % (2 * TILE * ROWS)];  // expect: PS102
}

// A texture fetch, which the emulator does not model, stops the emulation before the shared store: its figures
// are estimated from the affine stride of its address (32 floats = 128 bytes between lanes).
extern "C" __global__ void ps102_after_texture(cudaTextureObject_t tex, float* __restrict__ out)
{
    __shared__ float s[TILE * TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[TILE * threadIdx.x] = tex1Dfetch<float>(tex, i);  // expect: PS102
    __syncthreads();
    out[i] = s[threadIdx.x];
}

// ----------------------------------------------------------------------------------- near misses

// The same transpose with the tile padded to 33 words a row: a column falls in 32 different banks.
extern "C" __global__ void ok_transpose_padded(const float* __restrict__ in, float* __restrict__ out, int width)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

// One word for the whole warp, and pairs of threads sharing a word: broadcasts, no conflict.
extern "C" __global__ void ok_broadcast(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float s[TILE * ROWS];
    int t = threadIdx.y * TILE + threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[threadIdx.y] + s[threadIdx.y * TILE + threadIdx.x / 2];
}

// Doubles, one per thread: each half-warp reads 128 contiguous bytes, one wavefront each.
extern "C" __global__ void ok_double_row(const double* __restrict__ in, double* __restrict__ out)
{
    __shared__ double d[TILE * ROWS];
    int t = threadIdx.y * TILE + threadIdx.x;
    d[t] = in[t];
    __syncthreads();
    out[t] = 2.0 * d[TILE * ROWS - 1 - t];
}

// 16-byte vectors, one per thread: each quarter-warp reads 128 contiguous bytes.
extern "C" __global__ void ok_float4_row(const float4* __restrict__ in, float4* __restrict__ out)
{
    __shared__ float4 v[TILE * ROWS];
    int t = threadIdx.y * TILE + threadIdx.x;
    v[t] = in[t];
    __syncthreads();
    float4 a = v[t ^ 1];
    out[t] = make_float4(a.w, a.z, a.y, a.x);
}

// A tree reduction with sequential addressing: active threads read consecutive words at every step.
extern "C" __global__ void ok_sequential_reduce(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float s[TILE * ROWS];
    unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x * blockDim.y + t];
    __syncthreads();
    for (unsigned half = blockDim.x * blockDim.y / 2; half > 0; half >>= 1) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// Dynamic shared memory read along rows.
extern "C" __global__ void ok_dynamic_rows(const float* __restrict__ in, float* __restrict__ out)
{
    extern __shared__ float buf[];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    buf[t] = in[t];
    __syncthreads();
    out[t] = buf[t] + buf[(t + 32) % (blockDim.x * blockDim.y)];
}
