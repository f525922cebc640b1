// Atomic operations: integer / float / double atomicAdd, a CAS retry loop
// implementing float max, atomicMax / atomicMin on integers, shared-memory
// atomics in a histogram, atomicInc / atomicExch for a ring buffer, and
// block-scoped atomics.
// See loops.cu for the KERNEL / TRIP annotation format.

// KERNEL atomic_histogram256: 256-bin histogram: shared-memory atomicAdd per element, then one global atomicAdd per bin per block.
// TRIP: init and flush loops ceil((256 - threadIdx.x)/blockDim.x); element loop grid-stride ceil((n-gid)/(blockDim.x*gridDim.x)).
extern "C" __global__ void atomic_histogram256(const unsigned char *__restrict__ data, int n,
                                               unsigned int *__restrict__ hist)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b])
            atomicAdd(&hist[b], local[b]);
}

// KERNEL atomic_sum_f32: float sum of an array with one atomicAdd per thread (red.global.add.f32).
extern "C" __global__ void atomic_sum_f32(const float *__restrict__ x, int n, float *sum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, x[i]);
}

// KERNEL atomic_sum_f64: double precision dot product accumulated with atomicAdd on double (native on sm_60+); returns the old value.
extern "C" __global__ void atomic_sum_f64(const double *__restrict__ a, const double *__restrict__ b, int n,
                                          double *sum, double *last_old)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double old = atomicAdd(sum, a[i] * b[i]);
        if (i == n - 1)
            *last_old = old;
    }
}

__device__ float atomic_max_float(float *addr, float value)
{
    int *p = reinterpret_cast<int *>(addr);
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value)
            break;
        old = atomicCAS(p, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

// KERNEL atomic_max_f32_cas: float maximum through an atomicCAS retry loop.
// TRIP: CAS loop runs until it succeeds or sees a larger value (contention dependent, >= 1 iteration).
extern "C" __global__ void atomic_max_f32_cas(const float *__restrict__ x, int n, float *result)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomic_max_float(result, x[i]);
}

// KERNEL atomic_minmax_i32: integer atomicMax / atomicMin (signed and unsigned) and atomicOr of a presence mask.
extern "C" __global__ void atomic_minmax_i32(const int *__restrict__ v, int n, int *mx, int *mn,
                                             unsigned *umx, unsigned *seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = v[i];
    atomicMax(mx, x);
    atomicMin(mn, x);
    atomicMax(umx, (unsigned)x);
    atomicOr(seen, 1u << (x & 31));
}

// KERNEL atomic_ring_push: producers claim ring-buffer slots with a wrapping atomicInc and publish with atomicExch; overwrites of occupied slots (slots start at -1) are counted with atomicAdd / atomicSub.
extern "C" __global__ void atomic_ring_push(unsigned *head, unsigned capacity_minus_1, int *slots,
                                            int *occupied, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned pos = atomicInc(head, capacity_minus_1);
    int prev = atomicExch(&slots[pos], i);
    if (prev >= 0)
        atomicSub(occupied, 1); // the slot was already occupied: net change is 0
    atomicAdd(occupied, 1);
}

// KERNEL atomic_block_scope_count: block-scoped atomicAdd_block on shared memory, and a device-wide compare-and-swap election.
extern "C" __global__ void atomic_block_scope_count(const int *__restrict__ flags, int *per_block, int *leader)
{
    __shared__ int count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    if (flags[blockIdx.x * blockDim.x + threadIdx.x])
        atomicAdd_block(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        per_block[blockIdx.x] = count;
        atomicCAS(leader, -1, (int)blockIdx.x);
    }
}
