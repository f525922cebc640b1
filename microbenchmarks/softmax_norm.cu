// Row-wise normalisations of a rows x cols matrix: softmax (one warp per row; one block per row),
// layer norm and RMS norm (one warp per row). Blocks of 256 threads.
#include "common.cuh"

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

KERNEL void softmax_warp_row(const float* in, float* out, int rows, int cols) {
    int row = global_id() / 32;
    if (row >= rows) return;
    const float* x = in + (long)row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int k = lane_id(); k < cols; k += 32) m = fmaxf(m, x[k]);
    m = warp_max(m);
    for (int k = lane_id(); k < cols; k += 32) s += __expf(x[k] - m);
    s = warp_sum(s);
    for (int k = lane_id(); k < cols; k += 32) out[(long)row * cols + k] = __expf(x[k] - m) / s;
}

KERNEL void softmax_block_row(const float* in, float* out, int rows, int cols) {
    __shared__ float red[32];
    int row = blockIdx.x;
    if (row >= rows) return;
    const float* x = in + (long)row * cols;
    float m = -INFINITY;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) m = fmaxf(m, x[k]);
    m = warp_max(m);
    if (lane_id() == 0) red[threadIdx.x / 32] = m;
    __syncthreads();
    m = lane_id() < blockDim.x / 32 ? red[lane_id()] : -INFINITY;
    m = warp_max(m);
    __syncthreads();
    float s = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) s += expf(x[k] - m);
    s = warp_sum(s);
    if (lane_id() == 0) red[threadIdx.x / 32] = s;
    __syncthreads();
    s = lane_id() < blockDim.x / 32 ? red[lane_id()] : 0.0f;
    s = warp_sum(s);
    for (int k = threadIdx.x; k < cols; k += blockDim.x) out[(long)row * cols + k] = expf(x[k] - m) / s;
}

KERNEL void layernorm_warp_row(const float* in, const float* gamma, float* out, int rows, int cols) {
    int row = global_id() / 32;
    if (row >= rows) return;
    const float* x = in + (long)row * cols;
    float s = 0.0f, q = 0.0f;
    for (int k = lane_id(); k < cols; k += 32) {
        s += x[k];
        q += x[k] * x[k];
    }
    s = warp_sum(s);
    q = warp_sum(q);
    float mean = s / cols, inv = rsqrtf(fmaxf(q / cols - mean * mean, 0.0f) + 1e-5f);
    for (int k = lane_id(); k < cols; k += 32) out[(long)row * cols + k] = (x[k] - mean) * inv * gamma[k];
}

KERNEL void rmsnorm_warp_row(const float* in, const float* gamma, float* out, int rows, int cols) {
    int row = global_id() / 32;
    if (row >= rows) return;
    const float* x = in + (long)row * cols;
    float q = 0.0f;
    for (int k = lane_id(); k < cols; k += 32) q += x[k] * x[k];
    float inv = rsqrtf(warp_sum(q) / cols + 1e-6f);
    for (int k = lane_id(); k < cols; k += 32) out[(long)row * cols + k] = x[k] * inv * gamma[k];
}
