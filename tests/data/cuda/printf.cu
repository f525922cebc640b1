// Device-side printf: lowered to a call of the vprintf system function with
// a local-memory argument buffer and a .global string constant.
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdio>

// KERNEL printf_launch_info: thread 0 of block 0 prints the launch shape and a float/double argument.
extern "C" __global__ void printf_launch_info(float f, double d)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        printf("grid=%u block=%u f=%f d=%.3e\n", gridDim.x, blockDim.x, f, d);
}

// KERNEL printf_nonfinite: prints every non-finite element it finds (printf inside a conditional in a loop).
// TRIP: grid-stride loop ceil((n-gid)/(blockDim.x*gridDim.x)) iterations per thread.
extern "C" __global__ void printf_nonfinite(const float *__restrict__ v, int n, const char *tag)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = v[i];
        if (!isfinite(x))
            printf("[%s] v[%d] = %f (block %d, thread %d)\n", tag, i, x, blockIdx.x, threadIdx.x);
    }
}

// KERNEL printf_assert_range: device-side assert on an index range plus a 64-bit printf argument.
#include <cassert>
__global__ void printf_assert_range(const long long *__restrict__ idx, int n, long long limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    long long v = idx[i];
    if (v >= limit)
        printf("index %lld out of range (limit %lld)\n", v, limit);
    assert(v >= 0);
}
