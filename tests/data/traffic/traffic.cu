// Kernels whose memory traffic is worked out by hand in tests/traffic/test_traffic_model.py.

// Neighbouring lanes read and write neighbouring floats: 4 sectors a request, nothing read twice.
extern "C" __global__ void row_copy(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

// Each lane walks its own row of a row-major rows x cols matrix: one sector per lane and request; the next
// seven columns of a lane's row are in the sector it already brought.
extern "C" __global__ void column_walk(const float* __restrict__ m, float* __restrict__ sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += m[r * cols + c];
    sums[r] = s;
}

// Every lane reads the same element: one sector a request, the vector read once from DRAM.
extern "C" __global__ void broadcast(const float* __restrict__ x, float* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (int j = 0; j < len; ++j)
        s += x[j];
    out[i] = s;
}

// A three-point stencil: the left and right neighbours are in the sectors of the centre's request and its
// neighbours', which L1 holds.
extern "C" __global__ void stencil3(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1)
        out[i] = in[i - 1] + in[i] + in[i + 1];
}

// A square matrix transposed without tiling: reads along rows, writes down columns.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int width)
{
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < width && y + j < width)
            out[x * width + y + j] = in[(y + j) * width + x];
}

// A copy that reads every stride-th element.
extern "C" __global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[(long long)i * stride];
}

// A matrix-vector product, one row per thread (each lane walks its own row).
extern "C" __global__ void matvec_rows(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += a[(long long)r * cols + c] * x[c];
    y[r] = s;
}

// The same transpose through a tile in shared memory (padded against bank conflicts): both global accesses
// run along rows.
extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int width)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < width && y + j < width)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < width && y + j < width)
            out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}

// A matrix-vector product over a column-major matrix, one row per thread: the lanes read consecutive
// elements of each column.
extern "C" __global__ void matvec_cols(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += a[(long long)c * rows + r] * x[c];
    y[r] = s;
}

// Each lane sums its own row through plain (not read-only) loads: on the GTX Titan X they are cached in L2
// only, and each sector is read again a loop iteration later.
extern "C" __global__ void row_sum_plain(const float* a, float* y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += a[(long long)r * cols + c];
    y[r] = s;
}

// Every thread adds to slot global_id % slots (a power of two) iters times: sixteen slots are one 128-byte
// line that every CTA shares; 2^18 slots are 8192 lines, each CTA's 256 threads eight of their own.
extern "C" __global__ void atomic_slots(unsigned* counts, int slots, int iters)
{
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) & (slots - 1);
    for (int k = 0; k < iters; ++k)
        atomicAdd(counts + i, 1u);
}

// 96 live accumulators. Under launch bounds that leave a thread 32 registers (1024 threads, 2 CTAs per SM)
// ptxas spills them to the stack frame in the loop: local-memory traffic that the PTX does not show.
#define ACCUMULATE(out, iters)                                                                              \
    float acc[96];                                                                                          \
    _Pragma("unroll") for (int j = 0; j < 96; ++j) acc[j] = threadIdx.x + j;                                \
    for (int k = 0; k < iters; ++k) {                                                                       \
        _Pragma("unroll") for (int j = 0; j < 96; ++j) acc[j] = fmaf(acc[j], 0.999f, acc[(j + 1) % 96] * 1e-3f); \
    }                                                                                                       \
    float s = 0.0f;                                                                                         \
    _Pragma("unroll") for (int j = 0; j < 96; ++j) s += acc[j];                                             \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;

extern "C" __global__ void __launch_bounds__(1024, 2) spilling_accumulators(float* out, int iters)
{
    ACCUMULATE(out, iters)
}

// The same without launch bounds: the 96 accumulators fit in a thread's 255 registers.
extern "C" __global__ void accumulators(float* out, int iters)
{
    ACCUMULATE(out, iters)
}
