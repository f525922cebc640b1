// Small kernels whose PTX is checked by hand in tests/test_frontend_handchecked.py.

// One loop with a trip count from a parameter; a guard before it.
extern "C" __global__ void row_sum(const float* __restrict__ in, float* out, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
        s += in[row * n + j];
    }
    out[row] = s;
}

// Two nested loops; the inner one reads shared memory.
extern "C" __global__ void nested(float* a, int n, int m) {
    __shared__ float tile[64];
    tile[threadIdx.x % 64] = a[threadIdx.x];
    __syncthreads();
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < m; ++j) {
            acc += tile[(i + j) % 64];
        }
    }
    a[threadIdx.x] = acc;
}

// A divergent if/else on the thread index and an early exit.
extern "C" __global__ void branchy(int* out, int limit) {
    int t = threadIdx.x;
    if (t >= limit) return;
    if (t & 1) {
        out[t] = t * 3;
    } else {
        out[t] = t + 7;
    }
}
