// C++ templates: kernels instantiated for float, double and int, a kernel
// templated on a compile-time block size, a functor-parameterised transform,
// and a kernel inside a namespace (nested-name mangling).
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

// KERNEL tmpl_axpy: templated grid-stride AXPY, instantiated for float, double and int.
// TRIP: ceil((n - gid) / (blockDim.x * gridDim.x)) iterations per thread.
template <typename T>
__global__ void tmpl_axpy(T a, const T *__restrict__ x, T *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

template __global__ void tmpl_axpy<float>(float, const float *, float *, int);
template __global__ void tmpl_axpy<double>(double, const double *, double *, int);
template __global__ void tmpl_axpy<int>(int, const int *, int *, int);

// KERNEL tmpl_block_sum: block reduction templated on element type and BLOCK (compile-time), instantiated <float,256>, <double,128>, <int,512>.
// TRIP: load loop ceil((n - gid)/(BLOCK*gridDim.x)); tree loop log2(BLOCK) iterations, unrolled (5 for the warp part).
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) tmpl_block_sum(const T *__restrict__ in, T *__restrict__ out, int n)
{
    __shared__ T s[BLOCK];
    T v = T(0);
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x)
        v += in[i];
    s[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = s[0];
}

template __global__ void tmpl_block_sum<float, 256>(const float *, float *, int);
template __global__ void tmpl_block_sum<double, 128>(const double *, double *, int);
template __global__ void tmpl_block_sum<int, 512>(const int *, int *, int);

struct Square {
    __device__ float operator()(float x) const { return x * x; }
};

struct Affine {
    float a, b;
    __device__ float operator()(float x) const { return a * x + b; }
};

struct Clamp {
    int lo, hi;
    __device__ int operator()(int x) const { return x < lo ? lo : (x > hi ? hi : x); }
};

// KERNEL tmpl_transform: element-wise transform parameterised by a functor passed by value (Square, Affine, Clamp).
template <typename T, typename Op>
__global__ void tmpl_transform(const T *__restrict__ in, T *__restrict__ out, int n, Op op)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = op(in[i]);
}

template __global__ void tmpl_transform<float, Square>(const float *, float *, int, Square);
template __global__ void tmpl_transform<float, Affine>(const float *, float *, int, Affine);
template __global__ void tmpl_transform<int, Clamp>(const int *, int *, int, Clamp);

namespace ptxfx {
namespace detail {

// KERNEL ns_scale_u64: kernel in a nested namespace, 64-bit element scaling with wrap-around.
__global__ void ns_scale_u64(uint64_t *v, uint64_t factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= factor;
}

} // namespace detail
} // namespace ptxfx
