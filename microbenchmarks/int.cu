// Integer arithmetic. Chains are written as inline PTX (asm volatile) where the compiler could otherwise
// reassociate or close-form the loop. Signature: (out, n, iters, seed); out holds n 32- or 64-bit ints.
#include "common.cuh"

KERNEL void int_add_chain(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), y = seed;
    for (int k = 0; k < iters; ++k) {
        asm volatile("add.u32 %0, %0, %1;" : "+r"(x) : "r"(y));
        asm volatile("add.u32 %0, %0, %1;" : "+r"(y) : "r"(x));
    }
    keep(out, n, x ^ y);
}

KERNEL void int_mul_chain(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() | 1, a = 2 * seed + 1;
    for (int k = 0; k < iters; ++k) asm volatile("mul.lo.u32 %0, %0, %1;" : "+r"(x) : "r"(a));
    keep(out, n, x);
}

KERNEL void int_mad_chain(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), a = 2 * seed + 1, b = 12345;
    for (int k = 0; k < iters; ++k) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(a), "r"(b));
    keep(out, n, x);
}

KERNEL void int_mul_wide(unsigned long long* out, int n, int iters, int seed) {
    unsigned x = global_id() | 1, a = 2 * seed + 3;
    unsigned long long acc = 0, w;
    for (int k = 0; k < iters; ++k) {
        asm volatile("mul.wide.u32 %0, %1, %2;" : "=l"(w) : "r"(x), "r"(a));
        acc += w;
        x = (unsigned)w ^ (unsigned)(w >> 32);
    }
    keep(out, n, acc);
}

KERNEL void int64_add_chain(unsigned long long* out, int n, int iters, int seed) {
    unsigned long long x = global_id(), y = seed;
    for (int k = 0; k < iters; ++k) {
        asm volatile("add.u64 %0, %0, %1;" : "+l"(x) : "l"(y));
        asm volatile("add.u64 %0, %0, %1;" : "+l"(y) : "l"(x));
    }
    keep(out, n, x ^ y);
}

KERNEL void int64_mul_chain(unsigned long long* out, int n, int iters, int seed) {
    unsigned long long x = global_id() | 1, a = 2ull * seed + 0x100000001ull;
    for (int k = 0; k < iters; ++k) asm volatile("mul.lo.u64 %0, %0, %1;" : "+l"(x) : "l"(a));
    keep(out, n, x);
}

KERNEL void int_div(unsigned* out, int n, int iters, int seed) {
    unsigned x = 0xfffffff0u - global_id(), d = 3 + seed;
    for (int k = 0; k < iters; ++k) x = x / d + 0x7fffffffu;
    keep(out, n, x);
}

KERNEL void int_rem(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), d = 1000003 + seed;
    for (int k = 0; k < iters; ++k) x = (x * 7919u + 17u) % d;
    keep(out, n, x);
}

KERNEL void int_bitcount(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() * 2654435761u + seed;
    for (int k = 0; k < iters; ++k) x = __brev(x) + __popc(x) + __clz(x);
    keep(out, n, x);
}

KERNEL void int_sad(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), y = seed * 77u;
    for (int k = 0; k < iters; ++k) x = __usad(x, y, x + 1u);
    keep(out, n, x);
}

KERNEL void int_minmax(int* out, int n, int iters, int seed) {
    int x = global_id(), lo = -seed - 1000, hi = seed + 1000;
    for (int k = 0; k < iters; ++k) x = min(max(x * 3 - 7, lo), hi);
    keep(out, n, x);
}
