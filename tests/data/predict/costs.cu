// Kernels whose machine code costs differ from what their PTX instructions suggest, for the work of a launch
// (ptxstatic/features/work.py) and the constant-cache term of the traffic model. Compiled (from the
// repository root) with: nvcc -ptx -arch=sm_90 tests/data/predict/costs.cu -o tests/data/predict/costs.ptx

// A dependent chain of adds: nvcc unrolls the loop by four and leaves a remainder loop marked "nounroll";
// ptxas unrolls the main loop again, so its counter, compare and branch run once every several trips.
extern "C" __global__ void add_chain(float *out, int iters, float a)
{
    float x = threadIdx.x;
    for (int k = 0; k < iters; ++k) x = x + a;
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// A store and a fence each trip: at device scope the warp waits until the store is acknowledged.
extern "C" __global__ void fence_device(float *out, int iters)
{
    float x = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        x = x * 0.5f + 1.0f;
        out[blockIdx.x * blockDim.x + threadIdx.x] = x;
        __threadfence();
    }
}

// The same with a fence at block scope.
extern "C" __global__ void fence_block(float *out, int iters)
{
    float x = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        x = x * 0.5f + 1.0f;
        out[blockIdx.x * blockDim.x + threadIdx.x] = x;
        __threadfence_block();
    }
}

// A warp barrier in converged code: no branch and no wait.
extern "C" __global__ void warp_sync(float *out, int iters)
{
    float x = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        x = x * 0.5f + 1.0f;
        __syncwarp();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// The same with a CTA barrier: each warp's arrival occupies the control pipe.
extern "C" __global__ void block_barrier(float *out, int iters)
{
    float x = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        x = x * 0.5f + 1.0f;
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Lanes grouped by one of eight values: match.any compares them one value after another.
extern "C" __global__ void match_any(unsigned *out, int iters)
{
    unsigned h = threadIdx.x * 2654435761u, s = 0;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        s += __popc(__match_any_sync(0xffffffffu, h >> 29));
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__constant__ float table[1024];

// Every lane of a warp reads a different constant word: the constant cache serves one address per pass.
extern "C" __global__ void constant_divergent(float *out, int iters)
{
    float x = 0.0f;
    for (int k = 0; k < iters; ++k) x += table[(threadIdx.x * 33 + k) & 1023];
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Every lane reads the same constant word: one pass.
extern "C" __global__ void constant_uniform(float *out, int iters)
{
    float x = 0.0f;
    for (int k = 0; k < iters; ++k) x += table[k & 1023];
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Four elements a thread: the loads of the later elements may read what the earlier stores wrote, so each
// load waits for the store before it, and that store for its own load.
extern "C" __global__ void copy_four(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int k = 0; k < 4; ++k) out[i + k * blockDim.x] = in[i + k * blockDim.x] + 1.0f;
}

// The same with restrict pointers: the loads are non-coherent (ld.global.nc), issued together.
extern "C" __global__ void copy_four_restrict(const float *__restrict__ in, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int k = 0; k < 4; ++k) out[i + k * blockDim.x] = in[i + k * blockDim.x] + 1.0f;
}

// A butterfly reduction: nvcc moves the shuffle's mask and clamp into registers (mov.b32 of immediates), which
// ptxas folds into the SHFL instruction.
extern "C" __global__ void shuffle_reduce(float *out, int iters)
{
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) {
        float v = threadIdx.x + k;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        s += v;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Bit-field extract and insert: two machine instructions each on sm_70 and later.
extern "C" __global__ void bit_field(unsigned *out, int iters)
{
    unsigned x = threadIdx.x * 2654435761u, f;
    for (int k = 0; k < iters; ++k) {
        asm volatile("bfe.u32 %0, %1, 5, 11;" : "=r"(f) : "r"(x));
        asm volatile("bfi.b32 %0, %1, %0, 17, 11;" : "+r"(x) : "r"(f));
        x += 0x9e3779b9u;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
