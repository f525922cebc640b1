"""The work of one launch, from its block counts and its memory traffic: what each of an SM's resources has
to do, summed over every thread, and one warp's dependent-latency path (what an absolute time estimate
needs, :mod:`ptxstatic.models.inference.bottleneck`).

* **Issue**: each SM's four schedulers issue one warp instruction per clock each: warp instructions / 4.
* **Pipes**: each instruction class runs on a pipe at its published rate (results per clock per SM,
  :mod:`ptxstatic.hardware.issue_rates`); classes that share a pipe add up (:data:`PIPES`), pipes run in
  parallel.
* **Latency**: an instruction starts at its issue slot or when the last of its producers in its basic block
  has its result (the producer's start plus its latency, :data:`LATENCY`), whichever is later: a block takes
  its issue slots or its longest dependence chain, as the compiler schedules independent instructions (loads
  first) around the chains, so loads of one block wait out one latency together, not one each, except a global
  load after a global store that may write what it reads (ptxas keeps their order). A memory fence holds the
  warp (:data:`FENCE_LATENCY`). One warp's path is the sum over the blocks it executes (by their warp entries:
  a warp whose lanes part runs both sides), the stalls told by what the chain waits for (a load's wait for
  DRAM beyond an L2 hit apart: ``dram``). A scheduler with fewer warps than that path's length per instruction
  cannot hide it.
* **Memory**: the launch's traffic (:mod:`ptxstatic.traffic`): L1 sectors and shared-memory wavefronts,
  L2 sectors, DRAM bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.defuse import function_def_use
from ptxstatic.analysis.registers import operand_registers
from ptxstatic.block_counts import BlockCounts
from ptxstatic.features.portable import memory_traffic
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.issue_rates import issue_class, tensor_work
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.limits import WARP_SIZE
from ptxstatic.ptx import isa
from ptxstatic.ptx.ast import Function, Imm, Instruction, Label, Module, Pragma, Reg
from ptxstatic.ptx.isa_forms import special_register_type
from ptxstatic.traffic.model import LaunchTraffic

#: state spaces whose accesses may reach global memory
GLOBAL = ("global", "generic")
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
#: the pipes, by name
PIPE_NAMES = tuple(sorted(set(PIPES.values())))
#: what one warp's latency path waits for: the keys of ``LaunchWork.path_cycles`` (:func:`_block_path`)
PATH_KINDS = ("issue", "arithmetic", "memory", "dram", "special", "control", "loop_issue", "loop_control")
#: clocks from an instruction's issue until a dependent instruction can use its result, by producer: the
#: dependent-issue latencies that microbenchmark studies of Volta to Hopper measure (arithmetic 4 to 8, the
#: special-function unit ~20, shared memory ~30, global memory through L2 ~300); an assumption of the model,
#: scaled as a whole by its calibration
LATENCY = {"fp32": 4, "fp16": 5, "int_add": 4, "int_mul": 5, "shift_compare": 4, "bit_count": 6, "fp64": 8,
           "conversion": 12, "conversion64": 12, "special": 20, "fp_div": 20, "int_div": 40, "shuffle": 24,
           "control": 8, "shared": 30, "global": 300, "local": 300, "param": 4, "const": 8, "tensor": 32}


#: IEEE-rounded single-precision division, reciprocal and square root: the instruction sequences ptxas emits
#: (a special-function approximation refined by fused multiply-adds, with a guarded slow path), as
#: (fp32 instructions, clocks of their dependent path); the counts of division, reciprocal and square root as
#: the H200's executed-instruction counter gives them for the fp32 and fp64 microbenchmarks' loops (10.6
#: machine instructions a division, 10.6 a reciprocal or square root; 16.6 a double division, 19.1 a double
#: square root; the double reciprocal is not measured)
IEEE_F32 = {"div": (10, 60), "rcp": (11, 50), "sqrt": (11, 50)}
#: the same for double precision (fp64 instructions: a reciprocal estimate refined by DFMA steps)
IEEE_F64 = {"div": (17, 150), "rcp": (16, 110), "sqrt": (19, 150)}
#: (instructions, clocks) ptxas emits for a 32-bit integer division or remainder by a divisor that does not
#: change in the loop (multiply-high by a reciprocal computed once, then a correction) and by one that does
#: (a subroutine)
INT_DIV_INVARIANT, INT_DIV_VARYING = (8, 40), (20, 80)
#: (instructions, clocks) of a call through a function pointer or an indexed branch: the indirect jump, the
#: convergence barrier around it, and for a call the arguments and return address through the stack
INDIRECT = {"call": (12, 60), "brx.idx": (8, 40)}
#: clocks of a global load by where it is served: L1, L2, DRAM (DRAM's under load, queueing included)
GLOBAL_LOAD_LATENCY = {"l1": 40, "l2": 300, "dram": 700}
#: clocks a memory fence holds its warp before the next instruction: at device or system scope until the warp's
#: earlier writes are acknowledged by the GPU's point of coherence (a global-memory round trip under load); at
#: CTA scope (and a proxy fence) until the SM's own pipeline has drained
FENCE_LATENCY = {"cta": 8, "device": GLOBAL_LOAD_LATENCY["dram"]}
#: machine instructions of a bit-field extract or insert (``bfe``, ``bfi``): sm_70 and later have no bit-field
#: instruction, ptxas emits a shift or mask and a logic operation (the H200's executed-instruction counter on
#: ``logic_bitfield``: 2.0 each)
BITFIELD = 2.0
#: clocks of the control pipe a warp's arrival at a CTA barrier (``bar.sync``, ``barrier.sync``, ``bar.red``,
#: ``bar.arrive``) occupies: measured on the H200 (``sync_barrier``, ``sync_named_barrier``: 130 and 146 SM
#: clocks a trip for 64 warps, each arriving once, against the one clock of a branch)
BARRIER_CLOCKS = 2.0
#: (SM clocks on the warp-operation pipe, clocks until the result) of ``match.any``: the hardware compares the
#: lanes' values one distinct value after another; measured on the H200 (``warp_match_any``, eight distinct
#: values per warp: 15 SM clocks per warp instruction at 64 warps per SM, 120 clocks dependent latency)
MATCH_ANY = (16, 120)


@dataclass(frozen=True)
class Cost:
    """What one PTX instruction costs once it is machine code: the class whose pipe runs it, how many machine
    instructions it is, the clocks until its result can be used, and how many of its class's results each
    machine instruction is on the pipe (a matrix multiply-accumulate: its multiply-adds per thread), and of its
    latency the clocks a load waits for DRAM beyond an L2 hit's."""

    cls: str
    count: float
    latency: float
    results: float = 1.0
    dram: float = 0.0


def instruction_cost(ins: Instruction, invariant: Callable[[Instruction], bool],
                     load_latency: Callable[[Instruction], tuple[float, float]] | None = None) -> Cost:
    """The :class:`Cost` of ``ins``; ``invariant(ins)``: whether its divisor does not change in its loop;
    ``load_latency(ins)``: the clocks a global load takes where the traffic model knows where it hits, and
    those of them it waits for DRAM."""
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
    if op == "mov" and _free_move(ins):
        return Cost(cls, 0.0, 0.0)
    if op in ("bfe", "bfi"):
        return Cost(cls, BITFIELD, LATENCY.get(cls, 4))
    if op == "bar.warp.sync":
        return Cost("int_add", 1.0, 1.0)  # converged lanes: a slot, no wait and no branch
    if op in ("bar", "barrier"):
        return Cost("control", 1.0, LATENCY["control"], BARRIER_CLOCKS)
    if op in ("membar", "fence"):
        return Cost("control", 1.0, FENCE_LATENCY[fence_scope(ins)])
    if op == "match" and "any" in info.other:
        return Cost("shuffle", *MATCH_ANY)
    if info.is_load:
        space = "global" if info.space == "generic" else info.space
        if load_latency is not None and space == "global":
            latency, dram = load_latency(ins)
            return Cost(cls, 1.0, latency, dram=dram)
        return Cost(cls, 1.0, LATENCY.get(space, 300))
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
    #: the issue cycles (``issue``; of them, the FMA pipe's: ``fma_issue``) and pipe cycles, summed over SMs, of
    #: the loop control that ptxas may unroll away (:func:`unrollable_loop_control`; included in
    #: ``issue_cycles``, ``fma_issue_cycles`` and ``pipe_cycles``)
    loop_control: dict[str, float] = field(default_factory=dict)
    #: of ``issue_cycles``, the FMA pipe's instructions' (fp32 and fp16 arithmetic)
    fma_issue_cycles: float = 0.0

    @property
    def compute_cycles(self) -> float:
        """SM clocks summed over SMs: the busier of the schedulers and the busiest pipe."""
        return max([self.issue_cycles, *self.pipe_cycles.values()])

    def to_dict(self) -> dict:
        return {"ctas": self.ctas, "threads": self.threads, "instructions": self.instructions,
                "warp_instructions": round(self.warp_instructions, 1), "issue_cycles": round(self.issue_cycles, 1),
                "fma_issue_cycles": round(self.fma_issue_cycles, 1),
                "pipe_cycles": {k: round(v, 1) for k, v in sorted(self.pipe_cycles.items())},
                "path_cycles_per_warp": {k: round(v, 1) for k, v in sorted(self.path_cycles.items())},
                "resident_ctas_per_sm": self.resident_ctas,
                "unrollable_loop_control_cycles": {k: round(v, 1) for k, v in sorted(self.loop_control.items())},
                "offchip_bytes": self.offchip_bytes}


def launch_work(module: Module, counts: BlockCounts, figures: GpuFigures,
                traffic: LaunchTraffic | None = None) -> LaunchWork:
    """The launch's executed instructions, issue and pipe cycles, one warp's latency path and its off-chip
    bytes (block counts are totals over all threads, so every figure grows with the work the launch does).
    Warp instructions count the lanes a warp runs a block with: the traffic's sample of the launch says how
    many on average where it ran the block (a branch that splits warps runs both sides), full warps
    elsewhere; so does the path of a warp, which runs every block any of its lanes enters."""
    rates = figures.rates
    instructions = warp_instructions = fma_issue = offchip = unknown = 0.0
    pipes: dict[str, float] = defaultdict(float)
    path: dict[str, float] = defaultdict(float)
    loop: dict[str, float] = defaultdict(float)
    launch = counts.launch
    full = _active_lanes(launch.threads_per_block)
    lanes = traffic.lanes_per_entry if traffic is not None else {}
    for fname, blocks in counts.counts.items():
        fn = module.function(fname)
        cfg = build_cfg(fn)
        invariant = _invariant_divisors(fn, cfg)
        latency = _load_latency(fn, traffic)
        unrollable = unrollable_loop_control(fn, cfg)
        for b in cfg.blocks:
            c = blocks.get(b.id, 0.0)
            if not c:
                continue
            active = lanes.get((fname, b.id), full)
            costs = [instruction_cost(ins, invariant, latency) for ins in b.instructions]
            control = unrollable.get(b.id, set())
            for kind, clocks in _block_path(b.instructions, costs, control).items():
                path[kind] += c / active * clocks  # warp entries: a warp runs each path its lanes take
            for k, (ins, cost) in enumerate(zip(b.instructions, costs, strict=True)):
                instructions += c
                warp_instructions += c * cost.count / active
                cycles = c * cost.count * cost.results / getattr(rates, cost.cls)
                pipe, issue = PIPES[cost.cls], c * cost.count / active / SCHEDULERS
                fma = issue if pipe == "fma" else 0.0
                pipes[pipe] += cycles
                fma_issue += fma
                if k in control:
                    loop[pipe] += cycles
                    loop["issue"] += issue
                    if fma:
                        loop["fma_issue"] += fma
                for space, nbytes in memory_traffic(ins):
                    if space == "unknown":
                        unknown += c
                    elif space in OFFCHIP:
                        offchip += c * nbytes
    warps = max(1.0, launch.threads / full)
    return LaunchWork(figures.name, launch.blocks, launch.threads, launch.threads_per_block, instructions,
                      warp_instructions, warp_instructions / SCHEDULERS, dict(pipes),
                      {k: v / warps for k, v in path.items()},
                      _resident(launch.blocks, launch.threads_per_block, figures), offchip, unknown, traffic,
                      loop_control=dict(loop), fma_issue_cycles=fma_issue)


def _block_path(instructions: list[Instruction], costs: list[Cost], control: set[int] = frozenset()
                ) -> dict[str, float]:
    """One execution of a block by one warp, in clocks: issue slots (``issue``) and how much longer its
    longest dependence chain takes (an instruction starts when the last of its producers in the block is
    ready; the compiler schedules a block's independent instructions, loads first,
    around the chains), told by what the chain waits for; a branch's latency before the next block is
    fetched (``control``); a fence's wait (``memory``). A global load after a global store in the block issues
    after it (they may alias: ptxas keeps their order, and the store waits for its data). The slots and the
    branch latency of the loop control at positions ``control`` (:func:`unrollable_loop_control`) are told
    apart (``loop_issue``, ``loop_control``)."""
    out: dict[str, float] = defaultdict(float)
    start: list[float] = []  # the clock each instruction starts at: its issue slot, or its producer's result
    via: list[int] = []  # the producer it waited for, -1 for none
    slot = 0.0
    store = -1  # the last store to global memory so far: a load after it cannot be hoisted above it
    writer: dict[str, int] = {}  # register -> the position in the block that last wrote it
    for k, cost in enumerate(costs):
        defs, uses, _ = operand_registers(instructions[k])
        p, ready = -1, 0.0  # the producer whose result comes last, and when
        for r in uses:
            w = writer.get(r, -1)
            if w >= 0 and start[w] + costs[w].latency > ready:
                p, ready = w, start[w] + costs[w].latency
        if store >= 0 and _ordered_load(instructions[k]) and start[store] > max(slot, ready):
            ready, p = start[store], store
        start.append(max(slot, ready))
        via.append(p if ready > slot else -1)
        slot += cost.count
        if instructions[k].info.opcode in ("st", "atom", "red") and instructions[k].info.space in GLOBAL:
            store = k
        writer.update(dict.fromkeys(defs, k))
        if k in control:
            out["loop_issue"] += cost.count
        if instructions[k].info.opcode in ("membar", "fence"):
            out["memory"] += cost.latency - 1
        elif cost.cls == "control":
            out["loop_control" if k in control else "control"] += cost.latency - 1
    out["issue"] += slot - out.get("loop_issue", 0.0)
    if costs:
        last = max(range(len(costs)), key=lambda k: start[k] + costs[k].count)
        delay = start[last] + costs[last].count - slot
        chain: dict[str, float] = defaultdict(float)
        k = last
        while via[k] >= 0:
            k = via[k]
            chain[_latency_kind(instructions[k])] += costs[k].latency - costs[k].dram
            chain["dram"] += costs[k].dram
        total = sum(chain.values())
        for kind, clocks in chain.items() if total > 0 else ():
            out[kind] += max(0.0, delay) * clocks / total
    return out


def unrollable_loop_control(fn: Function, cfg: BlockGraph) -> dict[int, set[int]]:
    """Per loop of one block that ptxas may unroll further (its body branches back to itself and carries no
    ``.pragma "nounroll"``), the positions in the block of its loop control: the branch back, the ``setp`` its
    guard comes from, and the integer adds of the block that the ``setp``'s operands come from (the trip
    counter: ``add %r, %r, -4``, and what is computed from it). Unrolled by a factor u, they run once every u
    trips."""
    pinned = _nounroll_labels(fn)
    out: dict[int, set[int]] = {}
    for b in cfg.blocks:
        ins = b.instructions
        if b.id not in cfg.succ.get(b.id, ()) or not ins or pinned & set(b.labels):
            continue
        last = len(ins) - 1
        if ins[last].info.opcode != "bra" or ins[last].guard is None:
            continue
        positions = {last}
        setp = _last_def(ins, last, ins[last].guard.name)
        if setp is not None and ins[setp].info.opcode == "setp":
            todo = [setp]
            while todo:
                k = todo.pop()
                positions.add(k)
                for op in ins[k].operands[1:]:
                    d = _last_def(ins, k, op.name) if isinstance(op, Reg) else None
                    if d is not None and d not in positions and ins[d].info.opcode in ("add", "sub") \
                            and ins[d].info.dtype[:1] in "usb":
                        todo.append(d)
        out[b.id] = positions
    return out


def _last_def(instructions: list[Instruction], before: int, reg: str) -> int | None:
    """The position of the last instruction before ``before`` that writes ``reg``."""
    for k in range(before - 1, -1, -1):
        if reg in operand_registers(instructions[k])[0]:
            return k
    return None


def _nounroll_labels(fn: Function) -> set[str]:
    """Labels of blocks that start with ``.pragma "nounroll"``."""
    out: set[str] = set()
    labels: list[str] = []
    for st in fn.body or ():
        if isinstance(st, Label):
            labels.append(st.name)
        elif isinstance(st, Pragma):
            if any("nounroll" in v for v in st.values):
                out.update(labels)
        else:
            labels = []
    return out


def _free_move(ins: Instruction) -> bool:
    """Whether a ``mov`` costs no machine instruction: an immediate, which ptxas folds into the operands of
    its users or hoists out of the loop, or another register of the same size, which register allocation
    makes the same register (not a special register, read by an instruction of its own)."""
    if len(ins.operands) != 2:
        return False
    src = ins.operands[1]
    return isinstance(src, Imm) or (isinstance(src, Reg) and special_register_type(src.name) is None)


def _ordered_load(ins: Instruction) -> bool:
    """Whether ``ins`` reads global memory that a store before it may have written, so that ptxas keeps it
    after that store (not ``ld.global.nc`` or ``ldu``, whose data the kernel does not write)."""
    info = ins.info
    return info.opcode in ("ld", "atom") and info.space in GLOBAL and "nc" not in info.cache


def fence_scope(ins: Instruction) -> str:
    """``device`` for a fence at GPU or system scope (``membar.gl``, ``fence.sc.gpu``, ``membar.sys``), ``cta``
    for one at CTA scope or a proxy fence."""
    info = ins.info
    wide = info.scope in ("gpu", "sys") or "gl" in info.other
    return "device" if wide and "proxy" not in info.other else "cta"


def _latency_kind(producer: Instruction) -> str:
    """What a wait for ``producer`` is attributed to: memory, the special-function unit, or arithmetic."""
    if producer.info.is_load or producer.info.group == isa.ATOMIC:
        return "memory"
    return "special" if issue_class(producer.info) in ("special", "fp_div", "conversion") else "arithmetic"


def _load_latency(fn: Function, traffic: LaunchTraffic | None) -> Callable[[Instruction], tuple[float, float]]:
    """Clocks of a global load of ``fn``, and those of them spent waiting for DRAM beyond an L2 hit: by its L1
    hit rate, and for its misses by the share of the launch's L2 reads that DRAM serves
    (:data:`GLOBAL_LOAD_LATENCY`; without traffic, as from DRAM)."""
    hits: dict[int, float] = {}
    dram = 1.0
    if traffic is not None:
        hits = {id(fn.instructions[i]): h for (f, i), h in traffic.l1_hit.items() if f == fn.name}
        l2 = traffic.l2_read_sectors.value * 32
        dram = min(1.0, traffic.dram_read_bytes.value / l2) if l2 > 0 else 1.0
    beyond = (GLOBAL_LOAD_LATENCY["dram"] - GLOBAL_LOAD_LATENCY["l2"]) * dram
    miss = GLOBAL_LOAD_LATENCY["l2"] + beyond

    def latency(ins: Instruction) -> tuple[float, float]:
        hit = hits.get(id(ins), 0.0)
        return hit * GLOBAL_LOAD_LATENCY["l1"] + (1 - hit) * miss, (1 - hit) * beyond

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
