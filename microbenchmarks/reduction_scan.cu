// Reductions and scans: shared-memory tree, warp-shuffle, atomic-finish reductions; block-level
// inclusive scans (Hillis-Steele in shared memory, warp shuffles); stream compaction with ballots.
// `in` holds n floats; blocks of 256 threads (a power of two, at most 1024) unless stated.
#include "common.cuh"

KERNEL void reduce_smem_tree(const float* in, float* out, int n) {
    __shared__ float buf[1024];
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) s += in[i];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) buf[threadIdx.x] += buf[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

KERNEL void reduce_warp_shuffle(const float* in, float* out, int n) {
    __shared__ float partial[32];
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) s += in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane_id() == 0) partial[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) out[blockIdx.x] = s;
    }
}

KERNEL void reduce_atomic(const float* in, float* out, int n) {
    float s = 0.0f;
    for (int i = global_id(); i < n; i += global_threads()) s += in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane_id() == 0) atomicAdd(out, s);
}

// Inclusive scan of each block's chunk of blockDim.x elements (grid-stride over chunks).
KERNEL void scan_hillis_steele(const float* in, float* out, int n) {
    __shared__ float buf[2][1024];
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x, src = 0;
        buf[0][threadIdx.x] = i < n ? in[i] : 0.0f;
        __syncthreads();
        for (int o = 1; o < blockDim.x; o <<= 1) {
            float v = buf[src][threadIdx.x];
            if (threadIdx.x >= o) v += buf[src][threadIdx.x - o];
            buf[src ^ 1][threadIdx.x] = v;
            src ^= 1;
            __syncthreads();
        }
        if (i < n) out[i] = buf[src][threadIdx.x];
        __syncthreads();
    }
}

KERNEL void scan_warp_shuffle(const float* in, float* out, int n) {
    __shared__ float sums[32];
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        float v = i < n ? in[i] : 0.0f;
        for (int o = 1; o < 32; o <<= 1) {
            float u = __shfl_up_sync(0xffffffffu, v, o);
            if (lane_id() >= o) v += u;
        }
        if (lane_id() == 31) sums[threadIdx.x / 32] = v;
        __syncthreads();
        if (threadIdx.x < 32) {
            float w = threadIdx.x < blockDim.x / 32 ? sums[threadIdx.x] : 0.0f;
            for (int o = 1; o < 32; o <<= 1) {
                float u = __shfl_up_sync(0xffffffffu, w, o);
                if (lane_id() >= o) w += u;
            }
            sums[threadIdx.x] = w;
        }
        __syncthreads();
        if (threadIdx.x >= 32) v += sums[threadIdx.x / 32 - 1];
        if (i < n) out[i] = v;
        __syncthreads();
    }
}

// Keeps the elements above `threshold`, in order within each warp; counts[warp] = kept elements.
// out holds n floats, counts one int per warp of the launch.
KERNEL void compact_ballot(const float* in, float* out, int* counts, int n, float threshold) {
    int warp = global_id() / 32, kept = 0;
    for (int base = warp * 32; base < n; base += global_threads()) {
        int i = base + lane_id();
        bool keep_it = i < n && in[i] > threshold;
        unsigned mask = __ballot_sync(0xffffffffu, keep_it);
        if (keep_it) out[base + __popc(mask & ((1u << lane_id()) - 1))] = in[i];
        kept += __popc(mask);
    }
    if (lane_id() == 0) counts[warp] = kept;
}
