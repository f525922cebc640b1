// Ten kernels of different kinds for the HTML report and its speed benchmark: memory-bound streams,
// compute-bound chains, loops (nested, with shared memory and barriers), atomics and one barrier under a
// thread-dependent condition (PS201) so that the report has a finding to show.

extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

extern "C" __global__ void stream_copy(const float4* in, float4* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i];
}

extern "C" __global__ void fma_chain(float* out, int iters)
{
    float a = threadIdx.x, b = 1.0001f, c = 0.5f;
    for (int i = 0; i < iters; ++i) {
        a = fmaf(a, b, c);
        c = fmaf(c, b, a);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + c;
}

extern "C" __global__ void block_sum(const float* in, float* out, int n)
{
    __shared__ float partial[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int n)
{
    __shared__ float ta[16][16], tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / 16; ++t) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + t * 16 + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(t * 16 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

extern "C" __global__ void histogram(const unsigned char* data, unsigned* bins, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i]], 1u);
}

extern "C" __global__ void transpose(const float* in, float* out, int width, int height)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < width && y < height)
        tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < height && y < width)
        out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void stencil_1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 3 || i >= n - 3)
        return;
    float sum = 0.0f;
    for (int k = -3; k <= 3; ++k)
        sum += in[i + k] * (1.0f / 7.0f);
    out[i] = sum;
}

extern "C" __global__ void sfu_mix(float* out, int iters)
{
    float v = threadIdx.x * 1e-3f;
    for (int i = 0; i < iters; ++i)
        v = __sinf(v) + __expf(-v) + rsqrtf(v + 1.0f);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void tail_barrier(const float* in, float* out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        tile[threadIdx.x] = in[i];
        __syncthreads();  // under a thread-dependent condition: PS201
        out[i] = tile[blockDim.x - 1 - threadIdx.x];
    }
}
