// Kernels for tests/test_emulator_kernels.py. A trailing comment "// @" plus a name tags a line that the tests
// look up (through -lineinfo) to find the basic blocks whose entry counts they check.
// Regenerate the PTX with tests/data/emulator/regenerate.sh.

extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];  // @vec_add_body
    }
}

extern "C" __global__ void saxpy(int n, float alpha, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];  // @saxpy_body
}

// Tree reduction in dynamic shared memory; blockDim.x must be a power of two.
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
    extern __shared__ float sm[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sm[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
#pragma unroll 1
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sm[tid] += sm[tid + s];  // @tree_add
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sm[0];  // @block_sum_store
}

extern "C" __global__ void warp_sum(const int* in, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;  // @warp_sum_store
}

// Butterfly maximum, ballot and a prefix count of the lanes below with a positive value.
extern "C" __global__ void warp_vote(const int* in, int* maxes, unsigned* ballots, int* below) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
    int m = v;
    for (int off = 1; off < 32; off <<= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
    unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
    below[i] = __popc(ballot & ((1u << lane) - 1));
    if (lane == 0) {
        maxes[i / 32] = m;
        ballots[i / 32] = ballot;
    }
}

extern "C" __global__ void histogram(const int* data, int n, unsigned* bins, int nbins) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&bins[data[i] % nbins], 1u);  // @hist_atomic
    }
}

// Per-block histogram in shared memory, flushed with one global atomic per bin; nbins <= 64.
extern "C" __global__ void histogram_shared(const int* data, int n, unsigned* bins, int nbins) {
    __shared__ unsigned local[64];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&local[data[i] % nbins], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

extern "C" __global__ void nested_loops(float* out, int n, int m) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
#pragma unroll 1
        for (int j = 0; j < m; ++j) {
            acc += (float)(i * j + t);  // @nested_inner
        }
    }
    out[t] = acc;
}

// Divergent if/else on the thread index: the "then" side loops over t % 5 inputs.
extern "C" __global__ void divergent(const int* in, int* out) {
    int t = threadIdx.x;
    int r = 0;
    if (t % 3 == 0) {
#pragma unroll 1
        for (int k = 0; k < t % 5; ++k) {
            r += in[k];  // @div_then_loop
        }
    } else {
        r = in[t] * 2 - t;  // @div_else
    }
    out[blockIdx.x * blockDim.x + t] = r;
}

__device__ __noinline__ float poly(float x, int degree) {
    float r = 1.0f;
#pragma unroll 1
    for (int k = 0; k < degree; ++k) {
        r = r * x + 1.0f;  // @poly_loop
    }
    return r;
}

// A device-function call under a guard, with a per-lane trip count inside the callee.
extern "C" __global__ void call_poly(const float* x, float* y, int n, int degree) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = poly(x[i], degree + (i & 1));
}

extern "C" __global__ void grid_stride(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = 2.0f * x[i] + 1.0f;  // @grid_stride_body
    }
}

extern "C" __global__ void early_return(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    if (v < 0) {
        out[i] = -1;  // @early_negative
        return;
    }
    int s = 0;
#pragma unroll 1
    for (int k = 0; k < v; ++k) {
        s += k * k;  // @early_loop
    }
    out[i] = s;
}

// A per-thread array indexed at run time lives in local memory.
extern "C" __global__ void local_array(const int* idx, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int buf[16];
#pragma unroll 1
    for (int k = 0; k < 16; ++k) buf[k] = k * k + t;
    out[t] = buf[idx[t] & 15];
}

__constant__ float coeffs[4];
__device__ unsigned long long total;

// Constant memory and a module-scope __device__ variable updated with a 64-bit atomic.
extern "C" __global__ void constants(const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    y[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0];
    atomicAdd(&total, (unsigned long long)i);
}
