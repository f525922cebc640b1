"""The per-lane addresses of a launch's memory instructions, from emulating a sample of its CTAs.

The first CTAs of the grid (:data:`~ptxstatic.limits.TRAFFIC_SAMPLE_CTAS` of them, in linear order: on a GPU
they run at the same time, on different SMs) run on the emulator with the launch's own arguments and
buffers, their every warp for its barriers, until they finish or their equal shares of the sample's budget
of warp instructions or seconds run out (:data:`~ptxstatic.limits.TRAFFIC_MAX_STEPS`,
:data:`~ptxstatic.limits.TRAFFIC_SECONDS`).
Every global request is kept in the order the warps made it (what a cache sees); shared and local requests
are kept too, and apart from them the requests to constant memory (served by the constant caches). With the
sampled CTAs' thread entries per block, each instruction's requests per thread entry of its block are known,
which scales the sample to the launch's block counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.emulator import CodeCache, Emulation, EmulationError, MemoryAccess, StopEmulation, emulate
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import TRAFFIC_MAX_STEPS, TRAFFIC_SAMPLE_CTAS, TRAFFIC_SECONDS
from ptxstatic.ptx.ast import Function, Module

#: the values a made-up argument gets, and the bytes of a made-up buffer of the traffic sample (laid out, not
#: allocated: only the pages the sample touches are made)
MADE_UP_INTEGER = 1024
MADE_UP_FLOAT = 1.0
MADE_UP_BUFFER_BYTES = 1 << 30
#: warp instructions a warp runs before the next warp of its CTA gets its turn (interleaves the warps' requests
#: as the hardware's warp schedulers do, at a coarse grain)
TIME_SLICE = 16


@dataclass(frozen=True, slots=True)
class Request:
    """One warp's request of one memory instruction in one state space."""

    function: str
    index: int  # the instruction's index in its function
    cta: int  # linear id of the CTA
    warp: int
    space: str
    kind: str  # load, store or atomic
    lanes: np.ndarray
    addresses: np.ndarray
    width: int


@dataclass
class LaunchSample:
    """What the emulated CTAs did: their requests in order, thread entries per block, and how the run ended."""

    launch: Launch
    ctas: list[int]
    requests: list[Request] = field(default_factory=list)
    constant: list[Request] = field(default_factory=list)  # loads from .const, not through L1
    entries: dict[str, dict[int, float]] = field(default_factory=dict)  # function -> block -> thread entries
    warp_entries: dict[str, dict[int, float]] = field(default_factory=dict)  # function -> block -> warp entries
    buffers: dict[str, int] = field(default_factory=dict)  # buffer parameter -> global address
    stopped: str | None = None  # why the sample ended before the CTAs finished
    warp_instructions: int = 0

    def buffer_of(self, address: int, sizes: dict[str, int]) -> str | None:
        """The buffer parameter whose bytes hold ``address``, if any."""
        for name, base in self.buffers.items():
            if base <= address < base + sizes.get(name, 0):
                return name
        return None


def complete_args(fn: Function, given: dict, pointers: set[str], buffer_bytes: int
                  ) -> tuple[dict[str, int | float | Buffer], frozenset[str], frozenset[str]]:
    """The arguments of a launch of ``fn`` (``given``: bound ones, keyed by PTX name) with those it leaves
    out made up: a zero-filled buffer of ``buffer_bytes`` for a pointer (``pointers``: the parameters used as
    addresses), :data:`MADE_UP_INTEGER` for an integer, :data:`MADE_UP_FLOAT` for a floating-point value,
    zeros for an aggregate passed by value; and the names of the scalars and of the buffers made up."""
    args: dict[str, int | float | Buffer] = {}
    scalars, buffers = set(), set()
    for decl in fn.params or ():
        for d in decl.names:
            value = given.get(d.name)
            if value is None:
                if d.dims:  # a structure passed by value, even one whose first field is a pointer
                    value = 0
                elif d.name in pointers:
                    value = Buffer("u32", buffer_bytes // 4)
                else:
                    value = MADE_UP_FLOAT if decl.dtype in ("f32", "f64") else MADE_UP_INTEGER
                (buffers if isinstance(value, Buffer) else scalars).add(d.name)
            args[d.name] = value
    return args, frozenset(scalars), frozenset(buffers)


def sample_ctas(launch: Launch) -> list[tuple[int, int, int]]:
    """The CTAs a sample runs: in a grid of several rows (y and z together) two neighbours along x in each of
    the first two rows, so that the data neighbours share along x and along the rows both show; else the
    first ones of the grid in linear order."""
    gx, gy, _ = launch.grid
    n = min(launch.blocks, TRAFFIC_SAMPLE_CTAS)
    if gx >= 2 and launch.blocks // gx >= 2 and n >= 4:
        return [(0, 0, 0), (1, 0, 0), (0, 1 % gy, 1 // gy), (1, 1 % gy, 1 // gy)]
    return [(c % gx, c // gx % gy, c // (gx * gy)) for c in range(n)]


def sample_launch(module: Module, kernel: Function, launch: Launch, *, max_steps: int = TRAFFIC_MAX_STEPS,
                  seconds: float = TRAFFIC_SECONDS) -> LaunchSample:
    """Emulate the sampled CTAs of a bound launch and keep their requests (module docstring). Each CTA gets an
    equal share of the budget, so that a sample cut short holds every CTA at the same progress, as they run at
    the same time on a GPU. A fault of the emulated program or an instruction the emulator does not model ends
    that CTA's part with the reason."""
    ctas = sample_ctas(launch)
    gx, gy, _ = launch.grid
    out = LaunchSample(launch, [x + gx * (y + gy * z) for x, y, z in ctas])
    index: dict[int, tuple[str, int]] = {}
    for fn in module.functions:
        for i, ins in enumerate(fn.instructions if fn.body is not None else ()):
            index[id(ins)] = (fn.name, i)
    compiled = CodeCache()
    for cta in ctas:
        run = _run_cta(module, kernel, launch, cta, index, out, max_steps // len(ctas), seconds / len(ctas),
                       compiled)
        if run is None:
            break
        for total, counted in ((out.entries, run.counts.counts), (out.warp_entries, run.warp_entries)):
            for name, blocks in counted.items():
                mine = total.setdefault(name, {})
                for b, n in blocks.items():
                    mine[b] = mine.get(b, 0.0) + n
        out.buffers = run.buffer_addresses
        out.warp_instructions += run.warp_instructions
        out.stopped = out.stopped or run.stopped
    return out


def _run_cta(module: Module, kernel: Function, launch: Launch, cta: tuple[int, int, int],
             index: dict[int, tuple[str, int]], out: LaunchSample, steps: int, seconds: float,
             compiled: CodeCache) -> Emulation | None:
    """Emulate one CTA within its share of the budget, adding its requests to ``out``; None when the launch
    cannot be emulated at all (``out.stopped`` says why)."""
    gx, gy, _ = launch.grid
    deadline = time.monotonic() + seconds

    def observe(access: MemoryAccess) -> None:
        where = index.get(id(access.instruction))
        if where is not None:
            x, y, z = access.cta
            addresses = access.addresses
            if access.space == "local":  # each warp's frames, its lanes' words interleaved, as the hardware
                lanes = access.lanes.astype(np.uint64)
                addresses = (addresses // 4 * 128 + lanes * 4 + addresses % 4) + np.uint64((access.warp + 1) << 32)
            kept = out.constant if access.space == "const" else out.requests
            kept.append(Request(where[0], where[1], x + gx * (y + gy * z), access.warp, access.space,
                                access.kind, access.lanes, addresses, access.width))

    def progress(_warp: int, _steps: int) -> None:
        if time.monotonic() > deadline:
            raise StopEmulation(f"stopped after {seconds:g} s of a CTA")

    try:
        return emulate(module, kernel, launch, max_steps=max(1, steps), ctas=[cta], observer=observe,
                       time_slice=TIME_SLICE, progress=progress, outputs=False, partial=True, compiled=compiled)
    except EmulationError as exc:
        out.stopped = str(exc)
        return None
