// Kernels whose memory traffic is worked out by hand in tests/traffic/test_traffic_model.py.

// Neighbouring lanes read and write neighbouring floats: 4 sectors a request, nothing read twice.
extern "C" __global__ void row_copy(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

// Each lane walks its own row of a row-major rows x cols matrix: one sector per lane and request; the next
// seven columns of a lane's row are in the sector it already brought.
extern "C" __global__ void column_walk(const float* __restrict__ m, float* __restrict__ sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c)
        s += m[r * cols + c];
    sums[r] = s;
}

// Every lane reads the same element: one sector a request, the vector read once from DRAM.
extern "C" __global__ void broadcast(const float* __restrict__ x, float* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (int j = 0; j < len; ++j)
        s += x[j];
    out[i] = s;
}

// A three-point stencil: the left and right neighbours are in the sectors of the centre's request and its
// neighbours', which L1 holds.
extern "C" __global__ void stencil3(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1)
        out[i] = in[i - 1] + in[i] + in[i + 1];
}
