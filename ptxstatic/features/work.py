"""The work of one launch, from its block counts and its memory traffic: what each of an SM's resources has
to do, summed over every thread, and one warp's dependent-latency path (what an absolute time estimate
needs, :mod:`ptxstatic.models.inference.bottleneck`).

* **Issue**: each SM's four schedulers issue one warp instruction per clock each: warp instructions / 4.
* **Pipes**: each instruction class runs on a pipe at its published rate (results per clock per SM,
  :mod:`ptxstatic.hardware.issue_rates`); classes that share a pipe add up (:data:`PIPES`), pipes run in
  parallel.
* **Latency**: an instruction starts at its issue slot or when its closest producer in its basic block
  has its result (the producer's start plus its latency, :data:`LATENCY`), whichever is later: a block
  takes its issue slots or its longest dependence chain, as the compiler schedules independent
  instructions (loads first) around the chains, so loads of one block wait out one latency together, not
  one each. One warp's path is the sum over the blocks it executes, the stalls told by what the chain
  waits for. A scheduler with fewer warps than that path's length per instruction cannot hide it.
* **Memory**: the launch's traffic (:mod:`ptxstatic.traffic`): L1 sectors and shared-memory wavefronts,
  L2 sectors, DRAM bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.defuse import function_def_use
from ptxstatic.analysis.sequence import kernel_sequence
from ptxstatic.block_counts import BlockCounts
from ptxstatic.features.portable import memory_traffic
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.issue_rates import issue_class, tensor_work
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.limits import WARP_SIZE
from ptxstatic.ptx import isa
from ptxstatic.ptx.ast import Function, Instruction, Module, Reg
from ptxstatic.traffic.model import LaunchTraffic

#: state spaces whose traffic leaves the SM (generic addresses counted as global)
OFFCHIP = ("global", "generic", "local", "texture")
#: schedulers (SM sub-partitions) per SM, each issuing one warp instruction per clock
SCHEDULERS = 4
#: the pipe each class of :class:`~ptxstatic.hardware.issue_rates.IssueRates` runs on
PIPES = {
    "fp32": "fma", "fp16": "fma", "int_mul": "fma_heavy", "fp64": "fp64", "special": "xu", "fp_div": "xu",
    "conversion": "xu", "conversion64": "fp64", "int_add": "alu", "shift_compare": "alu", "bit_count": "xu",
    "int_div": "alu", "shuffle": "lsu", "load_store": "lsu", "control": "branch", "tensor": "tensor",
}
#: clocks from an instruction's issue until a dependent instruction can use its result, by producer: the
#: dependent-issue latencies that microbenchmark studies of Volta to Hopper measure (arithmetic 4 to 8, the
#: special-function unit ~20, shared memory ~30, global memory through L2 ~300); an assumption of the model,
#: scaled as a whole by its calibration
LATENCY = {"fp32": 4, "fp16": 5, "int_add": 4, "int_mul": 5, "shift_compare": 4, "bit_count": 6, "fp64": 8,
           "conversion": 12, "conversion64": 12, "special": 20, "fp_div": 20, "int_div": 40, "shuffle": 24,
           "control": 8, "shared": 30, "global": 300, "local": 300, "param": 4, "const": 8, "tensor": 32}


#: IEEE-rounded single-precision division, reciprocal and square root: the instruction sequences ptxas emits
#: (a special-function approximation refined by fused multiply-adds, with a guarded slow path), as
#: (fp32 instructions, clocks of their dependent path)
IEEE_F32 = {"div": (10, 60), "rcp": (8, 50), "sqrt": (8, 50)}
#: the same for double precision (fp64 instructions: a reciprocal estimate refined by DFMA steps)
IEEE_F64 = {"div": (24, 150), "rcp": (16, 110), "sqrt": (24, 150)}
#: (instructions, clocks) ptxas emits for a 32-bit integer division or remainder by a divisor that does not
#: change in the loop (multiply-high by a reciprocal computed once, then a correction) and by one that does
#: (a subroutine)
INT_DIV_INVARIANT, INT_DIV_VARYING = (8, 40), (20, 80)
#: (instructions, clocks) of a call through a function pointer or an indexed branch: the indirect jump, the
#: convergence barrier around it, and for a call the arguments and return address through the stack
INDIRECT = {"call": (12, 60), "brx.idx": (8, 40)}
#: clocks of a global load by where it is served: L1, L2, DRAM (DRAM's under load, queueing included)
GLOBAL_LOAD_LATENCY = {"l1": 40, "l2": 300, "dram": 700}


@dataclass(frozen=True)
class Cost:
    """What one PTX instruction costs once it is machine code: the class whose pipe runs it, how many machine
    instructions it is, the clocks until its result can be used, and how many of its class's results each
    machine instruction is on the pipe (a matrix multiply-accumulate: its multiply-adds per thread)."""

    cls: str
    count: float
    latency: float
    results: float = 1.0


def instruction_cost(ins: Instruction, invariant: Callable[[Instruction], bool],
                     load_latency: Callable[[Instruction], float] | None = None) -> Cost:
    """The :class:`Cost` of ``ins``; ``invariant(ins)``: whether its divisor does not change in its loop;
    ``load_latency(ins)``: the clocks a global load takes where the traffic model knows where it hits."""
    info = ins.info
    cls, op = issue_class(info), info.opcode
    wide = info.dtype in ("u64", "s64", "b64")
    if op == "cvt" and all(t[:1] in "usb" for t in info.types):
        return Cost("int_add", 1.0, LATENCY["int_add"])  # between integer widths: a move or nothing
    if op == "cvt" and any(t in ("f16", "bf16", "f16x2", "bf16x2") for t in info.types):
        return Cost("fp32", 1.0, LATENCY["fp16"])  # half conversions run on the FMA pipe
    if cls == "tensor":
        return Cost(cls, 1.0, LATENCY["tensor"], tensor_work(op, info.types, info.other))
    if cls == "int_mul":
        return Cost(cls, 4.0 if wide and "wide" not in info.other else 1.0, LATENCY["int_mul"])
    if cls == "int_add" and wide and op in ("add", "sub", "min", "max", "neg", "abs"):
        return Cost(cls, 2.0, LATENCY["int_add"])
    if cls == "int_div":
        count, latency = INT_DIV_INVARIANT if invariant(ins) else INT_DIV_VARYING
        return Cost("int_mul", count, latency)
    exact = "approx" not in info.other and "full" not in info.other
    if exact and op in IEEE_F32 and info.dtype == "f32":
        return Cost("fp32", *IEEE_F32[op])
    if op in IEEE_F64 and info.dtype == "f64":
        return Cost("fp64", *IEEE_F64[op])
    if op == "brx.idx" or (op == "call" and any(isinstance(o, Reg) for o in ins.operands)):
        return Cost("control", *INDIRECT[op])
    if info.is_load:
        space = "global" if info.space == "generic" else info.space
        latency = load_latency(ins) if load_latency is not None and space == "global" else LATENCY.get(space, 300)
        return Cost(cls, 1.0, latency)
    return Cost(cls, 1.0, LATENCY.get(cls, 4))


@dataclass(frozen=True)
class LaunchWork:
    gpu: str
    ctas: int
    threads: int
    threads_per_cta: int
    instructions: float  # executed by all threads
    warp_instructions: float
    issue_cycles: float  # SM clocks the schedulers need, summed over SMs
    pipe_cycles: dict[str, float]  # SM clocks each pipe needs, summed over SMs
    path_cycles: dict[str, float]  # one warp's dependent-latency path, clocks, by what it waits for
    resident_ctas: int  # CTAs an SM runs at a time
    offchip_bytes: float  # moved by global, generic, local and texture accesses as asked (caches ignored)
    unknown_copies: float  # executions of copies whose size is not static (their bytes are not counted)
    traffic: LaunchTraffic | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def compute_cycles(self) -> float:
        """SM clocks summed over SMs: the busier of the schedulers and the busiest pipe."""
        return max([self.issue_cycles, *self.pipe_cycles.values()])

    def to_dict(self) -> dict:
        return {"ctas": self.ctas, "threads": self.threads, "instructions": self.instructions,
                "warp_instructions": round(self.warp_instructions, 1), "issue_cycles": round(self.issue_cycles, 1),
                "pipe_cycles": {k: round(v, 1) for k, v in sorted(self.pipe_cycles.items())},
                "path_cycles_per_warp": {k: round(v, 1) for k, v in sorted(self.path_cycles.items())},
                "resident_ctas_per_sm": self.resident_ctas,
                "offchip_bytes": self.offchip_bytes}


def launch_work(module: Module, counts: BlockCounts, figures: GpuFigures,
                traffic: LaunchTraffic | None = None) -> LaunchWork:
    """The launch's executed instructions, issue and pipe cycles, one warp's latency path and its off-chip
    bytes (block counts are totals over all threads, so every figure grows with the work the launch does).
    Warp instructions count the lanes a warp runs a block with: the traffic's sample of the launch says how
    many on average where it ran the block (a branch that splits warps runs both sides), full warps
    elsewhere."""
    rates = figures.rates
    instructions = warp_instructions = offchip = unknown = 0.0
    pipes: dict[str, float] = defaultdict(float)
    path: dict[str, float] = defaultdict(float)
    launch = counts.launch
    full = _active_lanes(launch.threads_per_block)
    lanes = traffic.lanes_per_entry if traffic is not None else {}
    for fname, blocks in counts.counts.items():
        fn = module.function(fname)
        cfg = build_cfg(fn)
        invariant = _invariant_divisors(fn, cfg)
        latency = _load_latency(fn, traffic)
        seq = kernel_sequence(fn)
        for b in cfg.blocks:
            c = blocks.get(b.id, 0.0)
            if not c:
                continue
            active = lanes.get((fname, b.id), full)
            costs = [instruction_cost(ins, invariant, latency) for ins in b.instructions]
            for kind, clocks in _block_path(b.instructions, costs, [seq[b.start + k].dep_distance
                                                                     for k in range(len(costs))]).items():
                path[kind] += c * clocks
            for ins, cost in zip(b.instructions, costs, strict=True):
                instructions += c
                warp_instructions += c * cost.count / active
                pipes[PIPES[cost.cls]] += c * cost.count * cost.results / getattr(rates, cost.cls)
                for space, nbytes in memory_traffic(ins):
                    if space == "unknown":
                        unknown += c
                    elif space in OFFCHIP:
                        offchip += c * nbytes
    threads = max(1, launch.threads)
    return LaunchWork(figures.name, launch.blocks, launch.threads, launch.threads_per_block, instructions,
                      warp_instructions, warp_instructions / SCHEDULERS, dict(pipes),
                      {k: v / threads for k, v in path.items()},
                      _resident(launch.blocks, launch.threads_per_block, figures), offchip, unknown, traffic)


def _block_path(instructions: list[Instruction], costs: list[Cost], distances: list[int]) -> dict[str, float]:
    """One execution of a block by one warp, in clocks: issue slots (``issue``) and how much longer its
    longest dependence chain takes (the compiler schedules a block's independent instructions, loads first,
    around the chains), told by what the chain waits for; a branch's latency before the next block is
    fetched (``control``)."""
    out: dict[str, float] = defaultdict(float)
    start: list[float] = []  # the clock each instruction starts at: its issue slot, or its producer's result
    via: list[int] = []  # the producer it waited for, -1 for none
    slot = 0.0
    for k, cost in enumerate(costs):
        d = distances[k]
        p = k - d if 0 < d <= k else -1
        ready = start[p] + costs[p].latency if p >= 0 else 0.0
        start.append(max(slot, ready))
        via.append(p if ready > slot else -1)
        slot += cost.count
        if cost.cls == "control":
            out["control"] += cost.latency - 1
    out["issue"] += slot
    if costs:
        last = max(range(len(costs)), key=lambda k: start[k] + costs[k].count)
        delay = start[last] + costs[last].count - slot
        chain: dict[str, float] = defaultdict(float)
        k = last
        while via[k] >= 0:
            k = via[k]
            chain[_latency_kind(instructions[k])] += costs[k].latency
        total = sum(chain.values())
        for kind, clocks in chain.items():
            out[kind] += max(0.0, delay) * clocks / total
    return out


def _latency_kind(producer: Instruction) -> str:
    """What a wait for ``producer`` is attributed to: memory, the special-function unit, or arithmetic."""
    if producer.info.is_load or producer.info.group == isa.ATOMIC:
        return "memory"
    return "special" if issue_class(producer.info) in ("special", "fp_div", "conversion") else "arithmetic"


def _load_latency(fn: Function, traffic: LaunchTraffic | None) -> Callable[[Instruction], float]:
    """Clocks of a global load of ``fn``: by its L1 hit rate, and for its misses by the share of the launch's
    L2 reads that DRAM serves (:data:`GLOBAL_LOAD_LATENCY`; without traffic, as from DRAM)."""
    hits: dict[int, float] = {}
    dram = 1.0
    if traffic is not None:
        hits = {id(fn.instructions[i]): h for (f, i), h in traffic.l1_hit.items() if f == fn.name}
        l2 = traffic.l2_read_sectors.value * 32
        dram = min(1.0, traffic.dram_read_bytes.value / l2) if l2 > 0 else 1.0
    miss = GLOBAL_LOAD_LATENCY["l2"] * (1 - dram) + GLOBAL_LOAD_LATENCY["dram"] * dram

    def latency(ins: Instruction) -> float:
        hit = hits.get(id(ins), 0.0)
        return hit * GLOBAL_LOAD_LATENCY["l1"] + (1 - hit) * miss

    return latency


def _invariant_divisors(fn: Function, cfg: BlockGraph) -> Callable[[Instruction], bool]:
    """Whether a division's divisor is an immediate or is defined outside the innermost loop holding it."""
    du = function_def_use(fn)
    block_of = {j: b.id for b in cfg.blocks for j in range(b.start, b.start + len(b))}
    loops = sorted(cfg.loops, key=lambda lp: len(lp.body))
    index = {id(ins): i for i, ins in enumerate(fn.instructions)}

    def invariant(ins: Instruction) -> bool:
        divisor = ins.operands[2] if len(ins.operands) > 2 else None
        if not isinstance(divisor, Reg):
            return True
        i = index[id(ins)]
        loop = next((lp for lp in loops if block_of[i] in lp.body), None)
        if loop is None:
            return True
        return all(block_of[d] not in loop.body for d in du.reaching.get((i, divisor.name), ()))

    return invariant


def _active_lanes(threads_per_cta: int) -> float:
    """Threads per warp, averaged over a CTA's warps (its last warp may be partly filled)."""
    warps = -(-threads_per_cta // WARP_SIZE)
    return threads_per_cta / warps


def _resident(ctas: int, threads_per_cta: int, figures: GpuFigures) -> int:
    arch = ARCHS.get(figures.arch)
    per_sm = -(-ctas // figures.sms)
    if arch is not None:
        per_sm = min(per_sm, arch.max_blocks_per_sm, max(1, arch.max_threads_per_sm // threads_per_cta))
    return max(1, per_sm)
