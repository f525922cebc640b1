// Statically sized __shared__ memory: tiled transpose with padding,
// a deliberately bank-conflicted access pattern, a tree reduction whose trip
// count is log2(blockDim.x), and a 1-D stencil with halo cells.
// Kernels here are plain C++ (mangled names) on purpose.
// See loops.cu for the KERNEL / TRIP annotation format.

#define TILE 32
#define ROWS_PER_PASS 8

// KERNEL shared_transpose_tile: 32x32 tiled matrix transpose through a padded [32][33] shared tile; launch with blockDim (32, 8).
// TRIP: load loop and store loop each TILE/blockDim.y = 4 iterations per thread (for blockDim.y == 8).
__global__ void shared_transpose_tile(const float *__restrict__ in, float *__restrict__ out, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// KERNEL shared_bank_conflict: strided shared-memory reads with a runtime stride (stride 32 => 32-way bank conflicts); launch with 256 threads.
// TRIP: rounds iterations per thread.
__global__ void shared_bank_conflict(const float *__restrict__ in, float *__restrict__ out, int stride, int rounds)
{
    __shared__ float buf[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x)
        buf[i] = in[blockIdx.x * 1024 + i];
    __syncthreads();
    float acc = 0.0f;
    unsigned idx = threadIdx.x * stride;
    for (int r = 0; r < rounds; ++r) {
        acc += buf[idx & 1023];
        idx += 1;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// KERNEL shared_block_reduce: block sum with a shared-memory tree; blockDim.x must be a power of two <= 1024.
// TRIP: grid-stride load loop ceil((n-gid)/(blockDim.x*gridDim.x)); tree loop log2(blockDim.x) iterations per thread.
__global__ void shared_block_reduce(const float *__restrict__ in, float *__restrict__ block_sums, int n)
{
    __shared__ float s[1024];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = s[0];
}

// KERNEL shared_stencil_1d: 7-point 1-D stencil with RADIUS=3 halo cells staged in shared memory; blockDim.x == 256.
// TRIP: stencil loop 2*RADIUS+1 = 7 iterations (unrolled).
#define RADIUS 3
#define BLOCK 256
__global__ void shared_stencil_1d(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float s[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        s[l - RADIUS] = g >= RADIUS ? in[g - RADIUS] : 0.0f;
        s[l + BLOCK] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
    }
    __syncthreads();
    if (g >= n)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k)
        acc += s[l + k];
    out[g] = acc / (2 * RADIUS + 1);
}
