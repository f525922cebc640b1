// Inline asm with registers declared without '%' inside a { } scope and used in a d|p destination pair,
// as Thrust/CUB and several CUDA samples write warp scans. nvcc copies the asm into the PTX unchanged.
// PTX: inline_asm_scopes_sm80.ptx (PWD=/proc/self/cwd nvcc -ptx -arch=sm_80 -lineinfo from the repository root,
// the .file path then made repository-relative as tests/data/fixtures/regenerate.py does).

// Inclusive warp scan: shfl.sync.up with a lane-valid predicate, a named register and a named predicate.
extern "C" __global__ void warp_scan_named_regs(const unsigned* in, unsigned* out) {
    unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = 1; offset < 32; offset *= 2) {
        asm volatile(
            "{\n\t"
            ".reg .u32 r0;\n\t"
            ".reg .pred p;\n\t"
            "shfl.sync.up.b32 r0|p, %1, %2, 0, -1;\n\t"
            "@p add.u32 r0, r0, %1;\n\t"
            "mov.u32 %0, r0;\n\t"
            "}"
            : "=r"(v)
            : "r"(v), "r"(offset));
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Butterfly maximum with the pair's predicate unused after the shuffle, and a register named like a label.
extern "C" __global__ void warp_max_named_regs(const int* in, int* out) {
    int v = in[threadIdx.x];
    for (int mask = 16; mask > 0; mask >>= 1) {
        asm volatile(
            "{\n\t"
            ".reg .s32 lo;\n\t"
            ".reg .pred valid;\n\t"
            "shfl.sync.bfly.b32 lo|valid, %1, %2, 31, -1;\n\t"
            "max.s32 %0, %1, lo;\n\t"
            "}"
            : "=r"(v)
            : "r"(v), "r"(mask));
    }
    out[threadIdx.x] = v;
}
