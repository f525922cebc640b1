// Parse-throughput benchmark input (compiled once, sm_90, no debug flags).
// A long 1-D FIR filter whose taps are expanded by the preprocessor into
// straight-line code: every tap is an independent load of the signal, a load
// of the coefficient and an FMA into one of four accumulators, giving one
// basic block of more than 25,000 PTX lines. (A `#pragma unroll` loop this
// long is only partially unrolled by nvcc, and template recursion works but
// takes several minutes to compile.)
// See loops.cu for the KERNEL / TRIP annotation format.

#define TAP(k) acc[(k) & 3] = fmaf(s[(k)], t[(k)], acc[(k) & 3]);
#define TAP4(k) TAP(k) TAP((k) + 1) TAP((k) + 2) TAP((k) + 3)
#define TAP16(k) TAP4(k) TAP4((k) + 4) TAP4((k) + 8) TAP4((k) + 12)
#define TAP64(k) TAP16(k) TAP16((k) + 16) TAP16((k) + 32) TAP16((k) + 48)
#define TAP256(k) TAP64(k) TAP64((k) + 64) TAP64((k) + 128) TAP64((k) + 192)
#define TAP1024(k) TAP256(k) TAP256((k) + 256) TAP256((k) + 512) TAP256((k) + 768)
#define TAP4096(k) TAP1024(k) TAP1024((k) + 1024) TAP1024((k) + 2048) TAP1024((k) + 3072)

// KERNEL unrolled_fir_8704: 8704-tap FIR filter (2 x 4096 + 512 taps) expanded into straight-line code, no loops.
// TRIP: no loops; 8704 taps x (2 loads + 1 FMA) per thread in a single basic block.
extern "C" __global__ void unrolled_fir_8704(const float *__restrict__ signal, const float *__restrict__ taps,
                                             float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float *__restrict__ s = signal + i;
    const float *__restrict__ t = taps;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    TAP4096(0)
    TAP4096(4096)
    TAP256(8192)
    TAP256(8448)
    out[i] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
