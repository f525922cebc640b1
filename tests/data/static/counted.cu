// Kernels with hand-derivable block counts for the static block-count estimator.
// MARK(k) emits "pmevent k;": an instruction with no data effect that cannot be if-converted, so the
// block holding it is entered exactly as often as the source line runs. Regenerate the PTX with
//   nvcc -ptx -arch=sm_80 -o counted.ptx counted.cu
#define MARK(k) asm volatile("pmevent %0;" ::"n"(k))

// Guard with a grid that is not a multiple of the block, and a divergent branch on threadIdx.
extern "C" __global__ void guard_parity(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        MARK(0);
        if (threadIdx.x % 3 == 0) {
            MARK(1);
            out[i] = 1.0f;
        } else {
            MARK(2);
            out[i] = 2.0f;
        }
    }
}

// Nested loops: the outer trip count is a parameter, the inner one runs from threadIdx.x to blockDim.x.
extern "C" __global__ void nested_param_block(float *out, int n)
{
    float acc = 0.0f;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
        MARK(3);
#pragma unroll 1
        for (unsigned j = threadIdx.x; j < blockDim.x; ++j) {
            MARK(4);
            acc += (float)j;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Early exits on the global index and on threadIdx.x.
extern "C" __global__ void early_exit(float *out, int n, int limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    MARK(5);
    if (threadIdx.x >= limit)
        return;
    MARK(6);
    out[i] = 0.0f;
}

// Grid-stride loop: every index below n is visited once, by one thread.
extern "C" __global__ void grid_stride(float *y, int n)
{
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        MARK(7);
        y[i] = 2.0f * y[i];
    }
}

// A device function with a loop whose trip count is an argument, called twice per thread.
__device__ __noinline__ float poly(float x, int terms)
{
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < terms; ++k) {
        MARK(8);
        s = s * x + (float)k;
    }
    return s;
}

extern "C" __global__ void call_poly(const float *x, float *out, int n, int terms)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = poly(x[i], terms) + poly(x[i], terms + 1);
}

// Control flow on loaded data: an if on a value and a loop halving it.
extern "C" __global__ void data_branch(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    MARK(9);
    int v = in[i];
    if (v > 0) {
        MARK(10);
        out[i] = v;
    }
    int s = 0;
#pragma unroll 1
    while (v > 1) {
        MARK(11);
        v >>= 1;
        ++s;
    }
    MARK(12);
    out[i] += s;
}

// A triangular loop with a 64-bit bound: thread t runs m * (t + 1) iterations.
extern "C" __global__ void triangle_long(float *out, long long m)
{
    float acc = 0.0f;
#pragma unroll 1
    for (long long j = 0; j < m * (threadIdx.x + 1); ++j) {
        MARK(13);
        acc += 1.0f;
    }
    out[threadIdx.x] = acc;
}

// A 2-D launch with a guard on both coordinates.
extern "C" __global__ void guard_2d(float *img, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        MARK(14);
        img[y * w + x] = 0.0f;
    }
}

// A loop steered by a pointer comparison: the bound is the argument plus n elements.
extern "C" __global__ void pointer_walk(float *a, int n)
{
    float *end = a + n;
#pragma unroll 1
    for (float *p = a + threadIdx.x; p < end; p += blockDim.x) {
        MARK(15);
        *p += 1.0f;
    }
}
