// Kernels for rule PS101 (uncoalesced global accesses).
// A line marked "expect: PS101" is where the rule must report (the figures are derived in
// tests/rules/test_rule_ps101.py); kernels named ok_* must stay silent.
// Launch used by the tests: the default launch (blocks of 32 x 4 threads, 32-bit and 64-bit integer
// arguments 1024) unless a test says otherwise.

#define N 1024

struct Particle { float x, y, z, w; };
struct __align__(16) AlignedParticle { float x, y, z, w; };

// ------------------------------------------------------------------------------------- must report

// Column sums of an N x N row-major matrix: lane k reads row k, N * 4 bytes after lane k - 1.
extern "C" __global__ void ps101_column_sum(const float* __restrict__ m, float* __restrict__ out)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int r = 0; r < 2; ++r)
        s += m[col * N + r];  // expect: PS101
    out[col] = s;
}

// Every second float: lanes 8 bytes apart.
extern "C" __global__ void ps101_stride2(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[2 * i];  // expect: PS101
}

// Array of structures: one field of a 16-byte struct per lane, read and written.
extern "C" __global__ void ps101_aos_field(Particle* p, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i].x = p[i].x + dt;  // expect: PS101
}

// A column whose pitch is an argument: reported when the launch in the configuration gives the pitch.
extern "C" __global__ void ps101_column_pitch(const float* __restrict__ m, float* __restrict__ out, int pitch)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    out[col] = m[col * pitch];  // expect: PS101
}

// A texture fetch, which the emulator does not model, stops the emulation before the store: its figures are
// estimated from the affine stride of its address (32 floats = 128 bytes between lanes).
extern "C" __global__ void ps101_after_texture(cudaTextureObject_t t, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = tex1Dfetch<float>(t, i);
    out[i * 32] = v;  // expect: PS101
}

// A strided index folded into a buffer by a mask, both arguments: lanes `stride` elements apart for any mask
// that keeps the index's low bits (the made-up mask of the default launch would fold them together).
extern "C" __global__ void ps101_masked_stride(const float* __restrict__ in, float* __restrict__ out, int mask,
                                               int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[(i * stride) & mask];  // expect: PS101
}

// A gather and a scatter through an index array: the indices are data, judged as not consecutive unless the
// launch gives them.
extern "C" __global__ void ps101_gather(const int* __restrict__ idx, const float* __restrict__ in,
                                        float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];  // expect: PS101
}

extern "C" __global__ void ps101_scatter(const int* __restrict__ idx, const float* __restrict__ in,
                                         float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[idx[i]] = in[i];  // expect: PS101
}

// ----------------------------------------------------------------------------------- near misses

// Row access: lane k reads the float after lane k - 1.
extern "C" __global__ void ok_row_copy(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

// Only odd threads copy: half the lanes of a 128-byte row, whose 4 sectors a coalesced access also touches.
extern "C" __global__ void ok_odd_threads(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x & 1)
        out[i] = in[i];
}

// Both floats of a pair, by two loads: each touches 8 sectors for 4, but together they use every byte of the
// 8 sectors (L1 serves the second load from the sectors the first one brought).
extern "C" __global__ void ok_pairs(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[2 * i] + in[2 * i + 1];
}

// Misaligned by one float: 5 sectors where 4 would do, below the 2x threshold.
extern "C" __global__ void ok_offset_by_one(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
}

// Every lane reads the same float: one sector, the minimum.
extern "C" __global__ void ok_broadcast(const float* __restrict__ in, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[blockIdx.x] * 2.0f;
}

// Whole 16-byte aligned structures: one 16-byte vector access per lane, 16 sectors, the minimum for 512 bytes.
extern "C" __global__ void ok_aos_whole(AlignedParticle* p, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    AlignedParticle q = p[i];
    q.x += dt * q.w;
    q.y += dt * q.w;
    q.z += dt * q.w;
    p[i] = q;
}

// Doubles, one per lane: 8 sectors, the minimum for 256 bytes.
extern "C" __global__ void ok_double_row(const double* __restrict__ in, double* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0 * in[i];
}

// A 2-D tile read along rows (threadIdx.x) and written along rows of the output.
extern "C" __global__ void ok_tile_rows(const float* __restrict__ in, float* __restrict__ out, int width)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    out[y * width + x] = in[y * width + x] + 1.0f;
}

// A grid-stride loop: coalesced in every iteration.
extern "C" __global__ void ok_grid_stride(const float* __restrict__ in, float* __restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] * 0.5f;
}

// An index masked with an argument (a ring buffer): coalesced for any mask that keeps the low bits.
extern "C" __global__ void ok_ring(const float* __restrict__ in, float* __restrict__ out, int mask)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i & mask];
}

// Stream compaction by ballot: the kept lanes of a warp write consecutive slots after a warp-wide offset.
extern "C" __global__ void ok_compact(const float* __restrict__ in, float* __restrict__ out, float threshold)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = in[i];
    unsigned kept = __ballot_sync(0xffffffffu, v > threshold);
    if (v > threshold)
        out[(i - lane) + __popc(kept & ((1u << lane) - 1))] = v;
}
