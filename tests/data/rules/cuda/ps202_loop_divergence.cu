// Kernels for rule PS202 (a branch on a thread-dependent condition inside a loop).
// A line marked "expect: PS202" is where the rule must report; kernels named ok_* must stay silent.

// ------------------------------------------------------------------------------------- must report

// Odd and even threads take different sides of the if in every iteration.
extern "C" __global__ void ps202_parity_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        if (threadIdx.x & 1)  // expect: PS202
            x = x * 0.5f + s;
        else
            x = __sinf(x) + s;
    }
    data[threadIdx.x] = x;
}

// A trip count that depends on the thread: lanes leave the loop at different iterations.
extern "C" __global__ void ps202_thread_trip_count(float* data)
{
    float x = data[threadIdx.x];
    for (unsigned k = 0; k < threadIdx.x % 16; ++k)  // expect: PS202
        x = x * x + 1.0f;
    data[threadIdx.x] = x;
}

// Iterate until convergence, per element: the number of iterations follows the data each thread loads.
extern "C" __global__ void ps202_data_dependent_while(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i], y = 1.0f;
    while (fabsf(y * y - x) > 1e-3f)  // expect: PS202
        y = 0.5f * (y + x / y);
    out[i] = y;
}

// A data-dependent branch in a grid-stride loop: the loop is fine, the if diverges.
extern "C" __global__ void ps202_branch_in_grid_stride(const float* in, float* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = in[i];
        if (v > 0.0f)  // expect: PS202
            v = sqrtf(v) * 3.0f + __expf(v);
        out[i] = v;
    }
}

// ------------------------------------------------------------------------------------- near misses

// The usual grid-stride loop: threads leave at most one iteration apart.
extern "C" __global__ void ok_grid_stride(const float* in, float* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i] * 2.0f;
}

// A block-stride loop over a row, as in reductions.
extern "C" __global__ void ok_block_stride(const float* in, float* out, int n)
{
    float acc = 0.0f;
    for (int k = threadIdx.x; k < n; k += blockDim.x)
        acc += in[blockIdx.x * n + k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// A uniform trip count with a branch on the loop counter: every thread takes the same path.
extern "C" __global__ void ok_uniform_branch_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        if (s & 1)
            x = x * 0.5f + s;
        else
            x = __sinf(x) + s;
    }
    data[threadIdx.x] = x;
}

// A thread-dependent branch outside any loop.
extern "C" __global__ void ok_divergent_outside_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s)
        x = x * 0.5f + s;
    if (threadIdx.x & 1)
        x = __sinf(x);
    data[threadIdx.x] = x;
}

// A thread-dependent choice inside a loop that the compiler turns into a select, not a branch.
extern "C" __global__ void ok_select_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s)
        x = (threadIdx.x & 1) ? x + s : x - s;
    data[threadIdx.x] = x;
}

// A warp-stride loop over lanes: start at the lane, step by the warp size.
extern "C" __global__ void ok_warp_stride(const float* in, float* out, int n)
{
    unsigned lane = threadIdx.x % 32;
    float acc = 0.0f;
    for (int k = lane; k < n; k += 32)
        acc += in[k];
    out[threadIdx.x] = acc;
}

// A stride of 1 from a thread-dependent start: the lanes of a warp leave at most 31 iterations apart, at
// the end only (a range guard: k < n splits the lanes at one boundary).
extern "C" __global__ void ok_unit_stride_from_thread(float* data, int n)
{
    float acc = 0.0f;
    for (int k = threadIdx.x; k < n; ++k)
        acc += data[k];
    data[threadIdx.x] = acc;
}

// A two-dimensional bounds check inside a loop over tile rows, as in a tiled transpose.
extern "C" __global__ void ok_bounds_check_in_loop(const float* in, float* out, int width, int height)
{
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += blockDim.y)
        if (x < width && y + j < height)
            out[(y + j) * width + x] = in[(y + j) * width + x] * 2.0f;
}

// A tree reduction in shared memory: threadIdx.x < stride leaves whole warps idle, not split ones.
extern "C" __global__ void ok_tree_reduction(const float* in, float* out)
{
    __shared__ float s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

// A branch on the warp index inside a loop: all lanes of a warp agree (blocks of whole warps).
extern "C" __global__ void ok_warp_index_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        if ((threadIdx.x >> 5) & 1)
            x = x * 0.5f + s;
        else
            x = __sinf(x) + s;
    }
    data[threadIdx.x] = x;
}

// The same with a division: warp 0 does extra work every iteration, the other warps skip it.
extern "C" __global__ void ok_first_warp_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        if (threadIdx.x / 32 == 0)
            x = __sinf(x) * __cosf(x) + s;
        x = x * 0.5f;
    }
    data[threadIdx.x] = x;
}

// The lane index, not the warp index: lanes of one warp disagree.
extern "C" __global__ void ps202_lane_parity_in_loop(float* data, int steps)
{
    float x = data[threadIdx.x];
    for (int s = 0; s < steps; ++s) {
        if (((threadIdx.x >> 4) & 1) == 0)  // expect: PS202
            x = x * 0.5f + s;
        else
            x = __sinf(x) + s;
    }
    data[threadIdx.x] = x;
}
