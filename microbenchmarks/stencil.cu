// Stencils: 2-D 5-point and 3-D 7-point Jacobi steps (global memory), a 2-D 5-point step tiled in
// shared memory with halos, and a 1-D 7-tap convolution with the taps in constant memory.
// Grids are nx x ny (x nz) points; boundary points are copied unchanged.
#include "common.cuh"

// Blocks of 32x8 threads covering nx x ny.
KERNEL void stencil2d_5pt(const float* in, float* out, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int i = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

// Blocks of 32x8 threads covering nx x ny; each thread walks z.
KERNEL void stencil3d_7pt(const float* in, float* out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    long plane = (long)nx * ny;
    for (int z = 0; z < nz; ++z) {
        long i = z * plane + (long)y * nx + x;
        if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
            out[i] = in[i];
        } else {
            out[i] = (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]) *
                     (1.0f / 7.0f);
        }
    }
}

// Blocks of exactly 32x8 threads; each block computes a 32x8 tile from a 34x10 shared tile.
KERNEL void stencil2d_smem(const float* in, float* out, int nx, int ny) {
    __shared__ float tile[10][34];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    for (int j = threadIdx.y; j < 10; j += 8)
        for (int k = threadIdx.x; k < 34; k += 32) {
            int gx = min(max(blockIdx.x * 32 + k - 1, 0), nx - 1), gy = min(max(blockIdx.y * 8 + j - 1, 0), ny - 1);
            tile[j][k] = in[gy * nx + gx];
        }
    __syncthreads();
    if (x >= nx || y >= ny) return;
    int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    float v = tile[ty][tx];
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1)
        v = 0.2f * (v + tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]);
    out[y * nx + x] = v;
}

__constant__ float taps[7] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};

KERNEL void conv1d_7tap(const float* in, float* out, int n) {
    for (int i = global_id(); i < n; i += global_threads()) {
        float s = 0.0f;
#pragma unroll
        for (int t = 0; t < 7; ++t) s += taps[t] * in[min(max(i + t - 3, 0), n - 1)];
        out[i] = s;
    }
}
