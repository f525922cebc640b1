// Logic, shift and bit-field operations, comparisons and selects.
// Signature: (out, n, iters, seed); out holds n 32-bit ints.
#include "common.cuh"

KERNEL void logic_and_or_xor(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), y = 0x5bd1e995u + seed, z = 0x1b873593u;
    for (int k = 0; k < iters; ++k) {
        asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
        asm volatile("and.b32 %0, %0, %1;" : "+r"(y) : "r"(x));
        asm volatile("or.b32 %0, %0, %1;" : "+r"(y) : "r"(z));
    }
    keep(out, n, x ^ y);
}

KERNEL void logic_shift(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() + 1, s = (seed & 7) + 1;
    for (int k = 0; k < iters; ++k) {
        asm volatile("shl.b32 %0, %0, %1;" : "+r"(x) : "r"(s));
        asm volatile("shr.u32 %0, %0, %1;" : "+r"(x) : "r"(s));
        asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(s));
    }
    keep(out, n, x);
}

KERNEL void logic_lop3(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id(), y = 0xdeadbeefu + seed, z = 0x12345678u;
    for (int k = 0; k < iters; ++k) {
        x = (x & y) ^ (~x & z);
        y = (y | x) ^ z;
    }
    keep(out, n, x ^ y);
}

KERNEL void logic_funnel_shift(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() * 2654435761u, y = 0x9e3779b9u + seed;
    for (int k = 0; k < iters; ++k) {
        x = __funnelshift_l(x, y, 13) ^ y;
        y = __funnelshift_r(y, x, 7) + 1u;
    }
    keep(out, n, x ^ y);
}

KERNEL void logic_bitfield(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() * 2654435761u + seed, f;
    for (int k = 0; k < iters; ++k) {
        asm volatile("bfe.u32 %0, %1, 5, 11;" : "=r"(f) : "r"(x));
        asm volatile("bfi.b32 %0, %1, %0, 17, 11;" : "+r"(x) : "r"(f));
        x += 0x9e3779b9u;
    }
    keep(out, n, x);
}

KERNEL void logic_compare_select(int* out, int n, int iters, int seed) {
    int x = global_id(), y = seed + 1000;
    for (int k = 0; k < iters; ++k) {
        x = (x > y) ? x - y : x + 3 * y;
        y = (y & 1) ? y + 7 : y - 3;
    }
    keep(out, n, x ^ y);
}

KERNEL void logic_byte_perm(unsigned* out, int n, int iters, int seed) {
    unsigned x = global_id() * 2654435761u, y = 0x01234567u + seed;
    for (int k = 0; k < iters; ++k) {
        x = __byte_perm(x, y, 0x5140);
        y = __byte_perm(y, x, 0x7362) + 1u;
    }
    keep(out, n, x ^ y);
}
