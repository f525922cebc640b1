// Findings in system headers are shown at the user's call site (or not at all): the rule tests of
// ptxstatic/rules/placement.py. Compiled with -isystem vendor and --expt-relaxed-constexpr (std::max in
// device code); "expect: PS301" marks where the finding must be shown.
#include <algorithm>
#include <vendor.h>

// std::max reads the per-thread array through a reference: the local load is in libstdc++'s
// bits/stl_algobase.h, inlined here.
__global__ void std_max_local(const int* in, int* out, int n)
{
    int a[32];
    for (int i = 0; i < 32; ++i)
        a[i] = in[i * n];
    int m = 0;
    for (int i = 0; i < n; ++i)
        m = std::max(m, a[in[i] & 31]);  // expect: PS301
    out[threadIdx.x] = m;
}

// The local array is the vendor header's, inlined here.
__global__ void vendor_local(const int* in, int* out, int n)
{
    out[threadIdx.x] = vendor::pick(in, n);  // expect: PS301
}
