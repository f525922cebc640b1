// Control flow without loops (or with trivial ones): divergent and
// warp-uniform if/else on threadIdx, if/else-if chains, multiple returns,
// predicated selects, and switch statements (dense and sparse).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

// KERNEL branch_divergent_parity: intra-warp divergence: odd and even lanes take different if/else arms.
extern "C" __global__ void branch_divergent_parity(float *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = v[i];
    if (threadIdx.x & 1)
        x = x * x - 1.0f;
    else
        x = sqrtf(fabsf(x)) + 2.0f;
    v[i] = x;
}

// KERNEL branch_warp_uniform: branch on the warp index, so every warp is uniform but warps differ.
extern "C" __global__ void branch_warp_uniform(const float *__restrict__ in, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned warp = threadIdx.x / warpSize;
    float x = in[i];
    if (warp % 2 == 0) {
        out[i] = x * 2.0f;
    } else {
        out[i] = -x;
    }
}

// KERNEL branch_classify_chain: if / else-if chain classifying values into 5 buckets with a per-bucket counter.
extern "C" __global__ void branch_classify_chain(const float *__restrict__ v, int *__restrict__ cls, int n,
                                                 float lo, float hi)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = v[i];
    int c;
    if (isnan(x))
        c = 4;
    else if (x < lo)
        c = 0;
    else if (x < 0.5f * (lo + hi))
        c = 1;
    else if (x <= hi)
        c = 2;
    else
        c = 3;
    cls[i] = c;
}

// KERNEL branch_early_returns: several return points (bounds, mask, sentinel) before the main work.
extern "C" __global__ void branch_early_returns(const int *__restrict__ mask, const float *__restrict__ in,
                                                float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (mask[i] == 0) {
        out[i] = 0.0f;
        return;
    }
    float x = in[i];
    if (x == -1.0f)
        return; // sentinel: leave output untouched
    out[i] = x * 0.5f + 1.0f;
}

// KERNEL branch_select_minmax: ternaries that the compiler turns into selp / min / max without branches.
extern "C" __global__ void branch_select_minmax(const int *__restrict__ a, const int *__restrict__ b,
                                                int *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int x = a[i], y = b[i];
        int big = x > y ? x : y;
        int sgn = x < 0 ? -1 : (x > 0 ? 1 : 0);
        out[i] = (big & 1) ? big * sgn : big + sgn;
    }
}
