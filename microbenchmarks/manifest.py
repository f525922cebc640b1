"""Writes ``manifest.json``: every microbenchmark kernel with its launches, sized for an H100.

Run ``python microbenchmarks/manifest.py`` after changing a kernel's signature or a size here;
``python microbenchmarks/manifest.py --check`` exits 1 when ``manifest.json`` is out of date.

Sizing. Each launch gets a duration estimate from a two-term roofline of an H100 SXM (132 SMs at a
sustained 1.755 GHz, 128 FP32 lanes per SM per clock, 3.0 TB/s of DRAM bandwidth):
``estimate = lane_ops / (128 * 132 * 1.755e9) + bytes / 3.0e12``, where ``lane_ops`` counts thread
iterations times the cost of one iteration in FP32-FMA equivalents (the ``ops`` of each benchmark: an
SFU operation costs 8, an FP64 FMA 2, a WMMA f16 tile 9, ...). Problem sizes are chosen so that every
estimate lies between 40 µs and 40 ms: long enough that host launch overhead (a few µs) hides behind
the queued kernels, short enough that a one-second sample holds tens of launches or more. The
``repeats`` hint is ``ceil(min_seconds / estimate)``; ``ptxstatic collect`` re-derives the count from
a timed warm-up on the GPU at hand, so the estimates only need to be in the right range.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
MIN_SECONDS = 1.0
LANE_OPS_PER_S = 128 * 132 * 1.755e9
BYTES_PER_S = 3.0e12
BOUNDS_MS = (0.04, 40.0)
FULL = 132 * 8  # blocks of 256 threads that fill an H100 once (2048 threads per SM)


def buf(dtype: str, count: int, fill: str = "zeros", output: bool = False, seed: int = 0) -> dict:
    """A buffer argument in ``Launch.to_dict`` form."""
    return {"dtype": dtype, "count": int(count), "fill": fill, "value": 0.0, "seed": seed, "output": output}


def out(dtype: str, count: int) -> dict:
    return buf(dtype, count, output=True)


def rnd(dtype: str, count: int, seed: int = 1) -> dict:
    return buf(dtype, count, "random", seed=seed)


def keys(count: int) -> dict:
    """Integer keys or indices 0, 1, 2, ...: the kernels hash them, so no fill convention matters."""
    return buf("s32", count, "iota")


BYTES = {"f16": 2, "bf16": 2, "s8": 1, "u8": 1, "f32": 4, "s32": 4, "u32": 4, "f64": 8, "u64": 8}


def launch(grid: int | tuple, block: int | tuple, args: list, ops: float = 0.0, threads_iters: float = 0.0,
           moved: float | None = None, shared: int = 0) -> dict:
    """One launch: args by parameter index; the estimate from ``threads_iters * ops`` lane operations and
    ``moved`` bytes (by default every buffer once)."""
    grid3 = list(grid) + [1] * (3 - len(grid)) if isinstance(grid, tuple) else [grid, 1, 1]
    block3 = list(block) + [1] * (3 - len(block)) if isinstance(block, tuple) else [block, 1, 1]
    if moved is None:
        moved = sum(a["count"] * BYTES[a["dtype"]] for a in args if isinstance(a, dict))
    seconds = threads_iters * ops / LANE_OPS_PER_S + moved / BYTES_PER_S
    ms = seconds * 1e3
    if not BOUNDS_MS[0] <= ms <= BOUNDS_MS[1]:
        raise SystemExit(f"launch estimate {ms:.4f} ms outside {BOUNDS_MS} ms: {grid3} {block3} {args}")
    return {
        "grid": grid3, "block": block3, "shared_bytes": shared, "args": {str(i): a for i, a in enumerate(args)},
        "estimate_ms": round(ms, 4), "repeats": math.ceil(MIN_SECONDS / seconds), "min_seconds": MIN_SECONDS,
    }


def pow2(x: float) -> int:
    return 1 << max(0, round(math.log2(max(x, 1.0))))


BENCHMARKS: list[dict] = []


def bench(name: str, source: str, launches: Iterable[dict], kernel: str | None = None) -> None:
    BENCHMARKS.append({"name": name, "source": source, "kernel": kernel or name, "launches": list(launches)})


# ------------------------------------------------------------------------------------ compute kernels
def compute(name: str, source: str, ops: float, dtype: str = "f32", last: int | None = None,
            block: int = 256) -> None:
    """Kernels ``(out, n, iters, seed)``: one SM's worth of blocks, a full wave, and four waves, with the
    iteration count that makes the full wave take about 2 ms."""
    iters = pow2(2e-3 * LANE_OPS_PER_S / (FULL * 256 * ops))
    launches = []
    for grid in (132 * 256 // block, FULL * 256 // block, 4 * FULL * 256 // block):
        threads = grid * block
        launches.append(launch(grid, block, [out(dtype, threads), threads, iters, 1 if last is None else last],
                               ops, threads * iters))
    bench(name, source, launches)


def swept(name: str, source: str, ops_of, values: Iterable[int], dtype: str = "f32", block: int = 256,
          shared_of=None, target_ms: float = 2.0) -> None:
    """Kernels ``(out, n, iters, P)`` at a full wave, one launch per value of the last parameter P."""
    launches = []
    threads = FULL * 256
    for v in values:
        iters = pow2(target_ms * 1e-3 * LANE_OPS_PER_S / (threads * ops_of(v)))
        launches.append(launch(FULL * 256 // block, block, [out(dtype, threads), threads, iters, v], ops_of(v),
                               threads * iters, shared=shared_of(v) if shared_of else 0))
    bench(name, source, launches)


for k, ops in [("add_chain", 1), ("mul_chain", 1), ("fma_chain", 1), ("fma_ilp4", 4), ("div", 16), ("sqrt", 8),
               ("rcp", 8), ("minmax", 3), ("cvt_int", 6)]:
    compute(f"fp32_{k}", "fp32.cu", ops)
for k, ops in [("add_chain", 2), ("mul_chain", 2), ("fma_chain", 2), ("fma_ilp4", 8), ("div", 40), ("sqrt", 40),
               ("cvt_f32", 6)]:
    compute(f"fp64_{k}", "fp64.cu", ops, "f64")
for k, ops in [("fp16_hadd2_chain", 1), ("fp16_hfma2_chain", 1), ("fp16_hfma2_ilp4", 4), ("fp16_hfma_scalar", 1),
               ("bf16_hfma2_chain", 1), ("fp16_convert", 4), ("fp16_h2exp2", 10)]:
    compute(k, "fp16.cu", ops)
for k, ops, dt in [("int_add_chain", 4, "u32"), ("int_mul_chain", 2, "u32"), ("int_mad_chain", 2, "u32"),
                   ("int_mul_wide", 6, "u64"), ("int64_add_chain", 8, "u64"), ("int64_mul_chain", 8, "u64"),
                   ("int_div", 24, "u32"), ("int_rem", 24, "u32"), ("int_bitcount", 10, "u32"),
                   ("int_sad", 2, "u32"), ("int_minmax", 4, "s32")]:
    compute(k, "int.cu", ops, dt)
for k, ops, dt in [("and_or_xor", 6, "u32"), ("shift", 6, "u32"), ("lop3", 4, "u32"), ("funnel_shift", 6, "u32"),
                   ("bitfield", 6, "u32"), ("compare_select", 6, "s32"), ("byte_perm", 4, "u32")]:
    compute(f"logic_{k}", "logic.cu", ops, dt)
for k, ops in [("sfu_sin", 9), ("sfu_cos", 9), ("sfu_exp", 10), ("sfu_log", 10), ("sfu_rsqrt", 9),
               ("sfu_fast_div", 10), ("sfu_tanh", 9), ("libm_sin", 40), ("libm_exp", 20), ("libm_pow", 60)]:
    compute(k, "special.cu", ops)
compute("libm_sin_f64", "special.cu", 120, "f64")

compute("ctrl_uniform_branch", "control.cu", 4)
swept("ctrl_divergent_ways", "control.cu", lambda w: 2 * w + 8, (1, 2, 4, 8, 16, 32))
for k, ops in [("ctrl_divergent_if_else", 24), ("ctrl_variable_trip", 16), ("ctrl_switch", 16), ("ctrl_call", 16),
               ("ctrl_indirect_call", 24), ("ctrl_early_exit", 1)]:
    compute(k, "control.cu", ops)
bench("ctrl_data_branch", "control.cu", [
    launch(grid, 256, [rnd("f32", 1 << 20), out("f32", grid * 256), grid * 256, 4096, (1 << 20) - 1], 6,
           grid * 256 * 4096, moved=0)
    for grid in (FULL, 4 * FULL)
])

# ------------------------------------------------------------------------------------------ global
STREAM = (1 << 25, 1 << 26, 1 << 27)  # elements: 128 MiB and more per buffer, past the 50 MB L2
STREAM_GRID = 4 * FULL


def stream(name: str, args_of, sizes: Iterable[int] = STREAM, grid: int = STREAM_GRID, block: int = 256) -> None:
    bench(name, "global_mem.cu", [launch(grid, block, args_of(n)) for n in sizes])


stream("gmem_copy_f32", lambda n: [rnd("f32", n), out("f32", n), n])
stream("gmem_copy_f64", lambda n: [rnd("f64", n // 2), out("f64", n // 2), n // 2])
stream("gmem_copy_f32x4", lambda n: [rnd("f32", n), out("f32", n), n // 4])
stream("gmem_copy_u8", lambda n: [rnd("u8", 4 * n), out("u8", 4 * n), 4 * n])
stream("gmem_read_sum", lambda n: [rnd("f32", n), out("f32", STREAM_GRID * 256), n])
stream("gmem_read_nc_sum", lambda n: [rnd("f32", n), out("f32", STREAM_GRID * 256), n])
stream("gmem_write_fill", lambda n: [out("f32", n), n, 1.5])
stream("gmem_triad", lambda n: [rnd("f32", n), rnd("f32", n, 2), out("f32", n), n, 3.0])
stream("gmem_gather", lambda n: [rnd("f32", n), keys(n), out("f32", n), n], sizes=STREAM[:2])
stream("gmem_scatter", lambda n: [rnd("f32", n), keys(n), out("f32", n), n], sizes=STREAM[:2])
stream("gmem_misaligned", lambda n: [rnd("f32", n), out("f32", n), n])
stream("gmem_read_modify_write", lambda n: [rnd("f32", n), n, 0.5])
STRIDE_ELEMS = 1 << 26
for kernel in ("gmem_stride_read", "gmem_stride_write"):
    threads = STREAM_GRID * 256
    launches = []
    for stride in (1, 2, 4, 8, 16, 32, 64):
        iters = 64
        moved = threads * iters * min(32 * 4 * stride, 128) / 32  # bytes fetched: whole 32-byte sectors
        first = [rnd("f32", STRIDE_ELEMS)] if kernel == "gmem_stride_read" else []
        sink = [out("f32", threads)] if kernel == "gmem_stride_read" else [out("f32", STRIDE_ELEMS)]
        launches.append(launch(STREAM_GRID, 256, first + sink + [STRIDE_ELEMS - 1, stride, iters], moved=moved))
    bench(kernel, "global_mem.cu", launches)
bench("gmem_transpose_naive", "global_mem.cu", [
    launch((w // 32, w // 32), (32, 8), [rnd("f32", w * w), out("f32", w * w), w]) for w in (4096, 8192, 16384)
])

# ------------------------------------------------------------------------------------------ shared
swept("smem_stride", "shared_mem.cu", lambda s: 2 * math.gcd(s, 32) + 2, (1, 2, 4, 8, 16, 32, 33))
compute("smem_broadcast", "shared_mem.cu", 2)
compute("smem_f64", "shared_mem.cu", 4, "f64")
compute("smem_f32x4", "shared_mem.cu", 8)
compute("smem_u8", "shared_mem.cu", 3)
swept("smem_atomic_add", "shared_mem.cu", lambda b: 8 + 256 // b, (1024, 64, 8, 1))
swept("smem_dynamic", "shared_mem.cu", lambda w: 4, (1024, 4096, 12288), shared_of=lambda w: 4 * w)
for kernel in ("smem_transpose_padded", "smem_transpose_conflicts"):
    bench(kernel, "shared_mem.cu", [
        launch((w // 32, w // 32), (32, 8), [rnd("f32", w * w), out("f32", w * w), w]) for w in (4096, 8192, 16384)
    ])

# ------------------------------------------------------------------------------------- const, local
compute("const_uniform", "const_mem.cu", 2)
compute("const_divergent", "const_mem.cu", 16)
compute("const_f64", "const_mem.cu", 3, "f64")
bench("param_many", "const_mem.cu", [
    launch(grid, 256, [out("f32", grid * 256), grid * 256, 1 << 14, *(0.5 + i / 16 for i in range(8))], 4,
           grid * 256 * (1 << 14)) for grid in (132, FULL, 4 * FULL)
])
compute("local_dynamic_index", "local_mem.cu", 16)
compute("local_spill", "local_mem.cu", 300, block=1024)
compute("local_struct", "local_mem.cu", 12)
swept("local_recursion", "local_mem.cu", lambda d: 12 * d, (4, 16))

# ------------------------------------------------------------------------------------------ atomics
THREADS = FULL * 256


def atomics(name: str, dtype: str, ops: float, slots: Iterable[int] = (1 << 18, 1 << 10, 16)) -> None:
    launches = []
    for s in slots:
        cost = ops * (1 + (1 << 18) / s / 64)  # contention: more threads per address, more serialisation
        iters = pow2(2e-3 * LANE_OPS_PER_S / (THREADS * cost))
        launches.append(launch(FULL, 256, [out(dtype, s), s, iters], cost, THREADS * iters, moved=0))
    bench(name, "atomics.cu", launches)


bench("atom_add_one_address", "atomics.cu", [
    launch(grid, 256, [out("u32", 2), iters], 128 * 132 / 2, grid * 256 * iters, moved=0)
    for grid, iters in ((132, 16), (FULL, 4), (FULL, 16))
])
atomics("atom_add_distinct", "u32", 64)
atomics("red_add_distinct", "u32", 32)
atomics("atom_add_f32_bins", "f32", 32)
atomics("atom_add_f64", "f64", 64)
atomics("atom_cas_max_f32", "f32", 96)
atomics("atom_exch", "u32", 64)
atomics("atom_min_max", "s32", 128)
atomics("atom_shared_then_global", "u32", 16, (256, 16))
atomics("atom_warp_aggregated", "u32", 4)

# -------------------------------------------------------------------------------------- warp, sync
for k, ops, dt in [("warp_shfl_xor_reduce", 24, "f32"), ("warp_shfl_down", 6, "f32"), ("warp_shfl_up_scan", 40, "f32"),
                   ("warp_shfl_idx", 6, "f32"), ("warp_ballot", 8, "u32"), ("warp_any_all", 12, "u32"),
                   ("warp_match_any", 40, "u32"), ("warp_redux_add", 8, "u32"), ("warp_activemask", 6, "u32")]:
    compute(k, "warp.cu", ops, dt)
for k, ops in [("sync_barrier", 16), ("sync_barrier_exchange", 40), ("sync_named_barrier", 16), ("sync_warp", 4),
               ("sync_fence_block", 8), ("sync_fence_device", 64)]:
    compute(k, "sync.cu", ops)

# ------------------------------------------------------------------------------------ tensor cores
TILES = 8


def tensor(name: str, in_dtype: str, out_dtype: str, in_per_tile: int, out_per_warp: int, ops: float) -> None:
    launches = []
    iters = pow2(2e-3 * LANE_OPS_PER_S / (THREADS * ops))
    for grid in (132, FULL, 4 * FULL):
        warps = grid * 8
        args = [rnd(in_dtype, TILES * in_per_tile), rnd(in_dtype, TILES * in_per_tile, 2),
                out(out_dtype, warps * out_per_warp), TILES, iters]
        launches.append(launch(grid, 256, args, ops, grid * 256 * iters, moved=0))
    bench(name, "tensor.cu", launches)


tensor("wmma_f16_f32acc", "f16", "f32", 256, 256, 9)
tensor("wmma_f16_f16acc", "f16", "f16", 256, 256, 9)
tensor("wmma_bf16_f32acc", "bf16", "f32", 256, 256, 9)
tensor("wmma_tf32_f32acc", "f32", "f32", 128, 256, 9)
tensor("wmma_s8_s32acc", "s8", "s32", 256, 256, 5)
tensor("wmma_f64", "f64", "f64", 32, 64, 7)
tensor("mma_sync_m16n8k16", "u32", "f32", 128, 128, 5)

# ------------------------------------------------------------------------------------- async copies
for kernel, per in (("cpasync_4B", 1), ("cpasync_16B", 4), ("cpasync_double_buffer", 4), ("sync_copy_16B", 4)):
    bench(kernel, "async_copy.cu", [
        launch(FULL, 256, [rnd("f32", n), out("f32", THREADS), n // per], 2, n // per) for n in STREAM
    ])

# ---------------------------------------------------------------------------- arithmetic intensity
for dtype, ks, cost in (("f32", (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), 1), ("f64", (1, 4, 16, 64, 256), 2)):
    for k in ks:
        n = 1 << 25 if dtype == "f32" else 1 << 24
        sizes = (n, 4 * n) if k * cost <= 256 else (n // 4, n)
        bench(f"ai_{dtype}_k{k}", "intensity.cu", [
            launch(STREAM_GRID, 256, [rnd(dtype, m), out(dtype, m), m, 0.999], k * cost, m) for m in sizes
        ])

# -------------------------------------------------------------------------------------- occupancy
for r in (8, 32, 64, 128, 192):
    compute(f"occ_regs_{r}", "occupancy.cu", r, block=256 if r < 128 else 128)
for kb in (4, 16, 32, 48):
    compute(f"occ_smem_{kb}k", "occupancy.cu", 3)
bench("occ_block_size", "occupancy.cu", [
    launch(THREADS // b, b, [rnd("f32", 1 << 24), out("f32", THREADS), 1 << 24, 128], 128, 1 << 24)
    for b in (32, 64, 128, 256, 512, 1024)
])
swept("occ_dynamic_smem", "occupancy.cu", lambda w: 3, (1024, 8192, 16384, 24576, 40960),
      shared_of=lambda w: 4 * w)

# ------------------------------------------------------------------------------- real-world shapes
for kernel in ("stencil2d_5pt", "stencil2d_smem"):
    bench(kernel, "stencil.cu", [
        launch((w // 32, w // 8), (32, 8), [rnd("f32", w * w), out("f32", w * w), w, w]) for w in (4096, 8192, 16384)
    ])
bench("stencil3d_7pt", "stencil.cu", [
    launch((w // 32, w // 8), (32, 8), [rnd("f32", w ** 3), out("f32", w ** 3), w, w, w]) for w in (256, 384, 512)
])
bench("conv1d_7tap", "stencil.cu", [launch(STREAM_GRID, 256, [rnd("f32", n), out("f32", n), n]) for n in STREAM])

for kernel in ("reduce_smem_tree", "reduce_warp_shuffle", "reduce_atomic"):
    bench(kernel, "reduction_scan.cu", [
        launch(FULL, 256, [rnd("f32", n), out("f32", FULL), n]) for n in (1 << 25, 1 << 26, 1 << 27)
    ])
for kernel in ("scan_hillis_steele", "scan_warp_shuffle"):
    bench(kernel, "reduction_scan.cu", [
        launch(FULL, 256, [rnd("f32", n), out("f32", n), n], 8, n) for n in STREAM
    ])
bench("compact_ballot", "reduction_scan.cu", [
    launch(FULL, 256, [rnd("f32", n), out("f32", n), out("s32", FULL * 8), n, t]) for n in STREAM for t in (0.5,)
])

bench("gemm_naive", "gemm.cu", [
    launch((n // 16, n // 16), (16, 16), [rnd("f32", n * n), rnd("f32", n * n, 2), out("f32", n * n), n], 16, n ** 3)
    for n in (512, 1024, 2048)
])
bench("gemm_smem16", "gemm.cu", [
    launch((n // 16, n // 16), (16, 16), [rnd("f32", n * n), rnd("f32", n * n, 2), out("f32", n * n), n], 4, n ** 3)
    for n in (1024, 2048, 4096)
])
bench("gemm_reg4x4", "gemm.cu", [
    launch((n // 64, n // 64), (16, 16), [rnd("f32", n * n), rnd("f32", n * n, 2), out("f32", n * n), n], 1.5,
           n ** 3) for n in (1024, 2048, 4096)
])
bench("gemm_wmma_f16", "gemm.cu", [
    launch(n * n // 256 // 4, 128, [rnd("f16", n * n), rnd("f16", n * n, 2), out("f32", n * n), n], 0.3, n ** 3)
    for n in (2048, 4096, 8192)
])
bench("gemv_warp_row", "gemm.cu", [
    launch(rows * 32 // 256, 256, [rnd("f32", rows * cols), rnd("f32", cols, 2), out("f32", rows), rows, cols])
    for rows, cols in ((8192, 8192), (16384, 8192), (65536, 1024), (1024, 65536))
])

SOFTMAX_SHAPES = ((65536, 1024), (16384, 4096), (2048, 32768))
for kernel in ("softmax_warp_row", "softmax_block_row"):
    bench(kernel, "softmax_norm.cu", [
        launch(rows * 32 // 256 if "warp" in kernel else rows, 256, [rnd("f32", rows * cols), out("f32", rows * cols),
               rows, cols], 24, rows * cols, moved=12 * rows * cols) for rows, cols in SOFTMAX_SHAPES
    ])
for kernel in ("layernorm_warp_row", "rmsnorm_warp_row"):
    bench(kernel, "softmax_norm.cu", [
        launch(rows * 32 // 256, 256, [rnd("f32", rows * cols), buf("f32", cols, "ones"), out("f32", rows * cols),
               rows, cols], 6, rows * cols, moved=12 * rows * cols) for rows, cols in SOFTMAX_SHAPES
    ])

for kernel in ("histogram_global", "histogram_shared"):
    bench(kernel, "histogram_sort.cu", [
        launch(STREAM_GRID, 256, [keys(n), out("u32", bins), n, bins], 64 if bins == 16 else 16, n)
        for n in (1 << 25, 1 << 26) for bins in (16, 4096)
    ])
bench("bitonic_step", "histogram_sort.cu", [
    launch(STREAM_GRID, 256, [rnd("f32", 1 << 25), 1 << 25, j, 2 * j], moved=2 * 4 * (1 << 25))
    for j in (1, 1 << 10, 1 << 20)
])
bench("radix_digit_count", "histogram_sort.cu", [
    launch(FULL, 256, [keys(n), out("u32", FULL * 256), n, s], 8, n) for n in (1 << 25, 1 << 27) for s in (0, 8)
])

bench("nbody_tiled", "apps.cu", [
    launch(n // 256, 256, [rnd("f32", 4 * n), out("f32", 4 * n), n], 10, n * n) for n in (16384, 32768, 65536)
])
bench("mandelbrot", "apps.cu", [
    launch((w // 16, w // 16), (16, 16), [out("s32", w * w), w, w, it], 5, w * w * it / 3)
    for w, it in ((2048, 256), (4096, 256), (4096, 1024))
])
bench("black_scholes", "apps.cu", [
    launch(STREAM_GRID, 256, [rnd("f32", n), rnd("f32", n, 2), rnd("f32", n, 3), out("f32", n), out("f32", n), n,
                              0.02, 0.3], 120, n) for n in STREAM
])
bench("spmv_ell", "apps.cu", [
    launch(STREAM_GRID, 256, [rnd("f32", rows * width), keys(rows * width), rnd("f32", cols, 3),
                              out("f32", rows), rows, width, cols], moved=rows * width * 40)
    for rows, width, cols in ((1 << 20, 16, 1 << 20), (1 << 20, 64, 1 << 20), (1 << 22, 16, 1 << 16))
])
bench("kmeans_assign", "apps.cu", [
    launch(FULL, 256, [rnd("f32", 4 * n), rnd("f32", 4 * k, 2), out("s32", n), n, k], 8 * k, n)
    for n, k in ((1 << 22, 16), (1 << 22, 64), (1 << 22, 256))
])


def manifest() -> dict:
    return {
        "suite": "microbenchmarks",
        "description": "ptxstatic microbenchmarks: instruction groups, state spaces, intensity and occupancy "
                       "sweeps, real-world shapes; sized for an H100 (see manifest.py)",
        "nvcc_flags": "-lineinfo",
        "min_seconds": MIN_SECONDS,
        "benchmarks": BENCHMARKS,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if manifest.json differs from what would be written")
    args = ap.parse_args(argv)
    text = json.dumps(manifest(), indent=1) + "\n"
    if args.check:
        if not MANIFEST.is_file() or MANIFEST.read_text() != text:
            print(f"{MANIFEST.name} is out of date: run python microbenchmarks/manifest.py", file=sys.stderr)
            return 1
        return 0
    MANIFEST.write_text(text)
    n = sum(len(b["launches"]) for b in BENCHMARKS)
    print(f"wrote {MANIFEST.name}: {len(BENCHMARKS)} kernels, {n} launches", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
