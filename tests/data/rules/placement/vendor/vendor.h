// A library header the build includes with -isystem (a system header for the compilers and for ptxstatic).
#pragma once

namespace vendor {

// Gathers through a per-thread array: the array lives in local memory (PS301 at the loads below).
__device__ inline int pick(const int* in, int n)
{
    int a[32];
    for (int i = 0; i < 32; ++i)
        a[i] = in[i * n];
    int s = 0;
    for (int i = 0; i < n; ++i)
        s += a[in[i] & 31];
    return s;
}

// A whole kernel in the header: nothing of it is the user's code, so its finding is not reported.
__global__ void vendor_kernel(const int* in, int* out, int n)
{
    out[threadIdx.x] = pick(in, n);
}

}  // namespace vendor
