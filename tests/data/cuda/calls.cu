// Device-function calls: a __noinline__ helper shared by two kernels, a
// recursive device function, indirect calls through a __device__ table of
// function pointers (PTX .callprototype), a by-value struct argument and
// struct return (byte-array .param), and __forceinline__ for contrast.
// See loops.cu for the KERNEL / TRIP annotation format.

struct Bounds {
    float lo, hi;
};

struct Stats4 {
    float mean, var, mn, mx;
};

// Shared by calls_lerp_clamp and calls_remap_range.
__device__ __noinline__ float lerp_clamp(float a, float b, float t, Bounds bnd)
{
    float v = fmaf(t, b - a, a);
    return fminf(fmaxf(v, bnd.lo), bnd.hi);
}

__device__ __forceinline__ float smoothstep01(float t)
{
    return t * t * (3.0f - 2.0f * t);
}

// KERNEL calls_lerp_clamp: calls the __noinline__ lerp_clamp (struct passed by value as .param .b8 array).
extern "C" __global__ void calls_lerp_clamp(const float *__restrict__ a, const float *__restrict__ b, float t,
                                            float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = lerp_clamp(a[i], b[i], t, Bounds{-1.0f, 1.0f});
}

// KERNEL calls_remap_range: second caller of lerp_clamp, with a __forceinline__ smoothstep in front of it.
extern "C" __global__ void calls_remap_range(float *v, int n, float lo, float hi)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = lerp_clamp(lo, hi, smoothstep01(v[i]), Bounds{lo, hi});
}

// Recursive: exact depth of a binary tree stored as child index arrays (-1 = none).
__device__ __noinline__ int tree_depth(const int *left, const int *right, int node)
{
    if (node < 0)
        return 0;
    int l = tree_depth(left, right, left[node]);
    int r = tree_depth(left, right, right[node]);
    return 1 + (l > r ? l : r);
}

// KERNEL calls_tree_depth: recursive device function (call stack in local memory); one tree root per thread.
// TRIP: recursion depth = height of the tree rooted at roots[i].
extern "C" __global__ void calls_tree_depth(const int *__restrict__ left, const int *__restrict__ right,
                                            const int *__restrict__ roots, int *__restrict__ depth, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        depth[i] = tree_depth(left, right, roots[i]);
}

typedef float (*binop_t)(float, float);

__device__ __noinline__ float op_add(float a, float b) { return a + b; }
__device__ __noinline__ float op_sub(float a, float b) { return a - b; }
__device__ __noinline__ float op_mul(float a, float b) { return a * b; }
__device__ __noinline__ float op_hypot(float a, float b) { return hypotf(a, b); }

__device__ binop_t d_ops[4] = {op_add, op_sub, op_mul, op_hypot};

// KERNEL calls_indirect_ops: per-element operator selected from a __device__ function-pointer table (indirect call via .callprototype).
extern "C" __global__ void calls_indirect_ops(const int *__restrict__ opcode, const float *__restrict__ a,
                                              const float *__restrict__ b, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        binop_t f = d_ops[opcode[i] & 3];
        out[i] = f(a[i], b[i]);
    }
}

__device__ __noinline__ Stats4 window_stats(const float *p, int len)
{
    Stats4 s{0.0f, 0.0f, p[0], p[0]};
    for (int j = 0; j < len; ++j) {
        float x = p[j];
        s.mean += x;
        s.var += x * x;
        s.mn = fminf(s.mn, x);
        s.mx = fmaxf(s.mx, x);
    }
    s.mean /= len;
    s.var = s.var / len - s.mean * s.mean;
    return s;
}

// KERNEL calls_window_stats: C++ (mangled) kernel calling a __noinline__ function that returns a 16-byte struct.
// TRIP: window loop inside window_stats runs len times per thread.
__global__ void calls_window_stats(const float *__restrict__ x, Stats4 *__restrict__ out, int len, int nwin)
{
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < nwin)
        out[w] = window_stats(x + (size_t)w * len, len);
}
