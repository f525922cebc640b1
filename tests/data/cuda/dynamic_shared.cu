// Dynamically sized shared memory (extern __shared__): a Hillis-Steele scan,
// one buffer carved into two typed arrays, and a templated kernel that views
// the same raw byte buffer as T.
// See loops.cu for the KERNEL / TRIP annotation format.

// KERNEL dyn_shared_scan: inclusive Hillis-Steele prefix sum of one block; launch with blockDim.x*sizeof(float) bytes of dynamic shared memory.
// TRIP: offset loop log2(blockDim.x) iterations per thread (rounded up for non powers of two).
extern "C" __global__ void dyn_shared_scan(const float *__restrict__ in, float *__restrict__ out, int n)
{
    extern __shared__ float buf[];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = g < n ? in[g] : 0.0f;
    __syncthreads();
    for (unsigned offset = 1; offset < blockDim.x; offset <<= 1) {
        float add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0.0f;
        __syncthreads();
        buf[threadIdx.x] += add;
        __syncthreads();
    }
    if (g < n)
        out[g] = buf[threadIdx.x];
}

// KERNEL dyn_shared_split: one dynamic buffer split into an int key array and a float value array (blockDim.x * 8 bytes); each thread counts smaller keys.
// TRIP: rank loop blockDim.x iterations per thread.
extern "C" __global__ void dyn_shared_split(const int *__restrict__ keys, const float *__restrict__ vals,
                                           float *__restrict__ out)
{
    extern __shared__ int smem[];
    int *k = smem;
    float *v = reinterpret_cast<float *>(smem + blockDim.x);
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    k[threadIdx.x] = keys[g];
    v[threadIdx.x] = vals[g];
    __syncthreads();
    int mine = k[threadIdx.x];
    int rank = 0;
    for (unsigned j = 0; j < blockDim.x; ++j)
        rank += (k[j] < mine) || (k[j] == mine && j < threadIdx.x);
    out[blockIdx.x * blockDim.x + rank] = v[threadIdx.x];
}

// KERNEL dyn_shared_reverse: templated in-block reversal through a raw extern __shared__ byte buffer viewed as T (float, double and int instantiations).
template <typename T>
__global__ void dyn_shared_reverse(T *data, int n)
{
    extern __shared__ __align__(16) unsigned char raw[];
    T *s = reinterpret_cast<T *>(raw);
    int base = blockIdx.x * blockDim.x;
    int t = threadIdx.x;
    int len = min((int)blockDim.x, n - base);
    if (t < len)
        s[t] = data[base + t];
    __syncthreads();
    if (t < len)
        data[base + t] = s[len - 1 - t];
}

template __global__ void dyn_shared_reverse<float>(float *, int);
template __global__ void dyn_shared_reverse<double>(double *, int);
template __global__ void dyn_shared_reverse<int>(int *, int);
