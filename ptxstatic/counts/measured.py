"""The GPU runner: launch a kernel and its instrumented copy, check they write the same outputs, read counts.

``profile(ptx, kernel, launch)`` instruments the module, loads both versions through the CUDA driver, builds
the kernel's parameters from its PTX parameter list and the launch spec (scalars; buffers allocated and
filled on the device; or device arrays of CuPy, numba, PyTorch, ... through ``__cuda_array_interface__``),
runs the original and then the instrumented kernel on identical inputs, compares every buffer byte for
byte, and folds the counters into :class:`BlockCounts` plus dynamic instruction counts per ISA group.

PTX from other tools: numba ``cuda.compile_ptx(fn, sig)[0]``; Triton ``compiled.asm["ptx"]`` (the object a
``kernel[grid](...)`` call or ``triton.compile`` returns); CuPy kernels written in CUDA C++: compile the same
source with ``nvcc -ptx`` (or pass the ``.cu`` to the CLI).

``emulated_profile`` does the same on the PTX emulator (``ptxstatic profile --emulate``), without a GPU.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.instrumentation.counter_map import CounterMap
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.gpu.args import KernelArgs
from ptxstatic.gpu.driver import Driver
from ptxstatic.launch import Launch
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_text
from ptxstatic.ptx.printer import module as print_module
from ptxstatic.toolchain.cxx_params import bind_launch
from ptxstatic.toolchain.demangle import find_kernel


@dataclass
class ProfileResult:
    counts: BlockCounts
    instructions: dict[str, dict[str, float]]  # function (and "total") -> ISA group -> dynamic instructions
    outputs_match: bool
    mismatches: list[str] = field(default_factory=list)  # buffers whose bytes differ
    device: str = ""
    counter_map: CounterMap | None = None

    def to_dict(self) -> dict:
        return {
            "kernel": self.counts.kernel, "device": self.device, "launch": self.counts.launch.to_dict(),
            "counts": self.counts.to_dict(), "instructions": self.instructions,
            "verification": {"outputs_match": self.outputs_match, "mismatched_buffers": self.mismatches},
        }


# ---------------------------------------------------------------------------------------- counts
def sampled_ctas(launch: Launch, stride: int) -> int:
    """CTAs whose linear id is a multiple of ``stride``."""
    return (launch.blocks + stride - 1) // stride


def block_counts(cmap: CounterMap, raw: list[int], kernel: str, launch: Launch) -> BlockCounts:
    """Per-block counts of the functions ``kernel`` reaches, extrapolated in sample mode."""
    folded = cmap.fold(raw)
    reached = {c.function for c in cmap.for_kernel(kernel)}
    counts = {f: {b: float(n) for b, n in blocks.items()} for f, blocks in folded.items() if f in reached}
    notes = list(cmap.notes)
    source = "gpu"
    if cmap.mode == "sample":
        sampled = sampled_ctas(launch, cmap.stride)
        factor = launch.blocks / sampled
        counts = {f: {b: n * factor for b, n in blocks.items()} for f, blocks in counts.items()}
        source = "gpu-sampled"
        notes.append(f"sampled {sampled} of {launch.blocks} CTAs (linear id % {cmap.stride} == 0); counts "
                     f"extrapolated linearly to the grid by factor {factor:.6g}")
    elif cmap.mode == "warp":
        notes.append("per-warp counts: only the first warp of CTA 0 counted (not totals over the grid)")
    return BlockCounts(kernel, launch, source, counts, {}, notes)


def dynamic_instructions(module: A.Module, counts: BlockCounts) -> dict[str, dict[str, float]]:
    """Per function and in total: block count x the block's instructions of each ISA group, summed."""
    out: dict[str, dict[str, float]] = {}
    total: Tally[str] = Tally()
    for fname, blocks in counts.counts.items():
        per: Tally[str] = Tally()
        for b in build_cfg(module.function(fname)).blocks:
            n = blocks.get(b.id, 0.0)
            if n:
                for ins in b.instructions:
                    per[ins.info.group] += n
        out[fname] = dict(sorted(per.items()))
        total.update(per)
    out["total"] = dict(sorted(total.items()))
    return out


# ----------------------------------------------------------------------------------------- runs
def _run(drv: Driver, ptx: str, kernel: str, launch: Launch, args: KernelArgs, symbols: tuple[str, ...] = (),
         ) -> tuple[dict[str, bytes], dict[str, list[int]]]:
    """One launch on freshly reset buffers: (buffer contents after it, each counter array's elements)."""
    module = drv.load(ptx)
    try:
        fn = drv.function(module, kernel)
        arrays = {s: drv.global_(module, s) for s in symbols}
        for ptr, size in arrays.values():
            drv.zero(ptr, size)
        args.reset()
        drv.launch(fn, launch.grid, launch.block, launch.shared_bytes, args.ctypes())
        drv.synchronize()
        counters = {s: np.frombuffer(drv.download(p, n), np.uint64).tolist() for s, (p, n) in arrays.items()}
        return args.snapshot(), counters
    finally:
        drv.unload(module)


def profile(ptx: str | A.Module, kernel: str, launch: Launch, options: InstrumentOptions | None = None,
            driver: Driver | None = None) -> ProfileResult:
    """Count the basic-block executions of one launch of ``kernel`` on the GPU (see the module docstring)."""
    module = ptx if isinstance(ptx, A.Module) else parse_text(ptx, "<ptx>")
    fn = find_kernel(module, kernel)
    kernel, launch = fn.name, bind_launch(module, fn, launch.validate())
    result = instrument(module, options)
    original = ptx if isinstance(ptx, str) else print_module(module)
    drv = driver or Driver()
    args = KernelArgs(drv, fn, launch)
    try:
        want, _ = _run(drv, original, kernel, launch, args)
        got, raw = _run(drv, result.text, kernel, launch, args, (result.counters.symbol,))
    finally:
        args.free()
    mismatches = [n for n in want if want[n] != got[n]]
    counts = block_counts(result.counters, raw[result.counters.symbol], kernel, launch)
    return ProfileResult(counts, dynamic_instructions(module, counts), not mismatches, mismatches, drv.name,
                         result.counters)


def emulated_profile(module: A.Module, kernel: str, launch: Launch, options: InstrumentOptions | None = None
                     ) -> ProfileResult:
    """:func:`profile` on the PTX emulator instead of a GPU: the counts are the emulator's own for the original
    kernel (source ``emulated``, every CTA whatever ``options.mode``), and the instrumented kernel's buffers
    are compared with the original's as on a GPU."""
    from ptxstatic.emulator import emulate

    fn = find_kernel(module, kernel)
    kernel, launch = fn.name, bind_launch(module, fn, launch.validate())
    result = instrument(module, options)
    want = emulate(module, fn, launch)
    got = emulate(parse_text(result.text, module.filename), kernel, launch)
    mismatches = [n for n, v in want.buffers.items() if v.tobytes() != got.buffers[n].tobytes()]
    return ProfileResult(want.counts, dynamic_instructions(module, want.counts), not mismatches, mismatches,
                         "PTX emulator", result.counters)


def run_counters(drv: Driver, ptx: str, kernel: str, launch: Launch, fn: A.Function,
                 maps: list[CounterMap]) -> list[dict[str, dict[int, int]]]:
    """Launch already-instrumented PTX once and fold each map's counters (the LLVM IR route; PTX carrying
    both routes' counters)."""
    args = KernelArgs(drv, fn, launch)
    try:
        _, raw = _run(drv, ptx, kernel, launch, args, tuple(m.symbol for m in maps))
    finally:
        args.free()
    return [m.fold(raw[m.symbol]) for m in maps]


def time_kernel(drv: Driver, ptx: str, kernel: str, launch: Launch, fn: A.Function, repeats: int = 20,
                ) -> list[float]:
    """Milliseconds per launch of ``kernel`` from ``ptx`` (one warm-up launch first), by CUDA events."""
    module = drv.load(ptx)
    args = KernelArgs(drv, fn, launch)
    try:
        f = drv.function(module, kernel)
        params = args.ctypes()
        args.reset()

        def go() -> None:
            drv.launch(f, launch.grid, launch.block, launch.shared_bytes, params)

        go()
        drv.synchronize()
        return drv.time_ms(go, repeats)
    finally:
        args.free()
        drv.unload(module)
