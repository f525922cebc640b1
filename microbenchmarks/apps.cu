// Application-shaped kernels: all-pairs n-body with shared-memory tiles, Mandelbrot (data-dependent
// loop exits, divergence), Black-Scholes (special functions), sparse matrix-vector product in ELL
// format with random columns, and k-means assignment.
#include "common.cuh"

// pos: n float4 (x, y, z, mass); acc: n float4. Blocks of exactly 256 threads; n a multiple of 256.
KERNEL void nbody_tiled(const float4* pos, float4* acc, int n) {
    __shared__ float4 tile[256];
    int i = global_id();
    float4 p = i < n ? pos[i] : make_float4(0, 0, 0, 0);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int t = 0; t < n; t += 256) {
        tile[threadIdx.x] = pos[t + threadIdx.x];
        __syncthreads();
#pragma unroll 8
        for (int j = 0; j < 256; ++j) {
            float4 q = tile[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + 1e-4f);
            float f = q.w * inv * inv * inv;
            ax += f * dx;
            ay += f * dy;
            az += f * dz;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.0f);
}

// A width x height image of escape counts; blocks of 16x16 threads.
KERNEL void mandelbrot(int* out, int width, int height, int max_iter) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float cr = -2.0f + 2.5f * x / width, ci = -1.25f + 2.5f * y / height, zr = 0.0f, zi = 0.0f;
    int k = 0;
    while (k < max_iter && zr * zr + zi * zi < 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++k;
    }
    out[y * width + x] = k;
}

__device__ __forceinline__ float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f, a5 = 1.330274429f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = 0.3989422804f * __expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0f - c : c;
}

// price, strike, years: n random values in [0, 1) (shifted into sensible ranges here).
KERNEL void black_scholes(const float* price, const float* strike, const float* years, float* call, float* put,
                          int n, float rate, float vol) {
    for (int i = global_id(); i < n; i += global_threads()) {
        float s = 10.0f + 90.0f * price[i], x = 10.0f + 90.0f * strike[i], t = 0.25f + 4.0f * years[i];
        float sq = sqrtf(t), d1 = (__logf(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sq), d2 = d1 - vol * sq;
        float e = __expf(-rate * t);
        call[i] = s * cnd(d1) - x * e * cnd(d2);
        put[i] = x * e * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
    }
}

// ELL: rows x width values and column indices (hashed into [0, cols)); x holds cols floats.
KERNEL void spmv_ell(const float* values, const int* columns, const float* x, float* y, int rows, int width,
                     int cols) {
    for (int r = global_id(); r < rows; r += global_threads()) {
        float s = 0.0f;
        for (int j = 0; j < width; ++j) {
            long e = (long)j * rows + r;
            s += values[e] * x[scramble(columns[e]) % cols];
        }
        y[r] = s;
    }
}

// points: n x 4 floats; centroids: k x 4 floats (k <= 256); label[i] = nearest centroid.
KERNEL void kmeans_assign(const float4* points, const float4* centroids, int* label, int n, int k) {
    __shared__ float4 c[256];
    for (int j = threadIdx.x; j < k; j += blockDim.x) c[j] = centroids[j];
    __syncthreads();
    for (int i = global_id(); i < n; i += global_threads()) {
        float4 p = points[i];
        float best = INFINITY;
        int arg = 0;
        for (int j = 0; j < k; ++j) {
            float dx = p.x - c[j].x, dy = p.y - c[j].y, dz = p.z - c[j].z, dw = p.w - c[j].w;
            float d = dx * dx + dy * dy + dz * dz + dw * dw;
            if (d < best) {
                best = d;
                arg = j;
            }
        }
        label[i] = arg;
    }
}
