"""The GPU runner: launch a kernel and its instrumented copy, check they write the same outputs, read counts.

``profile(ptx, kernel, launch)`` instruments the module, loads both versions through the CUDA driver, builds
the kernel's parameters from its PTX parameter list and the launch spec (scalars; buffers allocated and
filled on the device; or device arrays of CuPy, numba, PyTorch, ... through ``__cuda_array_interface__``),
runs the original and then the instrumented kernel on identical inputs, compares every buffer byte for
byte, and folds the counters into :class:`BlockCounts` plus dynamic instruction counts per ISA group.

PTX from other tools: numba ``cuda.compile_ptx(fn, sig)[0]``; Triton ``compiled.asm["ptx"]`` (the object a
``kernel[grid](...)`` call or ``triton.compile`` returns); CuPy kernels written in CUDA C++: compile the same
source with ``nvcc -ptx`` (or pass the ``.cu`` to the CLI).
"""

from __future__ import annotations

import ctypes
import math
from collections import Counter as Tally
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.counter_map import CounterMap
from ptxstatic.counts.cuda_driver import Driver
from ptxstatic.counts.instrument import InstrumentOptions, instrument
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_text
from ptxstatic.ptx.printer import module as print_module

#: PTX scalar types as numpy dtypes (bf16 kept as raw 16-bit words)
NUMPY = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16, "s16": np.int16, "b16": np.uint16,
    "u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64,
    "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
}


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


# ----------------------------------------------------------------------------------- arguments
def host_fill(buf: Buffer) -> np.ndarray:
    """A buffer's initial contents, as the emulator makes them: zeros, ones, iota, const, or random (seeded
    ``default_rng``: floats uniform in [0, 1), integers uniform in [0, count)); bf16 as 16-bit words."""
    dtype = NUMPY.get(buf.dtype)
    if dtype is None:
        raise PtxstaticError(f"buffer type {buf.dtype!r} is not supported; one of {', '.join(NUMPY)}")
    n = buf.count
    floating = buf.dtype == "bf16" or np.issubdtype(dtype, np.floating)
    if buf.fill == "random":
        rng = np.random.default_rng(buf.seed)
        values = rng.random(n) if floating else rng.integers(0, max(1, n), n)
    else:
        values = {"zeros": np.zeros(n), "ones": np.ones(n), "iota": np.arange(n),
                  "const": np.full(n, buf.value)}[buf.fill]
    if buf.dtype == "bf16":  # round to nearest even on the upper half of the float32 bits
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    if not floating:
        return values.astype(np.int64).astype(dtype)
    return values.astype(dtype)


def _param_size(p: A.VarDecl) -> int:
    from ptxstatic.ptx.isa import TYPE_BITS

    elems = math.prod(d or 1 for d in p.names[0].dims) if p.names[0].dims else 1
    return max(1, TYPE_BITS.get(p.dtype, 8) // 8) * elems


class _Args:
    """The kernel's parameters as bytes, with device buffers that can be reset to their initial contents."""

    def __init__(self, drv: Driver, fn: A.Function, launch: Launch) -> None:
        self.drv = drv
        self.buffers: dict[str, tuple[int, bytes]] = {}  # name -> (device address, initial bytes)
        self.outputs: list[str] = []
        self.owned: list[int] = []
        self.values: list[bytes] = []
        params = fn.params or ()
        unknown = set(launch.args) - {p.names[0].name for p in params} - {str(i) for i in range(len(params))}
        if unknown:
            raise PtxstaticError(f"{fn.name} has no parameter {', '.join(sorted(unknown))}; its parameters: "
                                 + ", ".join(p.names[0].name for p in params))
        for i, p in enumerate(params):
            name = p.names[0].name
            value = launch.args.get(name, launch.args.get(str(i)))
            if value is None:
                raise PtxstaticError(f"no --arg for parameter {i} ({name}, .{p.dtype}) of {fn.name}")
            self.values.append(self._pack(p, name, value))

    def _pack(self, p: A.VarDecl, name: str, value: Any) -> bytes:
        size = _param_size(p)
        if isinstance(value, Buffer) or hasattr(value, "__cuda_array_interface__"):
            if size != 8:
                raise PtxstaticError(f"parameter {name} (.{p.dtype}, {size} bytes) cannot hold a device pointer")
            if isinstance(value, Buffer):
                data = host_fill(value).tobytes()
                ptr = self.drv.alloc(len(data))
                self.owned.append(ptr)
                if value.output:
                    self.outputs.append(name)
            else:
                iface = value.__cuda_array_interface__
                ptr = int(iface["data"][0])
                nbytes = math.prod(iface["shape"]) * np.dtype(iface["typestr"]).itemsize
                data = self.drv.download(ptr, nbytes)
                self.outputs.append(name)
            self.buffers[name] = (ptr, data)
            return np.uint64(ptr).tobytes()
        dtype = NUMPY.get(p.dtype)
        if dtype is None or p.names[0].dims:
            raise PtxstaticError(f"parameter {name} (.{p.dtype}{'[]' if p.names[0].dims else ''}) takes no "
                                 "scalar value; aggregates are not supported")
        try:
            return np.array(value).astype(dtype, casting="unsafe").tobytes()
        except (TypeError, ValueError):
            raise PtxstaticError(f"bad value {value!r} for parameter {name} (.{p.dtype})") from None

    def reset(self) -> None:
        for ptr, data in self.buffers.values():
            self.drv.upload(ptr, data)

    def snapshot(self) -> dict[str, bytes]:
        names = self.outputs or list(self.buffers)
        return {n: self.drv.download(self.buffers[n][0], len(self.buffers[n][1])) for n in names}

    def ctypes(self) -> list[ctypes.Array]:
        return [(ctypes.c_ubyte * len(v)).from_buffer_copy(v) for v in self.values]

    def free(self) -> None:
        for ptr in self.owned:
            self.drv.free(ptr)


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
def _run(drv: Driver, ptx: str, kernel: str, launch: Launch, args: _Args, symbols: tuple[str, ...] = (),
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


def _kernel(module: A.Module, kernel: str) -> A.Function:
    try:
        fn = module.function(kernel)
    except KeyError:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise PtxstaticError(f"no kernel named {kernel!r} in {module.filename} (kernels: {names})") from None
    if not fn.is_kernel:
        raise PtxstaticError(f"{kernel} is a .func, not a kernel (.entry)")
    return fn


def profile(ptx: str | A.Module, kernel: str, launch: Launch, options: InstrumentOptions | None = None,
            driver: Driver | None = None) -> ProfileResult:
    """Count the basic-block executions of one launch of ``kernel`` on the GPU (see the module docstring)."""
    module = ptx if isinstance(ptx, A.Module) else parse_text(ptx, "<ptx>")
    fn = _kernel(module, kernel)
    result = instrument(module, options)
    original = ptx if isinstance(ptx, str) else print_module(module)
    drv = driver or Driver()
    args = _Args(drv, fn, launch)
    try:
        want, _ = _run(drv, original, kernel, launch, args)
        got, raw = _run(drv, result.text, kernel, launch, args, (result.counters.symbol,))
    finally:
        args.free()
    mismatches = [n for n in want if want[n] != got[n]]
    counts = block_counts(result.counters, raw[result.counters.symbol], kernel, launch)
    return ProfileResult(counts, dynamic_instructions(module, counts), not mismatches, mismatches, drv.name,
                         result.counters)


def run_counters(drv: Driver, ptx: str, kernel: str, launch: Launch, fn: A.Function,
                 maps: list[CounterMap]) -> list[dict[str, dict[int, int]]]:
    """Launch already-instrumented PTX once and fold each map's counters (the LLVM IR route; PTX carrying
    both routes' counters)."""
    args = _Args(drv, fn, launch)
    try:
        _, raw = _run(drv, ptx, kernel, launch, args, tuple(m.symbol for m in maps))
    finally:
        args.free()
    return [m.fold(raw[m.symbol]) for m in maps]


def time_kernel(drv: Driver, ptx: str, kernel: str, launch: Launch, fn: A.Function, repeats: int = 20,
                ) -> list[float]:
    """Milliseconds per launch of ``kernel`` from ``ptx`` (one warm-up launch first), by CUDA events."""
    module = drv.load(ptx)
    args = _Args(drv, fn, launch)
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
