// Kernels for rule PS201 (barrier under a thread-dependent condition).
// A line marked "expect: PS201" is where the rule must report; every other barrier must stay silent.
// "expect-call: PS201" marks the call site of an inlined function that holds a reported barrier.
#include "ps201_helpers.cuh"

// ------------------------------------------------------------------------------------- must report

extern "C" __global__ void ps201_tid_if(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x < 16) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();  // expect: PS201
        out[threadIdx.x] = tile[15 - threadIdx.x];
    }
}

extern "C" __global__ void ps201_tid_loop(float* data)
{
    __shared__ float tile[256];
    float acc = 0.0f;
    for (unsigned i = 0; i < threadIdx.x % 8; ++i) {
        tile[threadIdx.x] = acc + i;
        __syncthreads();  // expect: PS201
        acc += tile[(threadIdx.x + 1) % 256];
    }
    data[threadIdx.x] = acc;
}

extern "C" __global__ void ps201_loaded_value(const int* flags, float* out)
{
    __shared__ float tile[256];
    int f = flags[blockIdx.x * blockDim.x + threadIdx.x];
    if (f > 0) {
        tile[threadIdx.x] = f;
        __syncthreads();  // expect: PS201
        out[threadIdx.x] = tile[0];
    }
}

extern "C" __global__ void ps201_early_return(const float* in, float* out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    tile[threadIdx.x] = in[i];
    __syncthreads();  // expect: PS201
    out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void ps201_atomic_ticket(int* counter, float* out)
{
    __shared__ float tile[256];
    int ticket = atomicAdd(counter, 1);
    if (ticket < 64) {
        tile[threadIdx.x] = ticket;
        __syncthreads();  // expect: PS201
        out[ticket] = tile[threadIdx.x ^ 1];
    }
}

extern "C" __global__ void ps201_lane_reduce_or(const int* in, int* out)
{
    if (threadIdx.x % 32 == 0) {
        int any = __syncthreads_or(in[threadIdx.x]);  // expect: PS201
        out[threadIdx.x / 32] = any;
    }
}

extern "C" __global__ void ps201_merged_flag(const float* in, float* out, int a, int b)
{
    __shared__ float tile[256];
    int flag;
    if (threadIdx.x & 1)
        flag = a;
    else
        flag = b;
    out[threadIdx.x] = in[threadIdx.x] * 2.0f;
    if (flag) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();  // expect: PS201
        out[threadIdx.x] += tile[threadIdx.x ^ 1];
    }
}

extern "C" __global__ void ps201_inlined_helper(const float* in, float* out)
{
    __shared__ float tile[256];
    float v = in[threadIdx.x];
    if (threadIdx.x < blockDim.x / 2)
        v = stage_through_shared(tile, v);  // expect-call: PS201
    out[threadIdx.x] = v;
}

extern "C" __global__ void ps201_noinline_call(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x >= 32)
        publish_and_wait(tile, in[threadIdx.x]);  // expect: PS201
    out[threadIdx.x] = tile[threadIdx.x];
}

extern "C" __global__ void ps201_lane_subset_helper(const float* in, float* out)
{
    __shared__ float tile[256];
    float v = in[threadIdx.x];
    if (threadIdx.x % 32 < 8)
        v = stage_through_shared(tile, v);  // expect-call: PS201
    out[threadIdx.x] = v;
}

// ---------------------------------------------------------------------------------- must not report

extern "C" __global__ void ok_after_reconvergence(const float* in, float* out)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = 0.0f;
    if (threadIdx.x < 16)
        tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 16) % blockDim.x];
}

extern "C" __global__ void ok_block_uniform(const float* in, float* out)
{
    __shared__ float tile[256];
    if (blockIdx.x == 0) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
    }
}

extern "C" __global__ void ok_parameter_condition(const float* in, float* out, int n, int mode)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = in[threadIdx.x];
    if (mode > 1 && n > 128) {
        __syncthreads();
        tile[threadIdx.x] += tile[(threadIdx.x + 1) % blockDim.x];
    }
    out[threadIdx.x] = tile[threadIdx.x];
}

extern "C" __global__ void ok_uniform_loop(const float* in, float* out, int steps)
{
    __shared__ float tile[256];
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        tile[threadIdx.x] = v;
        __syncthreads();
        v = 0.5f * (v + tile[(threadIdx.x + 1) % blockDim.x]);
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void ok_tree_reduction(const float* in, float* out)
{
    extern __shared__ float sdata[];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void ok_block_vote_loop(const int* work, int* out)
{
    int left = work[threadIdx.x];
    int rounds = 0;
    while (__syncthreads_or(left > 0)) {
        left -= 1;
        rounds += 1;
        __syncthreads();
    }
    out[threadIdx.x] = rounds;
}

extern "C" __global__ void ok_shared_broadcast(const float* in, float* out)
{
    __shared__ int go;
    __shared__ float tile[256];
    if (threadIdx.x == 0)
        go = in[blockIdx.x] > 0.0f;
    __syncthreads();
    if (go) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = tile[threadIdx.x ^ 1];
    }
}

extern "C" __global__ void ok_warp_sync(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x < 32) {
        tile[threadIdx.x] = in[threadIdx.x];
        __syncwarp();
        out[threadIdx.x] = tile[31 - threadIdx.x];
    }
}

extern "C" __global__ void ok_named_barrier_subset(const float* in, float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x < 64) {
        tile[threadIdx.x] = in[threadIdx.x];
        asm volatile("bar.sync 1, 64;");
        out[threadIdx.x] = tile[63 - threadIdx.x];
    }
}

extern "C" __global__ void ok_helpers_uniform(const float* in, float* out, int n)
{
    __shared__ float tile[256];
    float v = in[threadIdx.x];
    if (n > 0) {
        v = stage_through_shared(tile, v);
        publish_and_wait(tile, v);
    }
    out[threadIdx.x] = v;
}
