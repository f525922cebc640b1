// Loop shapes: counted loops, 2- and 3-deep nests, loops bounded by scalar
// parameters and by the launch configuration (blockDim / gridDim), early
// exits with break / continue, data-dependent while and do-while loops, and
// loops controlled by #pragma unroll.
//
// Annotation format used throughout tests/data/cuda (read by
// tests/data/fixtures/regenerate.py to build kernels.json):
//   // KERNEL <source name>: <one-line description>
//   // TRIP: <expected per-thread trip count of the kernel's loop(s)>
#include <cstdint>

// KERNEL loop_row_sum: one thread per row, serial sum over the n columns of a rows x n matrix.
// TRIP: column loop runs n times per thread (0 times for threads with row >= rows).
extern "C" __global__ void loop_row_sum(const float *__restrict__ m, float *__restrict__ out,
                                        int rows, int n)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    float acc = 0.0f;
    for (int j = 0; j < n; ++j)
        acc += m[(size_t)row * n + j];
    out[row] = acc;
}

// KERNEL loop_box_filter_2d: 2-deep nest, (2r+1)x(2r+1) box blur of a width x height image with clamped borders.
// TRIP: outer dy loop runs 2r+1 times, inner dx loop (2r+1)^2 times in total per thread.
extern "C" __global__ void loop_box_filter_2d(const float *__restrict__ in, float *__restrict__ out,
                                              int width, int height, int r)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    float acc = 0.0f;
    for (int dy = -r; dy <= r; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -r; dx <= r; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            acc += in[yy * width + xx];
        }
    }
    int side = 2 * r + 1;
    out[y * width + x] = acc / (float)(side * side);
}

// KERNEL loop_conv3d_valid: 3-deep nest, "valid" 3-D convolution of a volume with a k x k x k filter.
// TRIP: kz loop k times, ky loop k^2 times, kx loop k^3 times in total per thread.
extern "C" __global__ void loop_conv3d_valid(const float *__restrict__ vol, const float *__restrict__ filt,
                                             float *__restrict__ out, int nx, int ny, int nz, int k)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int oz = blockIdx.z;
    int mx = nx - k + 1, my = ny - k + 1, mz = nz - k + 1;
    if (ox >= mx || oy >= my || oz >= mz)
        return;
    float acc = 0.0f;
    for (int kz = 0; kz < k; ++kz)
        for (int ky = 0; ky < k; ++ky)
            for (int kx = 0; kx < k; ++kx)
                acc += vol[((oz + kz) * ny + (oy + ky)) * nx + (ox + kx)] * filt[(kz * k + ky) * k + kx];
    out[(oz * my + oy) * mx + ox] = acc;
}

// KERNEL loop_block_stride: one block per row; threads of the block stride over the row by blockDim.x.
// TRIP: ceil((n - threadIdx.x) / blockDim.x) iterations per thread (0 if threadIdx.x >= n).
extern "C" __global__ void loop_block_stride(float *data, int n, float scale)
{
    float *row = data + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row[i] *= scale;
}

// KERNEL loop_grid_stride_saxpy: classic grid-stride SAXPY.
// TRIP: ceil((n - gid) / (blockDim.x * gridDim.x)) iterations, gid = blockIdx.x*blockDim.x+threadIdx.x.
extern "C" __global__ void loop_grid_stride_saxpy(int n, float a, const float *__restrict__ x,
                                                  float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// KERNEL loop_over_blocks: second pass of a two-pass reduction; thread t of block 0 folds column t of the per-block partials.
// TRIP: gridDim.x iterations per thread (the loop bound is the grid size, not a parameter).
extern "C" __global__ void loop_over_blocks(const float *__restrict__ partials, float *__restrict__ out)
{
    float acc = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b)
        acc += partials[b * blockDim.x + threadIdx.x];
    if (blockIdx.x == 0)
        out[threadIdx.x] = acc;
}

// KERNEL loop_find_first: per-row linear search with an early break at the first match.
// TRIP: at most n iterations per thread; exits early at the first index holding key.
extern "C" __global__ void loop_find_first(const int *__restrict__ rows, int *__restrict__ pos,
                                           int nrows, int n, int key)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows)
        return;
    const int *row = rows + (size_t)r * n;
    int found = -1;
    for (int j = 0; j < n; ++j) {
        if (row[j] == key) {
            found = j;
            break;
        }
    }
    pos[r] = found;
}

// KERNEL loop_sum_skip_negative: loop with continue (skips negative and NaN entries) and a per-thread cap.
// TRIP: n iterations per thread unless the running count reaches cap, then it breaks.
extern "C" __global__ void loop_sum_skip_negative(const float *__restrict__ v, float *__restrict__ out,
                                                  int n, int cap)
{
    const float *p = v + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * n;
    float acc = 0.0f;
    int used = 0;
    for (int j = 0; j < n; ++j) {
        float x = p[j];
        if (!(x >= 0.0f))
            continue;
        acc += x;
        if (++used == cap)
            break;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// KERNEL loop_collatz_steps: data-dependent while loop (Collatz stopping time), bounded by max_steps.
// TRIP: data dependent, at most max_steps iterations per thread.
extern "C" __global__ void loop_collatz_steps(const uint32_t *__restrict__ seeds, int *__restrict__ steps,
                                              int n, int max_steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint64_t v = seeds[i];
    int s = 0;
    while (v > 1 && s < max_steps) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        ++s;
    }
    steps[i] = s;
}

// KERNEL loop_newton_rsqrt: do-while loop running a fixed number of Newton iterations for 1/sqrt(x).
// TRIP: max(iters, 1) iterations per thread (do-while body runs at least once).
extern "C" __global__ void loop_newton_rsqrt(const float *__restrict__ x, float *__restrict__ y, int n,
                                             int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i];
    float g = 1.0f / a;
    int k = 0;
    do {
        g = g * (1.5f - 0.5f * a * g * g);
    } while (++k < iters);
    y[i] = g;
}

#define FIR_TAPS 8

// KERNEL loop_fir_unrolled: 8-tap FIR filter; the tap loop is fully unrolled with #pragma unroll, the outer loop is not (#pragma unroll 1).
// TRIP: outer loop outputs_per_thread iterations per thread; inner tap loop disappears (8 taps unrolled).
extern "C" __global__ void loop_fir_unrolled(const float *__restrict__ in, const float *__restrict__ taps,
                                             float *__restrict__ out, int outputs_per_thread)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * outputs_per_thread;
    float t[FIR_TAPS];
#pragma unroll
    for (int k = 0; k < FIR_TAPS; ++k)
        t[k] = taps[k];
#pragma unroll 1
    for (int o = 0; o < outputs_per_thread; ++o) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < FIR_TAPS; ++k)
            acc = fmaf(t[k], in[base + o + k], acc);
        out[base + o] = acc;
    }
}

// KERNEL loop_unroll4_dot: runtime-trip dot product with #pragma unroll 4 (main loop plus remainder loop in PTX).
// TRIP: n source iterations per thread: floor(n/4) unrolled iterations + (n mod 4) remainder iterations.
extern "C" __global__ void loop_unroll4_dot(const float *__restrict__ a, const float *__restrict__ b,
                                            float *__restrict__ out, int n)
{
    size_t off = (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * n;
    float acc = 0.0f;
#pragma unroll 4
    for (int j = 0; j < n; ++j)
        acc += a[off + j] * b[off + j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
