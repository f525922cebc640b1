// Switch statements: dense switches (jump-table candidates) and a sparse one.
//
// NVCC-FLAGS: -Xcicc -Xllc,-jump-table-density=10
// nvcc's default jump-table density threshold means it lowers every switch
// in this file to a compare tree; the extra back-end option above (applied
// by tests/data/fixtures/regenerate.py to this file only) lowers the dense ones to
// `brx.idx` with a `.branchtargets` list instead.
// See loops.cu for the KERNEL / TRIP annotation format.
#include <cstdint>

// KERNEL switch_dense_vm: tiny stack-free bytecode interpreter; a dense 16-case switch inside the dispatch loop.
// TRIP: dispatch loop runs ncode times per thread (each thread interprets the same program on its own accumulator).
extern "C" __global__ void switch_dense_vm(const uint8_t *__restrict__ code, int ncode,
                                           const int *__restrict__ init, int *__restrict__ result)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = init[i];
    int aux = i;
    for (int pc = 0; pc < ncode; ++pc) {
        uint8_t op = code[pc];
        switch (op & 15) {
        case 0: acc += 1; break;
        case 1: acc -= 1; break;
        case 2: acc *= 3; break;
        case 3: acc ^= aux; break;
        case 4: acc <<= 1; break;
        case 5: acc >>= 1; break;
        case 6: aux = acc; break;
        case 7: acc = aux - acc; break;
        case 8: acc |= 0x100; break;
        case 9: acc &= 0xffff; break;
        case 10: acc = __popc(acc); break;
        case 11: acc = __brev(acc); break;
        case 12: acc = max(acc, aux); break;
        case 13: acc = min(acc, aux); break;
        case 14: acc = acc * acc; break;
        default: acc = ~acc; break;
        }
    }
    result[i] = acc;
}

// KERNEL switch_dense_calls: dense switch whose arms call different non-inlined device functions (jump-table candidate).
__device__ __noinline__ float op_sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
__device__ __noinline__ float op_relu(float x) { return fmaxf(x, 0.0f); }
__device__ __noinline__ float op_gelu(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }
__device__ __noinline__ float op_softplus(float x) { return log1pf(__expf(x)); }
__device__ __noinline__ float op_silu(float x) { return x / (1.0f + __expf(-x)); }
__device__ __noinline__ float op_tanh(float x) { return tanhf(x); }
__device__ __noinline__ float op_elu(float x) { return x > 0.0f ? x : expm1f(x); }
__device__ __noinline__ float op_square(float x) { return x * x; }

extern "C" __global__ void switch_dense_calls(const int *__restrict__ kind, float *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = v[i];
    switch (kind[i]) {
    case 0: x = op_sigmoid(x); break;
    case 1: x = op_relu(x); break;
    case 2: x = op_gelu(x); break;
    case 3: x = op_softplus(x); break;
    case 4: x = op_silu(x); break;
    case 5: x = op_tanh(x); break;
    case 6: x = op_elu(x); break;
    case 7: x = op_square(x); break;
    default: break;
    }
    v[i] = x;
}

// KERNEL switch_sparse: sparse case values (lowered to a compare tree, not a table).
extern "C" __global__ void switch_sparse(const int *__restrict__ keys, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float r;
    switch (keys[i]) {
    case 1: r = 0.5f; break;
    case 17: r = 1.5f; break;
    case 300: r = -2.0f; break;
    case 4096: r = 8.0f; break;
    case 65537: r = 3.25f; break;
    case -9: r = 0.0f; break;
    default: r = (float)keys[i];
    }
    out[i] = r;
}
