// Kernels for the launch-size sweep of the static block-count estimator: launches from 2^10 to 2^26
// threads whose trip counts are affine in the parameters and the thread and block indices, plus kernels
// whose cost the estimator must bound (a data-dependent branch in a grid-stride loop, printf in a loop).
// MARK(k) emits "pmevent k;" (see counted.cu). Regenerate the PTX with
//   nvcc -ptx -arch=sm_80 -o sweep.ptx sweep.cu
#include <cstdio>
#define MARK(k) asm volatile("pmevent %0;" ::"n"(k))

// Row-by-column matmul on a 2-D grid of 16x16 tiles: n*n threads inside the guard, n iterations each.
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        MARK(0);
        float acc = 0.0f;
#pragma unroll 1
        for (int k = 0; k < n; ++k) {
            MARK(1);
            acc += a[row * n + k] * b[k * n + col];
        }
        c[row * n + col] = acc;
    }
}

// Shared-memory tree reduction: one element per thread below n, log2(blockDim.x) halving steps.
extern "C" __global__ void reduce_sum(const float *in, float *out, int n)
{
    extern __shared__ float buf[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    float v = 0.0f;
    if (i < n) {
        MARK(2);
        v = in[i];
    }
    buf[t] = v;
    __syncthreads();
#pragma unroll 1
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        MARK(3);
        if (t < s) {
            MARK(4);
            buf[t] += buf[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        MARK(5);
        out[blockIdx.x] = buf[0];
    }
}

// Grid-stride loop: every index below n once.
extern "C" __global__ void grid_stride_scale(float *y, float s, int n)
{
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        MARK(6);
        y[i] *= s;
    }
}

// 5-point stencil on a w x h image with a one-pixel border left untouched.
extern "C" __global__ void stencil5(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        MARK(7);
        if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
            MARK(8);
            int i = y * w + x;
            out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
        }
    }
}

// A data-dependent branch inside a grid-stride loop: the loop runs n times in all, the branch is data.
extern "C" __global__ void grid_stride_positive(const float *x, float *y, long long n)
{
#pragma unroll 1
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        MARK(9);
        if (x[i] > 0.0f) {
            MARK(10);
            y[i] = x[i];
        }
        MARK(11);
    }
}

// printf in a loop whose trip count is a parameter.
extern "C" __global__ void printf_loop(const int *flags, int n)
{
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
        MARK(12);
        if (flags[i])
            printf("thread %d step %d\n", threadIdx.x, i);
    }
}

// A loop whose trip count is the block index: CTAs differ in every step, so counts are affine in the CTA
// index but no two CTAs take the same path.
extern "C" __global__ void triangle_blocks(float *out)
{
    float acc = 0.0f;
#pragma unroll 1
    for (unsigned k = 0; k < blockIdx.x; ++k) {
        MARK(13);
        acc += (float)k;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// A 2-D image addressed through a flat index: the guards divide the index by the width.
extern "C" __global__ void flat_border(float *img, int w, int total)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) {
        int x = i % w;
        if (x == 0 || x == w - 1) {
            MARK(14);
            img[i] = 0.0f;
        }
    }
}

// The global index and the guard computed in device functions that are not inlined.
__device__ __noinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __noinline__ int inside(int i, int n) { return i < n; }

extern "C" __global__ void guard_via_calls(float *y, int n)
{
    int i = global_index();
    if (inside(i, n)) {
        MARK(15);
        y[i] = 0.0f;
    }
}
