"""The memory traffic of one launch: the one model every consumer reads (the absolute time estimate, the DVFS
model's memory share, the memory rules, the editor's hover, the report).

:func:`launch_traffic` takes a bound launch and its block counts: the sample of the launch
(:mod:`.sample`) gives each memory instruction's requests and sectors (:mod:`.requests`), the cache model
of the target GPU (:mod:`.caches`) what L1 serves, and per buffer the footprint, the L2 sectors and the
DRAM bytes. Every total has an interval: the range of the assumptions (an instruction the sample did not
reach, the usable share of L2) around the point. The result is computed once per (kernel, launch, GPU)
and kept (:func:`cached_traffic`).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ptxstatic.analysis.defuse import function_def_use
from ptxstatic.analysis.memory_access import address_inputs, pointer_params, sectors_of
from ptxstatic.hardware.figures import GpuFigures
from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import TRAFFIC_CACHE
from ptxstatic.ptx.dtypes import size_of
from ptxstatic.ptx.launch_binding import BoundLaunch
from ptxstatic.traffic.atomics import atomic_lines
from ptxstatic.traffic.caches import (
    L1_BYPASS,
    L2_RETAINED,
    L2_USABLE,
    PARTIAL_SCATTERED,
    SECTOR,
    UNPAIRED_RANDOM,
    BufferSample,
    ReuseDistances,
    Shape,
    fits,
    simulate_l1,
)
from ptxstatic.traffic.requests import InstructionTraffic, constant_replays, instruction_traffic
from ptxstatic.traffic.sample import (
    MADE_UP_BUFFER_BYTES,
    MADE_UP_FLOAT,
    MADE_UP_INTEGER,
    LaunchSample,
    complete_args,
    sample_launch,
)
from ptxstatic.traffic.spills import FREQUENCY_RANGE, spill_traffic

#: the least L1 capacity a CTA is given in the model (bytes)
MIN_L1_BYTES = 4096
#: the name under which traffic to memory outside the launch's buffers (or of instructions the sample did
#: not reach) is reported
UNATTRIBUTED = "(other)"


@dataclass(frozen=True)
class Estimate:
    """A quantity with its interval."""

    value: float
    low: float
    high: float

    def __add__(self, other: Estimate) -> Estimate:
        return Estimate(self.value + other.value, self.low + other.low, self.high + other.high)

    def scaled(self, k: float) -> Estimate:
        return Estimate(self.value * k, self.low * k, self.high * k)

    def to_dict(self) -> dict:
        return {"value": round(self.value, 1), "low": round(self.low, 1), "high": round(self.high, 1)}


ZERO = Estimate(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class BufferTraffic:
    """What the launch does to one buffer: its size (None when unknown), distinct bytes read and written, the
    L2 bytes it reads, and the DRAM bytes it moves: read, and written back during the launch (what L2 still
    holds dirty at its end is written back later, ``written_back`` includes it)."""

    name: str
    size: float | None
    footprint: Estimate
    l2_read_bytes: Estimate
    dram_read_bytes: Estimate
    dram_write_bytes: Estimate
    reuse: float  # L2 reads per distinct sector the sample saw
    written_back: Estimate = Estimate(0.0, 0.0, 0.0)

    def to_dict(self) -> dict:
        return {"name": self.name, "bytes": self.size, "footprint_bytes": self.footprint.to_dict(),
                "l2_read_bytes": self.l2_read_bytes.to_dict(), "dram_read_bytes": self.dram_read_bytes.to_dict(),
                "dram_write_bytes": self.dram_write_bytes.to_dict(), "reuse": round(self.reuse, 3)}


@dataclass(frozen=True)
class LaunchTraffic:
    gpu: str
    instructions: list[InstructionTraffic]
    l1_hit: dict[tuple[str, int], float]
    l1_sectors: Estimate  # global and local sectors the SMs' L1 looks up
    shared_wavefronts: Estimate
    l2_read_sectors: Estimate
    l2_write_sectors: Estimate
    l2_atomic_sectors: Estimate
    dram_read_bytes: Estimate
    dram_write_bytes: Estimate
    buffers: list[BufferTraffic]
    sampled: dict = field(default_factory=dict)  # what the sample ran
    assumptions: list[str] = field(default_factory=list)
    lanes_per_entry: dict[tuple[str, int], float] = field(default_factory=dict)  # (function, block) -> lanes
    l2_atomic_lines: float = 0.0  # the lines the global atomics spread over (:func:`.atomics.atomic_lines`)
    constant_replays: Estimate = ZERO  # constant-cache passes beyond one per ld.const request (.requests)
    #: store sectors beyond those the stores' bytes would fill: sectors written in part, one request each
    l2_partial_write_sectors: Estimate = ZERO

    @property
    def dram_bytes(self) -> Estimate:
        """DRAM bytes during the launch (what a profiler of one launch counts)."""
        return self.dram_read_bytes + self.dram_write_bytes

    @property
    def steady_dram_bytes(self) -> Estimate:
        """DRAM bytes per launch when launches follow each other: every written byte is written back, this
        launch's or the one before's."""
        return self.dram_read_bytes + sum((b.written_back for b in self.buffers), ZERO)

    @property
    def l2_sectors(self) -> Estimate:
        return self.l2_read_sectors + self.l2_write_sectors + self.l2_atomic_sectors

    def to_dict(self) -> dict:
        return {
            "gpu": self.gpu, "l1_sectors": self.l1_sectors.to_dict(),
            "shared_wavefronts": self.shared_wavefronts.to_dict(),
            "constant_replays": self.constant_replays.to_dict(),
            "l2_partial_write_sectors": self.l2_partial_write_sectors.to_dict(),
            "l2_read_bytes": self.l2_read_sectors.scaled(SECTOR).to_dict(),
            "l2_write_bytes": self.l2_write_sectors.scaled(SECTOR).to_dict(),
            "l2_atomic_bytes": self.l2_atomic_sectors.scaled(SECTOR).to_dict(),
            "l2_atomic_lines": round(self.l2_atomic_lines, 1),
            "dram_read_bytes": self.dram_read_bytes.to_dict(), "dram_write_bytes": self.dram_write_bytes.to_dict(),
            "buffers": [b.to_dict() for b in self.buffers],
            "instructions": [{**i.to_dict(), "l1_hit_rate": round(self.l1_hit.get((i.function, i.index), 0.0), 4)}
                             for i in self.instructions],
            "sampled": self.sampled, "assumptions": self.assumptions,
        }


def shared_per_cta(bound: BoundLaunch) -> int:
    """Bytes of shared memory one CTA holds: the module's static shared variables and the launch's dynamic."""
    return sum(_shared_bytes(bound)) + bound.launch.shared_bytes


def resident_ctas(bound: BoundLaunch, figures: GpuFigures) -> int:
    """CTAs one SM runs at a time: as many as the grid gives it, within the architecture's limits on CTAs,
    threads and shared memory (registers are not counted: their use is known only after ptxas)."""
    arch = ARCHS.get(figures.arch)
    shared = shared_per_cta(bound)
    per_sm = math.ceil(bound.launch.blocks / figures.sms)
    if arch is not None:
        per_sm = min(per_sm, arch.max_blocks_per_sm, max(1, arch.max_threads_per_sm // bound.launch.threads_per_block))
        if shared:
            per_sm = min(per_sm, max(1, arch.shared_per_sm // shared))
    return max(1, per_sm)


def l1_capacity(bound: BoundLaunch, figures: GpuFigures) -> int:
    """Bytes of L1 one CTA has to itself: the SM's unified L1/shared memory less the shared memory of the CTAs
    resident with it (or the L1 cache alone where shared memory is separate), shared among them."""
    per_sm = resident_ctas(bound, figures)
    if figures.l1_cache_bytes_per_sm is not None:
        return max(MIN_L1_BYTES, figures.l1_cache_bytes_per_sm // per_sm)
    return max(MIN_L1_BYTES, (figures.l1_bytes_per_sm - per_sm * shared_per_cta(bound)) // per_sm)


def _shared_bytes(bound: BoundLaunch) -> list[int]:
    from ptxstatic.emulator.memory import decl_size

    decls = [d for d in bound.module.globals if d.space == "shared"]
    decls += [s for f in bound.module.functions for s in f.statements
              if getattr(s, "space", None) == "shared" and hasattr(s, "names")]
    return [decl_size(d, n) for d in decls for n in d.names]


def _bypass(bound: BoundLaunch, figures: GpuFigures) -> frozenset[tuple[str, int]]:
    """The loads that do not allocate in L1: by their modifiers, and on a GPU whose L1 does not cache global
    loads every global load but a read-only one (``ld.global.nc``)."""
    out = set()
    for fn in bound.module.functions:
        for i, ins in enumerate(fn.instructions if fn.body is not None else ()):
            info = ins.info
            if not info.is_load:
                continue
            modifiers = set(info.cache + info.other)
            if (L1_BYPASS & modifiers or info.scope in ("gpu", "sys")
                    or (not figures.l1_caches_global_loads and info.space in ("global", "generic")
                        and "nc" not in modifiers)):
                out.add((fn.name, i))
    return frozenset(out)


_CACHE: OrderedDict[tuple, LaunchTraffic] = OrderedDict()


def launch_traffic(bound: BoundLaunch, counts: dict[str, dict[int, float]], figures: GpuFigures,
                   sample: LaunchSample | None = None) -> LaunchTraffic:
    """The traffic of ``bound`` with its block counts (thread entries per block over the launch) on
    ``figures``'s GPU (module docstring); computed once per module, kernel, launch, counts and GPU in a
    process and kept (:data:`~ptxstatic.limits.TRAFFIC_CACHE` of them)."""
    key = (id(bound.module), bound.name, json.dumps(bound.launch.to_dict(), sort_keys=True), figures.name,
           tuple(sorted((f, tuple(sorted(b.items()))) for f, b in counts.items())))
    if sample is None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    traffic = _launch_traffic(bound, counts, figures, sample)
    _CACHE[key] = traffic
    while len(_CACHE) > TRAFFIC_CACHE:
        _CACHE.popitem(last=False)
    return traffic


def _launch_traffic(bound: BoundLaunch, counts: dict[str, dict[int, float]], figures: GpuFigures,
                    sample: LaunchSample | None) -> LaunchTraffic:
    pointers = pointer_params(bound.kernel, function_def_use(bound.kernel))
    args, scalars, made_up = complete_args(bound.kernel, dict(bound.launch.args), pointers, MADE_UP_BUFFER_BYTES)
    if sample is None:
        launch = Launch(bound.launch.grid, bound.launch.block, bound.launch.shared_bytes, args)
        sample = sample_launch(bound.module, bound.kernel, launch)
    instructions = instruction_traffic(bound.module, counts, sample)
    capacity = l1_capacity(bound, figures)
    l1 = simulate_l1(sample.requests, capacity, figures.line_bytes, _bypass(bound, figures))
    hit = {(i.function, i.index): l1.hit_rate((i.function, i.index)) for i in instructions
           if (i.kind == "load" or i.space == "local") and i.method == "emulated"}
    assumptions = [a for a in dict.fromkeys(i.assumption for i in instructions) if a]
    if scalars:
        assumptions.append("the launch does not give " + ", ".join(sorted(scalars)) + f": the sample took integers "
                           f"as {MADE_UP_INTEGER} and floating-point values as {MADE_UP_FLOAT:g}")
    if made_up:
        assumptions.append("the launch gives no buffer for " + ", ".join(sorted(made_up)) + ": zeros of a size "
                           "not known, so their footprints are not bounded")
    l1_sectors = shared = l2_read = l2_write = l2_atomic = partial = ZERO
    for i in instructions:
        cost = Estimate(i.cost, i.cost_low, i.cost_high).scaled(i.requests)
        if i.space == "shared":
            shared += cost
            continue
        l1_sectors += cost
        missed = cost.scaled(1.0 - hit.get((i.function, i.index), 0.0))
        if i.kind == "load":
            l2_read += missed
        elif i.kind == "store":
            l2_write += missed
            full = i.lanes_per_request * i.width / SECTOR  # sectors the request's bytes would fill
            partial += Estimate(*(max(0.0, c - full) for c in (i.cost, i.cost_low, i.cost_high))).scaled(i.requests)
        else:
            l2_atomic += cost
    buffers = _buffers(bound, sample, l1.to_l2, instructions, hit, figures, made_up)
    sampled = {"ctas": sample.ctas, "requests": len(sample.requests), "warp_instructions": sample.warp_instructions,
               "stopped": sample.stopped}
    dram_read = sum((b.dram_read_bytes for b in buffers), ZERO)
    dram_write = sum((b.dram_write_bytes for b in buffers), ZERO)
    spills = spill_traffic(bound, counts, figures, capacity, resident_ctas(bound, figures))
    if spills is not None:
        l1_sectors += _spread(spills.load_sectors + spills.store_sectors)
        l2_read += _spread(spills.l2_read_sectors)
        l2_write += _spread(spills.l2_write_sectors)
        dram_read += _spread(spills.dram_read_bytes)
        dram_write += _spread(spills.dram_write_bytes)
        assumptions.append(spills.assumption())
    lanes = {(f, b): n / sample.warp_entries[f][b] for f, blocks in sample.entries.items()
             for b, n in blocks.items() if sample.warp_entries.get(f, {}).get(b)}
    lines = atomic_lines(sample, figures.line_bytes, _buffer_ranges(bound, made_up), bound.launch.blocks)
    replays = Estimate(*constant_replays(bound.module, counts, sample))
    return LaunchTraffic(figures.name, instructions, hit, l1_sectors, shared, l2_read, l2_write, l2_atomic,
                         dram_read, dram_write, buffers, sampled, assumptions, lanes, lines, replays, partial)


def _buffer_sizes(bound: BoundLaunch) -> dict[str, int]:
    return {name: v.count * size_of(v.dtype) for name, v in bound.launch.args.items() if isinstance(v, Buffer)}


def _buffer_ranges(bound: BoundLaunch, made_up: frozenset[str]) -> dict[str, int]:
    """Where each buffer's bytes are: its size, or the sample's made-up size for a buffer the launch lacks."""
    return {**_buffer_sizes(bound), **dict.fromkeys(made_up, MADE_UP_BUFFER_BYTES)}


def _spread(value: float) -> Estimate:
    """A spill figure with its interval (:data:`~.spills.FREQUENCY_RANGE`)."""
    low, high = FREQUENCY_RANGE
    return Estimate(value, value * low, value * high)


def _interval(f: Callable[[float], float], x: Estimate) -> Estimate:
    return Estimate(f(x.value), f(x.low), f(x.high))


def _buffers(bound: BoundLaunch, sample: LaunchSample, to_l2: list, instructions: list[InstructionTraffic],
             hit: dict[tuple[str, int], float], figures: GpuFigures, made_up: frozenset[str]
             ) -> list[BufferTraffic]:
    """Per buffer, its sectors over the launch (each instruction's sectors shared among the buffers as in the
    sample), the L2 reads among them, and the DRAM bytes of the wave model (module docstring of
    :mod:`.caches`): the distinct sectors one CTA and one wave touch come from the sample's requests as the
    SMs make them, before L1, whose reuse within the sample is what the CTAs share at one time."""
    sizes, ranges = _buffer_sizes(bound), _buffer_ranges(bound, made_up)
    seen: dict[str, BufferSample] = defaultdict(BufferSample)
    share: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    streams = ReuseDistances()
    sent_reads: dict[str, int] = defaultdict(int)  # the sample's L2 read sectors per buffer
    for r, sent in zip(sample.requests, to_l2, strict=True):
        if r.space != "global" or sent is None:
            continue
        name = sample.buffer_of(int(r.addresses[0]), ranges) or UNATTRIBUTED
        share[(r.function, r.index)][name] += len(sectors_of(r.addresses, r.width))
        streams.add(r.cta, r.warp, sent, name if r.kind == "load" else None)
        if r.kind == "load":
            sent_reads[name] += len(sent)
        if r.kind == "load":
            seen[name].add_read(r.cta, sectors_of(r.addresses, r.width))
        elif r.kind == "store":
            seen[name].add_write(r.cta, r.addresses, r.width)
    reads: dict[str, Estimate] = defaultdict(lambda: ZERO)  # sectors the SMs ask for (before L1)
    l2_reads: dict[str, Estimate] = defaultdict(lambda: ZERO)  # ... of which L1 misses
    writes: dict[str, Estimate] = defaultdict(lambda: ZERO)
    for i in instructions:
        if i.space != "global" or i.kind == "atomic":
            continue
        parts = share.get((i.function, i.index)) or {_static_buffer(bound, i, ranges): 1.0}
        total = sum(parts.values())
        sectors = Estimate(i.cost, i.cost_low, i.cost_high).scaled(i.requests)
        for name, n in parts.items():
            if i.kind == "load":
                reads[name] += sectors.scaled(n / total)
                l2_reads[name] += sectors.scaled(n / total * (1.0 - hit.get((i.function, i.index), 0.0)))
            else:
                writes[name] += sectors.scaled(n / total)
    ctas, row = bound.launch.blocks, bound.launch.grid[0]
    wave = min(ctas, figures.sms * resident_ctas(bound, figures))
    shapes = {}
    for name in sorted(set(reads) | set(writes)):
        b = seen.get(name, BufferSample())
        cap = sizes[name] / SECTOR if name in sizes else math.inf
        shapes[name] = (_waves(reads.get(name, ZERO), b.read_shape(row), ctas, row, wave, cap),
                        _waves(writes.get(name, ZERO), b.write_shape(row), ctas, row, wave, cap), b)
    working_set = SECTOR * sum(r.working_set + w.working_set for r, w, _ in shapes.values())
    kept = [fits(working_set, figures.l2_bytes, u) for u in L2_USABLE]  # lowest, point, highest usable share
    warps = wave * math.ceil(bound.launch.threads_per_block / 32)
    distances = streams.by_buffer()
    out = []
    for name, (r, w, b) in shapes.items():
        pair = 1.0 + b.unpaired if b.unpaired >= UNPAIRED_RANDOM else 1.0
        read = r.dram(kept).scaled(SECTOR * pair)
        if name in distances:  # sectors a warp reads again after L2 let them go
            apart = distances[name] * SECTOR * warps
            lost = [float((1.0 - fits(apart, figures.l2_bytes, u)).sum()) / sent_reads[name] for u in L2_USABLE]
            again = l2_reads.get(name, ZERO).scaled(SECTOR * pair)
            read = read + Estimate(again.value * lost[1], again.low * lost[2], again.high * lost[0])
        written = w.dram(kept).scaled(SECTOR)
        if b.partial_writes >= PARTIAL_SCATTERED:  # partly written sectors are read before written back
            read = read + written.scaled(b.partial_writes)
        footprint = Estimate(*(SECTOR * max(x, y) for x, y in zip(r.footprint, w.footprint, strict=True)))
        out.append(BufferTraffic(name, sizes.get(name), footprint, l2_reads.get(name, ZERO).scaled(SECTOR), read,
                                 written, r.reuse))
    return _retained(out, figures)


def _static_buffer(bound: BoundLaunch, i: InstructionTraffic, sizes: dict[str, int]) -> str:
    """The buffer an instruction the sample did not reach accesses, when its address is computed from one
    buffer parameter of the kernel (else :data:`UNATTRIBUTED`)."""
    fn = bound.module.function(i.function)
    if not fn.is_kernel:
        return UNATTRIBUTED
    params = address_inputs(fn, function_def_use(fn), i.index).params & set(sizes)
    return next(iter(params)) if len(params) == 1 else UNATTRIBUTED


@dataclass(frozen=True)
class _Waves:
    """One direction (reads or writes) of one buffer in the wave model, in sectors."""

    touches: Estimate  # what the launch touches if data shared between rows of CTAs is touched again apart
    footprint: tuple[float, float, float]  # (point, low, high) distinct sectors, at most the buffer
    working_set: float  # what one wave of resident CTAs touches
    reuse: float

    def dram(self, kept: list[float]) -> Estimate:
        """The footprint once, and the touches beyond it as often as L2 no longer holds them."""
        lowest, point, highest = kept
        fp, lo, hi = self.footprint
        return Estimate(fp + max(0.0, self.touches.value - fp) * (1.0 - point),
                        lo + max(0.0, self.touches.low - lo) * (1.0 - highest),
                        hi + max(0.0, self.touches.high - hi) * (1.0 - lowest))


def _waves(sectors: Estimate, shape: Shape, ctas: int, row: int, wave: int, cap: float) -> _Waves:
    """The wave model of one buffer's reads or writes. A CTA's distinct sectors over its life are its sectors
    over the reuse within it; a wave of resident CTAs touches that many for its first CTA and the new share
    (from the sample) for each further CTA along x and each further row it spans. The launch's distinct
    sectors come the same way over the whole grid, at most the buffer. Neighbours along x start together and
    share data at the same time; rows of CTAs apart do not: what a row shares with an earlier one is touched
    again later, and found in L2 only while the working set fits (:func:`~.caches.fits`)."""
    rows = max(1, ctas // row)
    per_cta = 1.0 / (shape.reuse * ctas)

    def spread(n_x: float, n_rows: float, along_rows: float) -> float:
        return (1.0 + (n_x - 1.0) * shape.along_x) * (1.0 + (n_rows - 1.0) * along_rows)

    distinct = sectors.value * per_cta * spread(row, rows, shape.along_rows)
    touches = sectors.scaled(per_cta * spread(row, rows, 1.0))
    in_wave = spread(row, wave / row, shape.along_rows) if wave >= row else spread(wave, 1.0, shape.along_rows)
    footprint = tuple(min(cap, distinct, x) for x in (touches.value, touches.low, touches.high))
    working = min(cap, sectors.value * per_cta * in_wave)
    return _Waves(touches, footprint, working, shape.reuse)  # type: ignore[arg-type]


def _retained(buffers: list[BufferTraffic], figures: GpuFigures) -> list[BufferTraffic]:
    """Writes less what L2 still holds dirty when the kernel ends (written back later), shared among the
    buffers in proportion to their writes."""
    total = sum(b.dram_write_bytes.value for b in buffers)
    if total <= 0:
        return [replace(b, written_back=b.dram_write_bytes) for b in buffers]
    out = []
    for b in buffers:
        k = b.dram_write_bytes.value / total
        held = [k * share * figures.l2_bytes for share in L2_RETAINED]  # lowest, point, highest
        w = b.dram_write_bytes
        kept_back = Estimate(max(0.0, w.value - held[1]), max(0.0, w.low - held[2]), max(0.0, w.high - held[0]))
        out.append(replace(b, dram_write_bytes=kept_back, written_back=w))
    return out


def traffic_summary(traffic: LaunchTraffic, instructions: int = 5) -> dict:
    """What a report shows of a launch's traffic: the bytes at each level with their intervals, the buffers,
    the ``instructions`` memory instructions that move the most sectors, how it was sampled, the
    assumptions."""
    top = sorted((i for i in traffic.instructions if i.space != "shared"), key=lambda i: -i.sectors)[:instructions]
    return {
        "l1_bytes": traffic.l1_sectors.scaled(SECTOR).to_dict(),
        "shared_wavefronts": traffic.shared_wavefronts.to_dict(),
        "l2_bytes": traffic.l2_sectors.scaled(SECTOR).to_dict(),
        "dram_read_bytes": traffic.dram_read_bytes.to_dict(), "dram_write_bytes": traffic.dram_write_bytes.to_dict(),
        "buffers": [b.to_dict() for b in traffic.buffers],
        "instructions": [{**i.to_dict(), "l1_hit_rate": round(traffic.l1_hit.get((i.function, i.index), 0.0), 4)}
                         for i in top],
        "sampled": traffic.sampled, "assumptions": traffic.assumptions,
    }
