// Kernels for the precision rules: PS401 (float widened to double and back) and PS402 (fp64 work on a GPU
// with weak fp64). A line marked "expect: PS4nn" is where the rule must report; kernels named ok_* must stay
// silent for PS401. The PS402 marks hold for the GTX Titan X (sm_52, fp64 at 1/32 of fp32); on sm_90 (1/2)
// PS402 reports nothing.
#include <math.h>

// ------------------------------------------------------------------------------------- PS401 must report

// A double literal: x * 2.5 multiplies in double and rounds back to float.
extern "C" __global__ void ps401_double_literal(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.5 + 1.0f;  // expect: PS401
}

// A double literal in a math function's argument: exp() runs in double precision.
extern "C" __global__ void ps401_double_function(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = exp(-in[i] * 0.5);  // expect: PS401, PS402
}

// A double constant in a loop: every iteration converts, divides in double and rounds back.
extern "C" __global__ void ps401_double_in_loop(float* data, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = data[i];
    for (int s = 0; s < steps; ++s)
        x = x / 3.0 + 0.5f;  // expect: PS401, PS402
    data[i] = x;
}

// ------------------------------------------------------------------------------------- PS401 near misses

// Float literals and float functions: no double at all.
extern "C" __global__ void ok_float_literal(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = sinf(in[i]) * 2.5f + 1.0f;
}

// Double data throughout: nothing is narrowed back to float.
extern "C" __global__ void ok_double_kernel(const double* in, double* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = sin(in[i]) * 2.5 + 1.0;  // expect: PS402
}

// A float widened to double and kept as double: stored as double, never narrowed.
extern "C" __global__ void ok_widen_to_store(const float* in, double* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.5;
}

// A deliberate double accumulator over float inputs, rounded to float once at the end.
extern "C" __global__ void ok_double_accumulator(const float* in, float* out, int n)
{
    double acc = 0.0;
    for (int k = threadIdx.x; k < n; k += blockDim.x)
        acc += in[k];
    out[threadIdx.x] = (float)acc;
}

// A float passed through double unchanged (a conversion only, no double arithmetic).
extern "C" __global__ void ok_round_trip(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double d = in[i];
        out[i] = (float)d;
    }
}

// ------------------------------------------------------------------------------------- PS402

// Double-precision Horner steps in a loop: fp64 arithmetic is most of the issue cycles.
extern "C" __global__ void ps402_double_loop(const double* c, double* out, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double x = out[i], y = out[i + 1], acc = 0.0;
    for (int s = 0; s < steps; ++s)
        acc = acc * x + c[s & 15] * y;  // expect: PS402
    out[i] = acc;
}

// The same loop in float, with one double multiply after it: fp64 is a small share of the work.
extern "C" __global__ void ok_float_loop_double_once(const float* c, float* out, double* scaled, int steps,
                                                     double scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = out[i], y = out[i + 1], acc = 0.0f;
    for (int s = 0; s < steps; ++s)
        acc = acc * x + c[s & 15] * y;
    out[i] = acc;
    scaled[i] = acc * scale;
}

// ------------------------------------------------------------------------------------- PS401 at the cause

// nvcc computes 2.0 * k once, before the loop, at the line where k is loaded (a cvt.f64.f32 and an add.f64
// there), and widens acc on the line below: the finding is where the double literal is written, not where
// the compiler moved the conversion.
extern "C" __global__ void ps401_hoisted_literal(const float* in, float* out, int n, int steps, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float c = in[i];
    float k = in[i + n];
    float acc = 0.0f;
    for (int s = 0; s < steps; ++s) {
        float north = in[i + s] - c;
        float south = in[i + s + 1] - c;
        acc += north * south;
        acc = acc * dt + 2.0 * k;  // expect: PS401
    }
    out[i] = acc;
}

// A long polynomial in double literals: many fp64 instructions for one widened float, and no math function.
extern "C" __global__ void ps401_literal_polynomial(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        out[i] = ((((((((((((x * 0.5 + 1.5) * x + 2.5) * x + 3.5) * x + 4.5) * x + 5.5) * x + 6.5) * x + 7.5) * x + 8.5) * x + 9.5) * x + 10.5) * x + 11.5) * x + 12.5) * x + 13.5;  // expect: PS401, PS402
    }
}
