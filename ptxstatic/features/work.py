"""The work of one launch, from its block counts and its memory traffic: what each of an SM's resources has
to do, summed over every thread, and one warp's dependent-latency path (what an absolute time estimate
needs, :mod:`ptxstatic.models.inference.bottleneck`).

* **Issue**: each SM's four schedulers issue one warp instruction per clock each: warp instructions / 4.
* **Pipes**: each instruction class runs on a pipe at its published rate (results per clock per SM,
  :mod:`ptxstatic.hardware.issue_rates`); classes that share a pipe add up (:data:`PIPES`), pipes run in
  parallel.
* **Latency**: an instruction waits for its closest producer in its basic block: that producer's latency
  (:data:`LATENCY`, in clocks) less the instructions between them; one warp's path is the sum of these
  waits (at least one clock each) over the instructions it executes. A scheduler with fewer warps than
  that path's length per instruction cannot hide it.
* **Memory**: the launch's traffic (:mod:`ptxstatic.traffic`): L1 sectors and shared-memory wavefronts,
  L2 sectors, DRAM bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.sequence import kernel_sequence
from ptxstatic.block_counts import BlockCounts
from ptxstatic.features.portable import memory_traffic
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.issue_rates import issue_class
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.limits import WARP_SIZE
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
    "int_div": "alu", "shuffle": "lsu", "load_store": "lsu", "control": "branch",
}
#: clocks from an instruction's issue until a dependent instruction can use its result, by producer: the
#: dependent-issue latencies that microbenchmark studies of Volta to Hopper measure (arithmetic 4 to 8, the
#: special-function unit ~20, shared memory ~30, global memory through L2 ~300); an assumption of the model,
#: scaled as a whole by its calibration
LATENCY = {"fp32": 4, "fp16": 5, "int_add": 4, "int_mul": 5, "shift_compare": 4, "bit_count": 6, "fp64": 8,
           "conversion": 12, "conversion64": 12, "special": 20, "fp_div": 20, "int_div": 40, "shuffle": 24,
           "control": 4, "shared": 30, "global": 300, "local": 300, "param": 4, "const": 8}


#: IEEE-rounded single-precision division, reciprocal and square root: the instruction sequences ptxas emits
#: (a special-function approximation refined by fused multiply-adds, with a guarded slow path), as
#: (fp32 instructions, clocks of their dependent path)
IEEE_F32 = {"div": (10, 60), "rcp": (8, 50), "sqrt": (8, 50)}
#: instructions ptxas emits for a 32-bit integer division or remainder by a divisor that does not change in
#: the loop (multiply by a reciprocal computed once) and by one that does (a subroutine)
INT_DIV_INVARIANT, INT_DIV_VARYING = 3, 20


@dataclass(frozen=True)
class Cost:
    """What one PTX instruction costs once it is machine code: the class whose pipe runs it, how many machine
    instructions it is, and the clocks until its result can be used."""

    cls: str
    count: float
    latency: float


def instruction_cost(ins: Instruction, invariant: Callable[[Instruction], bool]) -> Cost:
    """The :class:`Cost` of ``ins``; ``invariant(ins)``: whether its divisor does not change in its loop."""
    info = ins.info
    cls, op = issue_class(info), info.opcode
    wide = info.dtype in ("u64", "s64", "b64")
    if op == "cvt" and all(t[:1] in "usb" for t in info.types):
        return Cost("int_add", 1.0, LATENCY["int_add"])  # between integer widths: a move or nothing
    if cls == "int_mul":
        return Cost(cls, 4.0 if wide and "wide" not in info.other else 1.0, LATENCY["int_mul"])
    if cls == "int_add" and wide and op in ("add", "sub", "min", "max", "neg", "abs"):
        return Cost(cls, 2.0, LATENCY["int_add"])
    if cls == "int_div":
        if invariant(ins):
            return Cost("int_mul", INT_DIV_INVARIANT, 3 * LATENCY["int_mul"])
        return Cost("int_add", INT_DIV_VARYING, LATENCY["int_div"])
    if info.dtype == "f32" and op in IEEE_F32 and "approx" not in info.other and "full" not in info.other:
        count, latency = IEEE_F32[op]
        return Cost("fp32", count, latency)
    latency = LATENCY.get(info.space if info.space != "generic" else "global", LATENCY["global"]) \
        if info.is_load else LATENCY.get(cls, 4)
    return Cost(cls, 1.0, latency)


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
    path_cycles: float  # one warp's dependent-latency path, clocks
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
                "path_cycles_per_warp": round(self.path_cycles, 1), "resident_ctas_per_sm": self.resident_ctas,
                "offchip_bytes": self.offchip_bytes}


def launch_work(module: Module, counts: BlockCounts, figures: GpuFigures,
                traffic: LaunchTraffic | None = None) -> LaunchWork:
    """The launch's executed instructions, issue and pipe cycles, one warp's latency path and its off-chip
    bytes (block counts are totals over all threads, so every figure grows with the work the launch does).
    Warp instructions count the lanes a warp runs a block with: the traffic's sample of the launch says how
    many on average where it ran the block (a branch that splits warps runs both sides), full warps
    elsewhere."""
    rates = figures.rates
    instructions = warp_instructions = offchip = unknown = path = 0.0
    pipes: dict[str, float] = defaultdict(float)
    launch = counts.launch
    full = _active_lanes(launch.threads_per_block)
    lanes = traffic.lanes_per_entry if traffic is not None else {}
    for fname, blocks in counts.counts.items():
        fn = module.function(fname)
        cfg = build_cfg(fn)
        invariant = _invariant_divisors(fn, cfg)
        seq = kernel_sequence(fn)
        for b in cfg.blocks:
            c = blocks.get(b.id, 0.0)
            if not c:
                continue
            active = lanes.get((fname, b.id), full)
            block_path = 0.0
            for k, ins in enumerate(b.instructions):
                cost = instruction_cost(ins, invariant)
                instructions += c
                warp_instructions += c * cost.count / active
                pipes[PIPES[cost.cls]] += c * cost.count / getattr(rates, cost.cls)
                d = seq[b.start + k].dep_distance
                wait = 1.0
                if 0 < d <= k:  # the producer is in this block
                    producer = instruction_cost(b.instructions[k - d], invariant)
                    wait = max(1.0, producer.latency - (d - 1))
                block_path += wait + cost.count - 1
                for space, nbytes in memory_traffic(ins):
                    if space == "unknown":
                        unknown += c
                    elif space in OFFCHIP:
                        offchip += c * nbytes
            path += c * block_path
    threads = max(1, launch.threads)
    return LaunchWork(figures.name, launch.blocks, launch.threads, launch.threads_per_block, instructions,
                      warp_instructions, warp_instructions / SCHEDULERS, dict(pipes), path / threads,
                      _resident(launch.blocks, launch.threads_per_block, figures), offchip, unknown, traffic)


def _invariant_divisors(fn: Function, cfg: BlockGraph) -> Callable[[Instruction], bool]:
    """Whether a division's divisor is an immediate or is defined outside the innermost loop holding it."""
    du = def_use(cfg)
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
