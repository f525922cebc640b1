// A barrier under a thread-dependent branch only when WITH_BARRIER is defined: the language-server test
// compiles it with the flags of a compile_commands.json entry that defines it.

extern "C" __global__ void guarded(float* out)
{
    __shared__ float tile[256];
    if (threadIdx.x < 32) {
        tile[threadIdx.x] = out[threadIdx.x];
#ifdef WITH_BARRIER
        __syncthreads();
#endif
        out[threadIdx.x] = tile[31 - threadIdx.x];
    }
}
