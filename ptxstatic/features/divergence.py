"""Divergence risk and coalescing features: which branches depend on the thread index, and the executed
global bytes by the stride class of their address along ``%tid.x`` (:mod:`ptxstatic.analysis.strides`). A
global access whose address has coefficient ``c`` bytes and moves ``w`` bytes per thread is *broadcast*
(c = 0), *unit* (c = w: neighbouring threads touch neighbouring elements), *strided* (any other known or
uniform coefficient), or *unknown*.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.analysis.cfg import BlockGraph
from ptxstatic.analysis.defuse import DefUse
from ptxstatic.analysis.deps import dependent_instructions, is_conditional_transfer
from ptxstatic.analysis.strides import TOP, UNKNOWN, VAR, Coef, StrideAnalysis
from ptxstatic.ptx.ast import Addr

STRIDE_CLASSES = ("broadcast", "unit", "strided", "unknown")


@dataclass
class BranchDivergence:
    conditional: int  # conditional branches, returns and indexed branches
    thread_dependent: int  # ... whose condition depends on %tid or %laneid
    executed: float  # their executions (thread entries of their blocks)
    thread_dependent_executed: float

    @property
    def fraction(self) -> float:
        return self.thread_dependent / self.conditional if self.conditional else 0.0

    @property
    def executed_fraction(self) -> float:
        return self.thread_dependent_executed / self.executed if self.executed else 0.0


def branch_divergence(cfg: BlockGraph, du: DefUse, counts: dict[int, float]) -> BranchDivergence:
    """Conditional control transfers of one function, and those whose condition reads the thread index."""
    fn = cfg.function
    dependent = dependent_instructions(fn, du, ("%tid", "%laneid"))
    total = dep = 0
    run = dep_run = 0.0
    for b in cfg.blocks:
        for k, ins in enumerate(b.instructions):
            if is_conditional_transfer(ins):
                c = counts.get(b.id, 0.0)
                total += 1
                run += c
                if b.start + k in dependent:
                    dep += 1
                    dep_run += c
    return BranchDivergence(total, dep, run, dep_run)


@dataclass
class Access:
    line: int
    block: int
    width: int  # bytes per thread
    stride_bytes: Coef  # tid.x coefficient of the address: int, VAR or UNKNOWN
    kind: str  # one of STRIDE_CLASSES


def classify(stride: Coef, width: int) -> str:
    if stride == 0:
        return "broadcast"
    if stride == width:
        return "unit"
    if stride == VAR or isinstance(stride, int):
        return "strided"
    return "unknown"


def global_accesses(cfg: BlockGraph, du: DefUse) -> list[Access]:
    """Every global-memory load, store and atomic of the function, with its stride along ``%tid.x``."""
    analysis = StrideAnalysis(cfg.function, du)
    out = []
    for b in cfg.blocks:
        for k, ins in enumerate(b.instructions):
            info = ins.info
            if "global" not in info.spaces or not info.is_memory_access:
                continue
            address = next((o for o in ins.operands if isinstance(o, Addr)), None)
            if address is None:
                continue
            stride = analysis.coef(address, b.start + k)
            stride = UNKNOWN if stride == TOP else stride
            width = info.width_bytes
            out.append(Access(ins.line, b.id, width, stride, classify(stride, width)))
    return out


def stride_bytes(accesses: list[Access], counts: dict[int, float]) -> dict[str, float]:
    """Executed global bytes in each stride class."""
    out = dict.fromkeys(STRIDE_CLASSES, 0.0)
    for a in accesses:
        out[a.kind] += counts.get(a.block, 0.0) * a.width
    return out
