// Small, realistic example: SAXPY followed by a sum reduction of the result.
//
//   y = a * x + y                 (saxpy)
//   partial[b] = sum of y over block b's grid-stride share (block_reduce)
//   out = sum of partial[]         (finish_reduce, one block)
//
// The PTX next to this file was produced from the repository root with
//   nvcc -ptx -arch=sm_80 -lineinfo examples/saxpy_reduce.cu -o examples/saxpy_reduce.ptx
// (see tests/data/fixtures/regenerate.py, which also normalises the .file path).
//
// Annotations use the same format as tests/data/cuda (KERNEL / TRIP comments).

#define BLOCK 256

// Warp-level sum with shuffles; kept out of line so the PTX shows a .func
// and call sites from two kernels.
__device__ __noinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// KERNEL saxpy: y[i] = a * x[i] + y[i], grid-stride loop.
// TRIP: ceil((n - gid) / (blockDim.x * gridDim.x)) iterations per thread.
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// KERNEL block_reduce: per-block sum into partial[blockIdx.x] using a shared-memory tree down to one warp, then warp_sum; blockDim.x == BLOCK.
// TRIP: load loop ceil((n - gid) / (BLOCK * gridDim.x)); tree loop log2(BLOCK / 32) = 3 iterations; warp_sum loop 5 iterations.
extern "C" __global__ void __launch_bounds__(BLOCK) block_reduce(const float *__restrict__ y, float *__restrict__ partial, int n)
{
    __shared__ float s[BLOCK];
    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x)
        v += y[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = BLOCK / 2; stride >= 32; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float w = warp_sum(s[threadIdx.x]);
        if (threadIdx.x == 0)
            partial[blockIdx.x] = w;
    }
}

// KERNEL finish_reduce: single warp folds nparts partial sums and writes the total; launch <<<1, 32>>>.
// TRIP: ceil((nparts - threadIdx.x) / 32) iterations per lane; warp_sum loop 5 iterations.
extern "C" __global__ void finish_reduce(const float *__restrict__ partial, int nparts, float *__restrict__ out)
{
    float v = 0.0f;
    for (int i = threadIdx.x; i < nparts; i += 32)
        v += partial[i];
    v = warp_sum(v);
    if (threadIdx.x == 0)
        *out = v;
}
