"""What the resource, precision and energy rules assume about the target: the GPU architecture, the block
size, and each kernel's registers, shared memory and spills on it, computed once per module.

The architecture is that of the configured ``gpu`` (``ptxstatic.hardware.occupancy.GPUS``), else the PTX's
``.target``. The block size is the kernel's ``.reqntid``/``.maxntid`` (``__launch_bounds__``), else the
configured ``launch``, else :data:`DEFAULT_BLOCK` threads. Resources come from ``ptxas -v`` for that
architecture, estimated from the PTX where ptxas cannot assemble for it
(:mod:`ptxstatic.features.resources`).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.occupancy import ARCHS, gpu_spec
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.rules.context import ModuleContext

if TYPE_CHECKING:  # imported on first use: the resources bring the basic-block graph (networkx) and ptxas
    from ptxstatic.features.resources import KernelResources

#: threads per block assumed for a kernel without launch bounds when the configuration gives no launch
DEFAULT_BLOCK = 256


def is_debug(module: Module) -> bool:
    """Whether the PTX was compiled with ``-G`` (``.target sm_XX, debug``): everything lives in local memory."""
    return "debug" in module.target


def target_arch(mc: ModuleContext) -> str | None:
    """The architecture the rules judge for (an ``ARCHS`` key), None when it is not one of them."""
    if mc.config.gpu is not None:
        return gpu_spec(mc.config.gpu).arch
    m = re.fullmatch(r"(?:sm|compute)_(\d+)[a-z]?", mc.module.sm)
    arch = f"sm_{m.group(1)}" if m else ""
    return arch if arch in ARCHS else None


def target_name(mc: ModuleContext) -> str:
    """How findings name the target: ``titanx (sm_52)``, or the architecture alone."""
    arch = target_arch(mc)
    return f"{mc.config.gpu.lower()} ({arch})" if mc.config.gpu else str(arch)


def block_size(fn: Function, mc: ModuleContext) -> tuple[int, str]:
    """Threads per block for ``fn`` and where the number comes from."""
    for name in ("reqntid", "maxntid"):
        d = fn.directive(name)
        if d is not None and d.values:
            return math.prod(int(v) for v in d.values), f".{name} (__launch_bounds__)"
    if mc.config.launch is not None:
        return mc.config.launch.threads_per_block, "the configured launch"
    return DEFAULT_BLOCK, f"the default block of {DEFAULT_BLOCK} threads"


def resources(mc: ModuleContext) -> dict[str, KernelResources] | None:
    """Every function's resources on the target architecture, None when there is no target or ptxas rejects
    the PTX (computed once per module)."""
    def compute() -> dict[str, KernelResources] | None:
        from ptxstatic.features.resources import kernel_resources
        from ptxstatic.toolchain.ptxas import PtxasSkipped

        arch = target_arch(mc)
        if arch is None:
            return None
        try:
            return kernel_resources(mc.module, arch, cubin=mc.cubins.get(arch))
        except PtxasSkipped as exc:
            mc.note(f"{exc}; the resource rules do not judge this file")
            return None
        except PtxstaticError:
            return None

    return mc.memo("target.resources", compute)


def measured_resources(mc: ModuleContext, function: str) -> KernelResources | None:
    """``function``'s resources from ptxas: for the target architecture, else (where ptxas cannot assemble
    for it) for the PTX's own ``.target``, the nearest evidence of what ptxas makes of the code; None
    without ptxas."""
    own = (resources(mc) or {}).get(function)
    if own is not None and not own.estimated:
        return own

    def compute() -> dict[str, KernelResources] | None:
        from ptxstatic.features.resources import kernel_resources
        from ptxstatic.toolchain.ptxas import target_arch as ptx_arch

        try:
            arch = ptx_arch(mc.module)
            return kernel_resources(mc.module, arch, cubin=mc.cubins.get(arch))
        except PtxstaticError:
            return None

    other = (mc.memo("target.own-resources", compute) or {}).get(function)
    return other if other is not None and not other.estimated else None
