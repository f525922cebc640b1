"""A cache model of the target GPU, run on the sampled requests and scaled to the launch.

**L1** (per SM): each sampled CTA's global and local requests, in the order its warps made them, go through
an LRU cache of 128-byte lines filled 32-byte sector by sector, of the capacity the CTA has to itself: the
SM's unified L1/shared memory, less the shared memory of the CTAs resident with it, shared among them
(on a GPU consecutive CTAs run on different SMs, so the sampled CTAs do not share an L1). Loads allocate
(``ld.global.cg``, ``.cv``, ``.volatile`` and GPU- or system-scope ordered loads bypass L1); global stores
are written through to L2 and atomics are done there; local memory (a thread's stack and spills, its
lanes' words interleaved) is written back: its stores allocate too, and reach L2 when they miss.
The hit rate of each load is its hits over its sectors.

**L2 and DRAM**: what misses L1 reaches L2. Per buffer, the sample's L2 sectors over its distinct sectors
is the reuse the sample sees; the launch's distinct sectors (its footprint) are its L2 sectors over that
reuse, at most the buffer's size. L2 keeps what is touched again within the sample; a sector touched again
later (the launch's L2 sectors beyond what the footprint and the sample's reuse account for) is found in L2
with the probability that the launch's whole footprint fits in the part of L2 one access can use
(:data:`L2_USABLE`, an assumption calibrated on the H200's counters), else read from DRAM again. DRAM moves
32-byte sectors in pairs: a missed sector whose neighbour in its 64-byte pair the sample never touches costs
the pair (random accesses read twice the bytes they need). Stores write back their distinct sectors.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.memory_access import sectors_of
from ptxstatic.traffic.sample import Request

#: the share of L2 one access can count on finding its data in (an assumption: H100/H200 split L2 into two
#: partitions, and part of it holds other data): (lowest, point, highest), calibrated on the H200's counters
L2_USABLE = (0.35, 0.5, 0.8)
#: the share of L2 that holds written data not yet written back when a kernel ends: (lowest, point, highest),
#: calibrated on the H200's counters (streaming writes leave 20 to 27 MB of its 60 MB behind)
L2_RETAINED = (0.3, 0.4, 0.5)
#: share of a buffer's sampled sectors without their 64-byte pair neighbour from which accesses are taken to be
#: scattered, DRAM reading whole pairs for single sectors
UNPAIRED_RANDOM = 0.5
#: share of a buffer's sampled written sectors that the sample writes only in part from which the writes are
#: taken to be scattered, L2 reading each such sector from DRAM before writing it back (fewer are the edges
#: of the sampled CTAs' region, whose other bytes the neighbouring CTAs write)
PARTIAL_SCATTERED = 0.5
#: load modifiers that bypass L1
L1_BYPASS = frozenset({"cg", "cv", "volatile"})
SECTOR = 32


@dataclass
class L1Result:
    """Per (function, instruction index): sectors and L1 hits of the sampled loads; per sampled request (in
    order) the sectors it sends on to L2 (every sector of a store or an atomic, the misses of a load; None
    for shared memory)."""

    sectors: dict[tuple[str, int], int]
    hits: dict[tuple[str, int], int]
    to_l2: list[np.ndarray | None]

    def hit_rate(self, key: tuple[str, int]) -> float:
        n = self.sectors.get(key, 0)
        return self.hits.get(key, 0) / n if n else 0.0


def simulate_l1(requests: Iterable[Request], capacity: int, line: int = 128, bypass: frozenset = frozenset()
                ) -> L1Result:
    """Run the sampled CTAs' requests through one LRU L1 each (module docstring); ``bypass``: the (function,
    index) of loads that do not use L1 for global memory."""
    lines_held = max(1, capacity // line)
    caches: dict[int, OrderedDict[int, set[int]]] = defaultdict(OrderedDict)
    sectors: dict[tuple[str, int], int] = defaultdict(int)
    hits: dict[tuple[str, int], int] = defaultdict(int)
    to_l2: list[np.ndarray | None] = []
    for r in requests:
        if r.space == "shared":
            to_l2.append(None)
            continue
        key = (r.function, r.index)
        touched = sectors_of(r.addresses, r.width)
        cached = (r.kind == "load" and key not in bypass) or r.space == "local"  # local memory is always cached
        if not cached:
            to_l2.append(touched)
            continue
        sectors[key] += len(touched)
        missed = [s for s in touched.tolist() if not _lookup(caches[r.cta], s, line, lines_held)]
        hits[key] += len(touched) - len(missed)
        to_l2.append(np.asarray(missed, dtype=np.uint64))
    return L1Result(dict(sectors), dict(hits), to_l2)


def _lookup(cache: OrderedDict[int, set[int]], sector: int, line: int, lines_held: int) -> bool:
    """Whether ``sector`` hits in ``cache``; a miss fills it (evicting the least recently used line)."""
    tag = sector * SECTOR // line
    held = cache.get(tag)
    if held is None:
        held = cache[tag] = set()
        if len(cache) > lines_held:
            cache.popitem(last=False)
    else:
        cache.move_to_end(tag)
    if sector in held:
        return True
    held.add(sector)
    return False


@dataclass(frozen=True)
class Shape:
    """How the sampled CTAs touch one buffer: sectors per distinct sector within a CTA (``reuse``), and the
    share of a CTA's distinct sectors that its neighbour along x (``along_x``) or in the next row
    (``along_rows``) does not touch: 0 when neighbours touch the same data, 1 when none of it."""

    reuse: float = 1.0
    along_x: float = 1.0
    along_rows: float = 1.0

    @classmethod
    def of(cls, by_cta: dict[int, list[int]], row: int) -> Shape:
        """From each sampled CTA's sectors (linear CTA id -> its sectors, repeats kept); ``row``: CTAs per row
        of the grid."""
        if not by_cta:
            return cls()
        sets = {c: set(v) for c, v in by_cta.items() if v}
        reuse = sum(len(by_cta[c]) for c in sets) / max(1, sum(len(v) for v in sets.values()))

        def new(step: int) -> float:
            pairs = [(a, a + step) for a in sets if a + step in sets and (step != 1 or (a + 1) % row)]
            if not pairs:
                return 1.0
            return sum(len(sets[b] - sets[a]) / len(sets[b]) for a, b in pairs) / len(pairs)

        return cls(max(1.0, reuse), new(1), new(row))


@dataclass
class BufferSample:
    """What the sampled CTAs' L2-level requests did to one buffer (or to memory outside the buffers): per CTA
    the sectors it read from L2 (L1 misses) and wrote, and which bytes of each written sector were written."""

    read: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))  # cta -> sectors, repeats kept
    written: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    written_bytes: dict[int, int] = field(default_factory=lambda: defaultdict(int))  # sector -> mask of its bytes

    def add_read(self, cta: int, sectors: np.ndarray) -> None:
        self.read[cta] += sectors.tolist()

    def add_write(self, cta: int, addresses: np.ndarray, width: int) -> None:
        self.written[cta] += sectors_of(addresses, width).tolist()
        for a in addresses.tolist():
            for b in range(a, a + width):
                self.written_bytes[b // SECTOR] |= 1 << (b % SECTOR)

    def read_shape(self, row: int) -> Shape:
        return Shape.of(self.read, row)

    def write_shape(self, row: int) -> Shape:
        return Shape.of(self.written, row)

    @property
    def unpaired(self) -> float:
        """Share of the distinct read sectors whose 64-byte pair neighbour the sample never reads."""
        distinct = set().union(*map(set, self.read.values())) if self.read else set()
        if not distinct:
            return 0.0
        return sum(1 for s in distinct if (s ^ 1) not in distinct) / len(distinct)

    @property
    def partial_writes(self) -> float:
        """Share of the written sectors whose 32 bytes the sample does not all write."""
        if not self.written_bytes:
            return 0.0
        full = (1 << SECTOR) - 1
        return sum(1 for m in self.written_bytes.values() if m != full) / len(self.written_bytes)


class ReuseDistances:
    """Per (CTA, warp), the stream of sectors it sends to L2 in order; per buffer, for each sector read again by
    the warp that read it before, the distance: how many sectors the warp sent to L2 in between. With every
    resident warp of the GPU sending alike, the L2 sees that many times the resident warps in between, and
    holds the sector only while that fits (:func:`fits`): a warp walking its own rows, each lane its own,
    reads each sector again a loop iteration later, after the whole GPU's iteration. An assumption: the
    resident warps progress alike and each sends L2 as much as the sampled one."""

    def __init__(self) -> None:
        self._streams: dict[tuple[int, int], list[tuple[np.ndarray, str | None]]] = defaultdict(list)

    def add(self, cta: int, warp: int, sectors: np.ndarray, read_of: str | None) -> None:
        """``sectors`` sent to L2 by one request; ``read_of``: the buffer a load reads, None for a write."""
        if len(sectors):
            self._streams[(cta, warp)].append((sectors, read_of))

    def by_buffer(self) -> dict[str, np.ndarray]:
        """The distances of the repeated reads, per buffer, of sectors that no other sampled warp reads (what
        warps share, such as a vector every warp reads, other warps keep touching, so L2 keeps it)."""
        names = sorted({n for stream in self._streams.values() for _, n in stream if n is not None})
        code = {n: i for i, n in enumerate(names)}
        streams = [(np.concatenate([s for s, _ in stream]).astype(np.int64),
                    np.repeat([code.get(n, -1) for _, n in stream], [len(s) for s, _ in stream]))
                   for stream in self._streams.values()]
        distinct, readers = np.unique(np.concatenate([np.unique(s) for s, _ in streams] or [np.empty(0, np.int64)]),
                                      return_counts=True)
        shared = distinct[readers > 1]
        out: dict[str, list[np.ndarray]] = defaultdict(list)
        for sectors, of in streams:
            order = np.argsort(sectors, kind="stable")
            repeat = np.flatnonzero(sectors[order][1:] == sectors[order][:-1])
            later, earlier = order[repeat + 1], order[repeat]
            private = ~np.isin(sectors[later], shared)
            for i, name in enumerate(names):
                mine = private & (of[later] == i)
                if mine.any():
                    out[name].append((later - earlier)[mine])
        return {n: np.concatenate(v).astype(np.float64) for n, v in out.items()}


def fits(working_set: float | np.ndarray, l2_bytes: float, usable: float) -> float | np.ndarray:
    """The share of data touched again one working set later that L2 still holds: all of it while the working
    set fits in the usable part of L2, none once it is twice that (an LRU cache swept cyclically), linear
    between; element by element for an array of working sets."""
    room = usable * l2_bytes
    if room <= 0:
        return np.zeros_like(working_set) if isinstance(working_set, np.ndarray) else 0.0
    kept = np.clip(2.0 - np.asarray(working_set, dtype=np.float64) / room, 0.0, 1.0)
    return kept if isinstance(working_set, np.ndarray) else float(kept)
