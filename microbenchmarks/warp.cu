// Warp-level primitives: shuffles (xor, down, up, indexed), votes, match, redux, activemask.
// Signature: (out, n, iters, seed); blocks are whole warps.
#include "common.cuh"

KERNEL void warp_shfl_xor_reduce(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed, s = 0.0f;
    for (int k = 0; k < iters; ++k) {
        float v = x + k;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        s += v;
    }
    keep(out, n, s);
}

KERNEL void warp_shfl_down(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed;
    for (int k = 0; k < iters; ++k) x = x * 0.5f + __shfl_down_sync(0xffffffffu, x, 1 + (k & 15));
    keep(out, n, x);
}

KERNEL void warp_shfl_up_scan(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f + seed, s = 0.0f;
    for (int k = 0; k < iters; ++k) {
        float v = x + k;
        for (int o = 1; o < 32; o <<= 1) {
            float u = __shfl_up_sync(0xffffffffu, v, o);
            if (lane_id() >= o) v += u;
        }
        s += v * 1e-3f;
    }
    keep(out, n, s);
}

KERNEL void warp_shfl_idx(float* out, int n, int iters, int seed) {
    float x = global_id() * 1e-3f;
    for (int k = 0; k < iters; ++k) x = __shfl_sync(0xffffffffu, x, (lane_id() * 7 + k + seed) & 31) * 0.999f + 1e-3f;
    keep(out, n, x);
}

KERNEL void warp_ballot(unsigned* out, int n, int iters, int seed) {
    unsigned h = global_id() * 2654435761u + seed, s = 0;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        s += __popc(__ballot_sync(0xffffffffu, h & 0x80000000u));
    }
    keep(out, n, s);
}

KERNEL void warp_any_all(unsigned* out, int n, int iters, int seed) {
    unsigned h = global_id() * 2654435761u + seed, s = 0;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        s += __any_sync(0xffffffffu, (h >> 28) == 0) + 2 * __all_sync(0xffffffffu, (h >> 31) == 0);
    }
    keep(out, n, s);
}

KERNEL void warp_match_any(unsigned* out, int n, int iters, int seed) {
    unsigned h = global_id() * 2654435761u + seed, s = 0;
    for (int k = 0; k < iters; ++k) {
        h = h * 1664525u + 1013904223u;
        s += __popc(__match_any_sync(0xffffffffu, h >> 29));
    }
    keep(out, n, s);
}

KERNEL void warp_redux_add(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() + seed, s = 0;
    for (int k = 0; k < iters; ++k) {
        s += __reduce_add_sync(0xffffffffu, x + k);
        x ^= s;
    }
    keep(out, n, s);
}

KERNEL void warp_activemask(unsigned* out, int n, int iters, int seed) {
    unsigned s = seed;
    for (int k = 0; k < iters; ++k)
        if (((lane_id() + k) & 3) != 0) s += __popc(__activemask());
    keep(out, n, s);
}
