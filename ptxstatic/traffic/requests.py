"""Per memory instruction, what its warps ask of the memory system over a whole launch: requests, 32-byte
sectors (global and local) or wavefronts (shared) per request against the ideal, and the bytes asked for.

Where the sample of the launch (:mod:`ptxstatic.traffic.sample`) reached an instruction, its figures are
measured on the sampled warps' own addresses and scaled to the launch by the block counts: requests = thread
entries of its block x the sample's requests per thread entry there. Where it did not, they come from the
address's stride along ``%tid.x`` (:class:`~ptxstatic.analysis.strides.StrideAnalysis`): a constant
stride gives the figures of 32 lanes that far apart; a stride that is uniform but not a constant
(``tid * cols * 4``) is uncoalesced for every value but the access width, which is assumed and said; an
unknown one gives the whole range from coalesced to one sector per lane.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import function_def_use
from ptxstatic.analysis.memory_access import address_operand, global_sectors, sectors_of, shared_wavefronts
from ptxstatic.analysis.strides import VAR, StrideAnalysis
from ptxstatic.limits import WARP_SIZE
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.traffic.sample import LaunchSample, Request

#: opcodes whose requests the model counts, by the kind of access
KINDS = {"ld": "load", "ldu": "load", "st": "store", "atom": "atomic", "red": "atomic", "cp.async": "load"}
#: state spaces whose requests go through the SM's L1 (generic addresses are taken as global)
CACHED_SPACES = ("global", "local", "generic")


@dataclass(frozen=True)
class InstructionTraffic:
    """One memory instruction's requests over the launch, in one state space."""

    function: str
    index: int
    line: int
    kind: str  # load, store or atomic
    space: str  # global, local or shared
    width: int  # bytes per lane
    requests: float  # warp requests over the launch
    lanes_per_request: float
    cost: float  # sectors (global, local) or wavefronts (shared) per request
    cost_low: float
    cost_high: float
    ideal: float  # the minimum per request for the same lanes
    method: str  # "emulated", "stride" or "assumed"
    stride: int | str | None = None  # bytes between neighbouring lanes, "uniform" when not a constant
    assumption: str | None = None

    @property
    def bytes_requested(self) -> float:
        return self.requests * self.lanes_per_request * self.width

    @property
    def sectors(self) -> float:
        return self.requests * self.cost

    def to_dict(self) -> dict:
        return {"function": self.function, "index": self.index, "line": self.line, "kind": self.kind,
                "space": self.space, "width": self.width, "requests": round(self.requests, 1),
                "lanes_per_request": round(self.lanes_per_request, 2), "per_request": round(self.cost, 3),
                "per_request_low": round(self.cost_low, 3), "per_request_high": round(self.cost_high, 3),
                "ideal_per_request": round(self.ideal, 3), "method": self.method, "stride_bytes": self.stride,
                "assumption": self.assumption}


def memory_instructions(fn: Function) -> list[int]:
    """Indices of the instructions of ``fn`` whose requests the model counts."""
    return [i for i, ins in enumerate(fn.instructions)
            if (ins.info.opcode in KINDS and ins.info.space in ("global", "local", "shared", "generic"))
            or ins.info.opcode == "cp.async"]


def request_cost(requests: list[Request]) -> tuple[float, float, float]:
    """(requests, cost, ideal cost) summed over sampled requests of one instruction in one space."""
    cost = ideal = 0.0
    for r in requests:
        if r.space == "shared":
            c, i, _ = shared_wavefronts(r.lanes, r.addresses, r.width)
        else:
            c, i = global_sectors(r.lanes, r.addresses, r.width)
        cost, ideal = cost + c, ideal + i
    return len(requests), cost, ideal


def instruction_traffic(module: Module, counts: dict[str, dict[int, float]], sample: LaunchSample | None
                        ) -> list[InstructionTraffic]:
    """Every memory instruction of the functions in ``counts`` (thread entries per block over the launch)."""
    by_instruction: dict[tuple[str, int, str], list[Request]] = defaultdict(list)
    for r in sample.requests if sample is not None else ():
        by_instruction[(r.function, r.index, r.space)].append(r)
    out = []
    strides: dict[str, StrideAnalysis] = {}
    for fn, i, entries, seen in _executed(module, counts, sample, memory_instructions):
        spaces = sorted({s for (f, j, s) in by_instruction if f == fn.name and j == i})
        if spaces and seen > 0:
            for space in spaces:
                out.append(_emulated(fn, i, space, by_instruction[(fn.name, i, space)], entries / seen))
            continue
        out.append(_from_stride(fn, i, entries, _strides(fn, strides)))
    return out


def _executed(module: Module, counts: dict[str, dict[int, float]], sample: LaunchSample | None,
              picks: Callable[[Function], Iterable[int]]) -> Iterator[tuple[Function, int, float, float]]:
    """The instructions ``picks`` gives of each function of ``counts`` whose block runs: (the function, the
    instruction's index, its block's thread entries over the launch, and in the sample)."""
    for name, blocks in counts.items():
        fn = module.function(name)
        cfg = build_cfg(fn)
        block_of = {j: b.id for b in cfg.blocks for j in range(b.start, b.start + len(b))}
        sampled = sample.entries.get(name, {}) if sample is not None else {}
        for i in picks(fn):
            entries = blocks.get(block_of[i], 0.0)
            if entries > 0:
                yield fn, i, entries, sampled.get(block_of[i], 0.0)


def _constant_loads(fn: Function) -> list[int]:
    """Indices of the loads of ``fn`` from constant memory."""
    return [i for i, ins in enumerate(fn.instructions)
            if ins.info.opcode in ("ld", "ldu") and ins.info.space == "const"]


def _strides(fn: Function, kept: dict[str, StrideAnalysis]) -> StrideAnalysis:
    """The stride analysis of ``fn``, made once per function in ``kept``."""
    if fn.name not in kept:
        kept[fn.name] = StrideAnalysis(fn, function_def_use(fn))
    return kept[fn.name]


def _emulated(fn: Function, i: int, space: str, requests: list[Request], scale: float) -> InstructionTraffic:
    n, cost, ideal = request_cost(requests)
    lanes = sum(len(r.lanes) for r in requests) / n
    ins = fn.instructions[i]
    strides = {_stride(r) for r in requests}
    stride = strides.pop() if len(strides) == 1 else None
    return InstructionTraffic(fn.name, i, ins.line, requests[0].kind, space, requests[0].width, n * scale,
                              lanes, cost / n, cost / n, cost / n, ideal / n, "emulated", stride)


def _stride(r: Request) -> int | None:
    if len(r.lanes) < 2:
        return None
    steps = np.diff(r.addresses.astype(np.int64)) // np.diff(r.lanes)
    return int(steps[0]) if np.all(steps == steps[0]) else None


def _from_stride(fn: Function, i: int, entries: float, strides: StrideAnalysis) -> InstructionTraffic:
    """Figures of an instruction the sample did not reach: 32 active lanes per request, the cost from the
    address's stride along %tid.x (module docstring)."""
    ins = fn.instructions[i]
    kind, width = KINDS[ins.info.opcode], ins.info.width_bytes or 4
    space = "global" if ins.info.space == "generic" or ins.info.opcode == "cp.async" else ins.info.space
    requests = entries / WARP_SIZE
    coef = strides.coef(address_operand(ins), i)
    lanes = np.arange(WARP_SIZE)
    ideal = _cost(space, lanes, lanes * width, width)
    worst = float(min(WARP_SIZE * max(1, -(-width // 32)), WARP_SIZE * 4)) if space != "shared" else WARP_SIZE
    if isinstance(coef, int):
        cost = _cost(space, lanes, 4096 + coef * lanes if coef >= 0 else 4096 * 64 + coef * lanes, width)
        return InstructionTraffic(fn.name, i, ins.line, kind, space, width, requests, WARP_SIZE, cost, cost, cost,
                                  ideal, "stride", coef)
    if coef == VAR:
        unit = "bank" if space == "shared" else "sector"
        why = (f"the stride between lanes is uniform but not a constant: uncoalesced (one {unit} per lane) for "
               f"every stride but {width} bytes, which is assumed not to be the case")
        return InstructionTraffic(fn.name, i, ins.line, kind, space, width, requests, WARP_SIZE, worst, ideal, worst,
                                  ideal, "stride", "uniform", why)
    why = "the address depends on values the analysis cannot follow: anywhere from coalesced to one sector per lane"
    point = float(np.sqrt(ideal * worst))
    return InstructionTraffic(fn.name, i, ins.line, kind, space, width, requests, WARP_SIZE, point, ideal, worst,
                              ideal, "assumed", None, why)


def _cost(space: str, lanes: np.ndarray, addresses: np.ndarray, width: int) -> float:
    a = np.asarray(addresses, dtype=np.uint64)
    if space == "shared":
        return float(shared_wavefronts(lanes, a, width)[0])
    return float(len(sectors_of(a, width)))


def constant_replays(module: Module, counts: dict[str, dict[int, float]], sample: LaunchSample | None
                     ) -> tuple[float, float, float]:
    """Passes beyond the first that the constant cache makes for the launch's ``ld.const`` requests, (value,
    low, high): it serves one address per pass, so a warp whose lanes read k distinct addresses takes k.
    Measured on the sample's requests and scaled by the block counts where the sample ran the instruction;
    else from the address's stride along ``%tid.x``: none for a stride of 0, one per lane for another
    constant, one per lane at most for a stride that is uniform but not known (assumed), anywhere from none to
    one per lane for an address the analysis cannot follow (the geometric middle: sqrt(32) passes)."""
    by_instruction: dict[tuple[str, int], list[Request]] = defaultdict(list)
    for r in sample.constant if sample is not None else ():
        by_instruction[(r.function, r.index)].append(r)
    value = low = high = 0.0
    strides: dict[str, StrideAnalysis] = {}
    for fn, i, entries, seen in _executed(module, counts, sample, _constant_loads):
        requests = by_instruction.get((fn.name, i))
        if requests and seen > 0:
            extra = sum(len(np.unique(r.addresses)) - 1 for r in requests) * entries / seen
            value, low, high = value + extra, low + extra, high + extra
            continue
        coef = _strides(fn, strides).coef(address_operand(fn.instructions[i]), i)
        most = entries / WARP_SIZE * (WARP_SIZE - 1)
        if isinstance(coef, int):
            extra = most if coef else 0.0
            value, low, high = value + extra, low + extra, high + extra
        else:
            point = most if coef == VAR else entries / WARP_SIZE * (np.sqrt(WARP_SIZE) - 1)
            value, high = value + point, high + most
    return value, low, high
