"""What a kernel needs of an SM: registers per thread, static shared memory, stack, spills.

From ``ptxas -v`` for the target architecture where ptxas can assemble for it (read from the cubin ptxas made
of the PTX for that architecture, a build's own, where it tells as much: :mod:`ptxstatic.toolchain.cubin`); else
estimated from the PTX
(:func:`estimate_resources`), as the CUDA occupancy formulas need for an architecture the installed ptxas no
longer supports (CUDA 13 dropped Maxwell and Pascal): registers from the register pressure of the PTX
(:func:`ptxstatic.analysis.liveness.register_pressure`, capped by ``.maxnreg``), static shared memory and the
local stack from the declarations the kernel uses. Estimates say so (``estimated``, ``source``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.liveness import register_pressure
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.ptx.ast import Addr, Function, Module, Sym, VarDecl
from ptxstatic.ptx.printer import module as print_module
from ptxstatic.toolchain.ptxas import PtxasFunction, ptxas_stats, target_arch, unassemblable


@dataclass(frozen=True)
class KernelResources:
    name: str
    arch: str
    registers: int  # per thread
    shared_bytes: int  # static shared memory per block
    stack_frame: int  # local memory per thread, bytes
    spill_stores: int  # bytes, 0 when estimated
    spill_loads: int
    estimated: bool
    source: str  # "ptxas -v -arch=sm_90", or "estimated from the PTX (why)"


def kernel_resources(module: Module, arch: str, ptx: str | None = None,
                     cubin: bytes | None = None) -> dict[str, KernelResources]:
    """Resources of every function of ``module`` on ``arch`` (``ptx``: the module's text, when at hand;
    ``cubin``: what ptxas made of it for ``arch`` with its default options, when at hand).

    Raises :class:`~ptxstatic.errors.PtxstaticError` when ptxas rejects PTX it should assemble.
    """
    if cubin is not None:
        from ptxstatic.toolchain.cubin import cubin_stats

        read = cubin_stats(cubin, module, arch)
        if read is not None:
            return {name: _measured(s, arch, f"ptxas -arch={arch}") for name, s in read.items()}
    why = unassemblable(target_arch(module), arch)
    if why is not None:
        return estimate_resources(module, arch, why)
    stats = ptxas_stats(ptx if ptx is not None else print_module(module), arch) or {}
    return {name: _measured(s, arch, f"ptxas -v -arch={arch}") for name, s in stats.items()}


def _measured(s: PtxasFunction, arch: str, source: str) -> KernelResources:
    return KernelResources(s.name, arch, s.registers, s.shared_bytes, s.stack_frame, s.spill_stores, s.spill_loads,
                           False, source)


def estimate_resources(module: Module, arch: str, why: str) -> dict[str, KernelResources]:
    """Resources of every function with a body estimated from the PTX alone (``why``: why not ptxas)."""
    shared = _sizes(module.globals, "shared")
    out = {}
    for fn in module.functions:
        if fn.body is None:
            continue
        used = _symbols(fn)
        registers = register_pressure(build_cfg(fn))
        cap = fn.directive("maxnreg")
        limit = int(cap.values[0]) if cap is not None and cap.values else ARCHS[arch].max_registers_per_thread
        own = [s for s in fn.statements if isinstance(s, VarDecl)]
        out[fn.name] = KernelResources(
            fn.name, arch, min(registers, limit),
            sum(size for name, size in {**shared, **_sizes(own, "shared")}.items() if name in used),
            sum(_sizes(own, "local").values()), 0, 0, True, f"estimated from the PTX ({why})")
    return out


def _sizes(decls: list, space: str) -> dict[str, int]:
    from ptxstatic.emulator.memory import decl_size  # here: it loads numpy, which the rules' hot path avoids

    return {d.name: decl_size(v, d) for v in decls if isinstance(v, VarDecl) and v.space == space for d in v.names}


def _symbols(fn: Function) -> set[str]:
    """Names of variables the function's instructions refer to."""
    out: set[str] = set()
    for ins in fn.instructions:
        for op in ins.operands:
            base = op.base if isinstance(op, Addr) else op
            if isinstance(base, Sym):
                out.add(base.name)
    return out
