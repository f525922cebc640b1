#!/usr/bin/env python3
"""Overhead of the basic-block counters.

Everywhere: static overhead, instrumented / original instruction count per kernel (counting the device
functions it reaches), over the committed PTX fixtures (nvcc sm_80 lineinfo and llvm); median and worst.
On a machine with an NVIDIA GPU: run time of original vs instrumented kernels of the llvm fixtures (CUDA
events, median of repeats), and the median and worst slowdown. Without a GPU that part says so and the
script exits 0. Ratios come from one run of this script.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ptxstatic.counts.instrumentation.ptx_pass import instrument, reaching_kernels  # noqa: E402
from ptxstatic.errors import PtxstaticError  # noqa: E402
from ptxstatic.gpu.device import Gpu  # noqa: E402
from ptxstatic.gpu.open import open_device  # noqa: E402
from ptxstatic.launch import Buffer, Launch  # noqa: E402
from ptxstatic.ptx.parser import parse_file  # noqa: E402

FIXTURES = ROOT / "tests" / "data" / "fixtures" / "ptx"
STATIC = sorted((FIXTURES / "nvcc" / "sm_80" / "lineinfo").glob("*.ptx")) + sorted((FIXTURES / "llvm").glob("*.ptx"))
N = 1 << 20
TIMED = {  # kernel -> launch, for the llvm fixtures
    "loop_sum": Launch((N // 256, 1, 1), (256, 1, 1), 0, {"0": Buffer("f32", N * 16, "random"),
                                                         "1": Buffer("f32", N, output=True), "2": 16}),
    "shared_reduce": Launch((N // 256, 1, 1), (256, 1, 1), 0, {"0": Buffer("f32", N, "random"),
                                                               "1": Buffer("f32", N // 256, output=True)}),
    "switch_dispatch": Launch((N // 256, 1, 1), (256, 1, 1), 0, {
        "0": Buffer("u32", N, "random"), "1": Buffer("u32", N, "iota"), "2": Buffer("u32", N, "random"),
        "3": Buffer("u32", N, output=True)}),
    "call_device": Launch((N // 256, 1, 1), (256, 1, 1), 0, {
        "0": Buffer("f32", N, "random"), "1": Buffer("f32", N, output=True), "2": 0.25, "3": 0.75, "4": N}),
}


def kernel_sizes(path: Path) -> list[tuple[str, int, int]]:
    """(kernel, original instructions, instrumented instructions) over the functions each kernel reaches."""
    m = parse_file(path)
    inst = instrument(m).module
    reach = reaching_kernels(m)
    out = []
    for k in m.kernels:
        fns = [f for f in reach if k.name in reach[f]]
        before = sum(len(m.function(f).instructions) for f in fns)
        after = sum(len(inst.function(f).instructions) for f in fns)
        out.append((k.name, before, after))
    return out


def static_overhead() -> None:
    ratios = []
    for path in STATIC:
        try:
            ratios += [(after / before, f"{path.name}:{k}") for k, before, after in kernel_sizes(path) if before]
        except PtxstaticError as err:
            print(f"skipped {path.name}: {err}", file=sys.stderr)
    values = sorted(r for r, _ in ratios)
    worst = max(ratios)
    print(f"static instruction overhead over {len(ratios)} kernels: median x{statistics.median(values):.2f}, "
          f"worst x{worst[0]:.2f} ({worst[1]})")


def launch_ms(gpu: Gpu, ptx: str, kernel: str, launch: Launch, repeats: int) -> float:
    """Median milliseconds per launch over ``repeats`` timed launches (after one warm-up), through the GPU
    port's timed-launch loop."""
    module = gpu.load(ptx)
    try:
        prepared = gpu.prepare(module, kernel, launch)
        try:
            gpu.run(prepared)
            return statistics.median(gpu.time(prepared, repeats, 1))
        finally:
            gpu.release(prepared)
    finally:
        gpu.unload(module)


def gpu_overhead(repeats: int = 30) -> None:
    try:
        device = open_device("cuda")
        name = device.gpu.info().name
    except PtxstaticError as err:
        print(f"run-time overhead: not measured ({err})")
        return
    print(f"run-time overhead on {name}, median of {repeats} launches each:")
    ratios = []
    try:
        for kernel, launch in TIMED.items():
            m = parse_file(FIXTURES / "llvm" / f"{kernel}.ptx")
            base = launch_ms(device.gpu, (FIXTURES / "llvm" / f"{kernel}.ptx").read_text(), kernel, launch, repeats)
            inst = launch_ms(device.gpu, instrument(m).text, kernel, launch, repeats)
            ratios.append(inst / base)
            print(f"  {kernel}: {base:.4f} ms -> {inst:.4f} ms (x{inst / base:.2f})")
    finally:
        device.close()
    print(f"slowdown: median x{statistics.median(ratios):.2f}, worst x{max(ratios):.2f}")


if __name__ == "__main__":
    static_overhead()
    gpu_overhead()
