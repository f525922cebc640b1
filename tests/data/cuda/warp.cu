// Warp-level primitives: shuffles (idx, up, down, xor butterfly), votes
// (__ballot_sync, __any_sync, __all_sync), __activemask inside divergent
// code, __match_any_sync (sm_70+) and __reduce_add_sync (sm_80+, with a
// shuffle fallback for older targets).
// See loops.cu for the KERNEL / TRIP annotation format.

#define FULL_MASK 0xffffffffu

// KERNEL warp_broadcast_lane0: __shfl_sync broadcast of lane 0's value to the whole warp.
extern "C" __global__ void warp_broadcast_lane0(const float *__restrict__ in, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    float first = __shfl_sync(FULL_MASK, v, 0);
    out[i] = v - first;
}

// KERNEL warp_reduce_down: warp sum with __shfl_down_sync; lane 0 writes one value per warp.
// TRIP: offset loop 5 iterations (16, 8, 4, 2, 1), fully unrolled.
extern "C" __global__ void warp_reduce_down(const float *__restrict__ in, float *__restrict__ warp_sums)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    if ((threadIdx.x & 31) == 0)
        warp_sums[i / 32] = v;
}

// KERNEL warp_butterfly_max: xor-butterfly all-reduce (max) so every lane gets the warp maximum, not unrolled.
// TRIP: mask loop 5 iterations per thread (#pragma unroll 1 keeps it a loop).
extern "C" __global__ void warp_butterfly_max(const int *__restrict__ in, int *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
#pragma unroll 1
    for (int mask = 1; mask < 32; mask <<= 1)
        v = max(v, __shfl_xor_sync(FULL_MASK, v, mask));
    out[i] = v;
}

// KERNEL warp_inclusive_scan_up: warp-level inclusive prefix sum with __shfl_up_sync.
// TRIP: 5 iterations (unrolled).
extern "C" __global__ void warp_inclusive_scan_up(const int *__restrict__ in, int *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d)
            v += up;
    }
    out[i] = v;
}

// KERNEL warp_vote_compact: stream compaction within a warp using __ballot_sync + __popc; __any_sync / __all_sync flags.
extern "C" __global__ void warp_vote_compact(const float *__restrict__ in, float *__restrict__ out,
                                             int *__restrict__ warp_counts, int *__restrict__ warp_flags,
                                             float threshold)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = i / 32;
    float v = in[i];
    bool keep = v > threshold;
    unsigned ballot = __ballot_sync(FULL_MASK, keep);
    int pos = __popc(ballot & ((1u << lane) - 1));
    if (keep)
        out[warp * 32 + pos] = v;
    int any_neg = __any_sync(FULL_MASK, v < 0.0f);
    int all_fin = __all_sync(FULL_MASK, isfinite(v));
    if (lane == 0) {
        warp_counts[warp] = __popc(ballot);
        warp_flags[warp] = any_neg | (all_fin << 1);
    }
}

// KERNEL warp_activemask_divergent: __activemask() inside a divergent branch counts the lanes that took it.
extern "C" __global__ void warp_activemask_divergent(const int *__restrict__ key, int *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r;
    if (key[i] & 1) {
        unsigned m = __activemask();
        r = __popc(m);
    } else {
        unsigned m = __activemask();
        r = -__popc(m) - __ffs(m);
    }
    out[i] = r;
}

// KERNEL warp_match_groups: __match_any_sync groups lanes with equal keys; the group leader aggregates with one atomic.
extern "C" __global__ void warp_match_groups(const int *__restrict__ key, int *__restrict__ counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = key[i];
    unsigned peers = __match_any_sync(FULL_MASK, k);
    int leader = __ffs(peers) - 1;
    if ((threadIdx.x & 31) == leader)
        atomicAdd(&counts[k & 255], __popc(peers));
}

// KERNEL warp_reduce_add_sync: integer warp reduction with __reduce_add_sync on sm_80+ (redux.sync), shuffle tree otherwise.
extern "C" __global__ void warp_reduce_add_sync(const unsigned *__restrict__ in, unsigned *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned s = __reduce_add_sync(FULL_MASK, v);
    unsigned mx = __reduce_max_sync(FULL_MASK, v);
#else
    unsigned s = v, mx = v;
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(FULL_MASK, s, o);
        mx = max(mx, __shfl_xor_sync(FULL_MASK, mx, o));
    }
#endif
    if ((threadIdx.x & 31) == 0)
        out[i / 32] = s ^ mx;
}
