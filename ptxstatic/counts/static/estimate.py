"""Static block-count estimates for one kernel launch, without a GPU (docs/static_counts.md).

:func:`estimate_counts` interprets the kernel's control flow over the threads of the launch
(:mod:`ptxstatic.counts.static.interp`), with scalar arguments from the launch and pointer arguments as
opaque distinct bases. Counts are exact wherever control flow depends only on the launch configuration and
scalar arguments; blocks under a branch on data are estimated and say why. When control flow cannot differ
between CTAs, one CTA is interpreted and scaled; otherwise CTAs are counted by classes that provably take
the same path (:mod:`ptxstatic.counts.static.ctas`). Past the time or work budget, the threads not yet
counted get branch-probability frequencies (:mod:`ptxstatic.counts.static.markov`), flagged.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.agree import CORNER
from ptxstatic.counts.static.branch_shares import measured_shares
from ptxstatic.counts.static.ctas import Affinity, Box, cta_affinity, search
from ptxstatic.counts.static.interp import SPREAD_Z, Group, Interpreter, Spread, WorkLimit, sampled
from ptxstatic.counts.static.intervals import intervals
from ptxstatic.counts.static.loops import Driver
from ptxstatic.counts.static.markov import frequency_estimate
from ptxstatic.counts.static.memory import KnownMemory
from ptxstatic.counts.static.sample import DataSample, complete, emulated_sample
from ptxstatic.counts.static.values import Rows, constant_bits, fake_base, maybe_null
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import (
    STATIC_CLASS_CTAS,
    STATIC_DATA_SAMPLE_CTAS,
    STATIC_DATA_SAMPLE_SHARE,
    STATIC_MAX_SECONDS,
    STATIC_MAX_THREADS,
    STATIC_MAX_WORK,
)
from ptxstatic.ptx.ast import Function, Module, VarDecl
from ptxstatic.ptx.dtypes import U64, Unsupported
from ptxstatic.ptx.launch_binding import BoundLaunch

CHUNK_THREADS = 1 << 15  #: threads interpreted together (whole CTAs)
SAMPLE_CHUNK_THREADS = 1 << 12  #: threads of the first chunk of a sample of CTAs (each next one twice as many)


@dataclass
class FunctionReport:
    """Exact and estimated blocks of one function, and why each estimated block is estimated."""

    name: str
    blocks: int
    exact: int
    estimated: int
    reasons: dict[int, str]


@dataclass
class StaticEstimate:
    counts: BlockCounts  # with each count's interval (``low``, ``high``)
    reasons: dict[str, dict[int, str]]  # function -> block -> why its count is an estimate
    method: str  # how the counts were obtained
    notes: list[str] = field(default_factory=list)
    stderr: dict[str, dict[int, float]] = field(default_factory=dict)  # standard error of each sampled count

    @property
    def exact(self) -> bool:
        """Whether every block count is exact."""
        return not any(self.reasons.values())

    def executed(self) -> dict:
        """Blocks executed in all (every block's count summed): the count, the interval that holds it (``high``
        None: unbounded) and the standard error of its sampled part."""
        c = self.counts
        total = sum(float(v) for blocks in c.counts.values() for v in blocks.values())
        pairs = [c.interval(fn, b) for fn, blocks in c.counts.items() for b in blocks]
        high = sum(h for _, h in pairs)
        se = math.sqrt(sum(e * e for blocks in self.stderr.values() for e in blocks.values()))
        return {"count": total, "low": sum(lo for lo, _ in pairs), "high": None if math.isinf(high) else high,
                "stderr": se}

    def functions(self) -> list[FunctionReport]:
        out = []
        for fn, blocks in self.counts.counts.items():
            why = self.reasons.get(fn, {})
            out.append(FunctionReport(fn, len(blocks), len(blocks) - len(why), len(why), dict(sorted(why.items()))))
        return out

    def summary(self) -> dict:
        """Whether every count is exact, how the counts were obtained, how many blocks are estimated and the
        distinct reasons why."""
        reports = self.functions()
        return {"exact": self.exact, "method": self.method, "blocks": sum(r.blocks for r in reports),
                "estimated": sum(r.estimated for r in reports),
                "reasons": sorted({r for fn in self.reasons.values() for r in fn.values()}),
                "executed": self.executed()}

    def to_dict(self) -> dict:
        return {
            **self.counts.to_dict(), "method": self.method, "all_exact": self.exact,
            "reasons": {f: {str(b): r for b, r in sorted(rs.items())} for f, rs in self.reasons.items() if rs},
            "summary": [{"function": r.name, "blocks": r.blocks, "exact": r.exact, "estimated": r.estimated}
                        for r in self.functions()],
            "stderr": {f: {str(b): e for b, e in es.items() if e} for f, es in self.stderr.items() if any(es.values())},
            "executed": self.executed(),
        }


# ----------------------------------------------------------------------------------------- inputs


def symbol_tags(module: Module, kernel: Function) -> dict[str, int]:
    """A pointer base tag for every addressable name: kernel parameters first, then variables and functions."""
    names = [d.name for p in kernel.params or () for d in p.names]
    for item in module.items:
        if isinstance(item, VarDecl) and item.space != "reg":
            names += [d.name for d in item.names]
    names += [f.name for f in module.functions]
    for fn in module.functions:
        for s in fn.statements if fn.body is not None else ():
            if isinstance(s, VarDecl) and s.space in ("shared", "local", "global", "const"):
                names += [d.name for d in s.names]
    return {n: i for i, n in enumerate(dict.fromkeys(names))}


def kernel_params(kernel: Function, launch: Launch, tags: dict[str, int]) -> tuple[dict, list[str]]:
    """Parameter-space contents at kernel entry, and notes on parameters left unknown."""
    given = launch.args  # bound: keyed by PTX parameter name
    params: dict = {}
    notes = []
    for decl in kernel.params or ():
        for d in decl.names:
            t = decl.dtype
            size = max(1, int(t[1:]) // 8) if t[1:].isdigit() else 4
            value = given.get(d.name)
            if d.dims:
                notes.append(f"parameter {d.name} is an aggregate: its contents are data")
            elif isinstance(value, Buffer) or (value is None and size == 8 and t[0] in "ubs"):
                tag = tags[d.name] if isinstance(value, Buffer) else maybe_null(tags[d.name])
                params[(d.name, 0)] = (np.asarray(U64(fake_base(tag))), 8, tag, False)
            elif value is None:
                notes.append(f"parameter {d.name} not given: treated as data")
            else:
                try:
                    params[(d.name, 0)] = (constant_bits(value, t), size, None, False)
                except Unsupported:
                    notes.append(f"parameter {d.name} has type .{t}: treated as data")
    return params, notes


def entry_group(launch: Launch, ctas: np.ndarray) -> Group:
    """Rows for every thread of the given CTAs (linear CTA ids), special registers filled in."""
    bx, by, _ = launch.block
    gx, gy, _ = launch.grid
    tpb = launch.threads_per_block
    t = np.arange(tpb, dtype=np.int64)
    lane = t % 32
    n = tpb * len(ctas)

    def col(values: np.ndarray, per_cta: bool) -> np.ndarray:
        arr = np.repeat(values, tpb) if per_cta else np.tile(values, len(ctas))
        return np.asarray(arr[0], dtype=U64) if np.all(arr == arr[0]) else arr.astype(U64)

    regs = {
        "%tid.x": col(t % bx, False), "%tid.y": col(t // bx % by, False), "%tid.z": col(t // (bx * by), False),
        "%laneid": col(lane, False),
        "%lanemask_eq": col(1 << lane, False), "%lanemask_lt": col((1 << lane) - 1, False),
        "%lanemask_le": col((2 << lane) - 1, False), "%lanemask_gt": col(~((2 << lane) - 1) & 0xFFFFFFFF, False),
        "%lanemask_ge": col(~((1 << lane) - 1) & 0xFFFFFFFF, False),
        "%ctaid.x": col(ctas % gx, True), "%ctaid.y": col(ctas // gx % gy, True),
        "%ctaid.z": col(ctas // (gx * gy), True),
        "%dynamic_smem_size": np.asarray(U64(launch.shared_bytes)),
    }
    for axis, size in zip("xyz", launch.block, strict=True):
        regs[f"%ntid.{axis}"] = np.asarray(U64(size))
    for axis, size in zip("xyz", launch.grid, strict=True):
        regs[f"%nctaid.{axis}"] = np.asarray(U64(size))
    return Group(Rows(n, regs), np.asarray(1.0), np.arange(n))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------- estimate


def _scaled(c: float, num: int, den: int) -> float:
    """``c * num / den``, a whole number kept whole (and exact at any size) where it is one."""
    if isinstance(c, float) and c.is_integer():
        c = int(c)
    if isinstance(c, int) and c * num % den == 0:
        return c * num // den
    return c * num / den


class _Session:
    """One interpreter over a launch: runs sets of CTAs, adding their counts scaled, with flags."""

    def __init__(self, module: Module, kernel: Function, launch: Launch, memory: KnownMemory, max_work: float,
                 fast_forward: bool, deadline: float, watch: dict[str, frozenset[int]] | None = None,
                 measured: dict[str, dict[int, float]] | None = None) -> None:
        tags = symbol_tags(module, kernel)
        self.params, notes = kernel_params(kernel, launch, tags)
        self.interp = Interpreter(module, tags, max_work=max_work, watch=watch or {},
                                  deadline=deadline,
                                  shares_of=measured_shares(measured) if measured else None, memory=memory)
        self.interp.loop_driver = lambda interp, plan, loop: Driver(interp, plan, loop, fast_forward)
        self.interp.notes += notes
        self.kernel, self.launch = kernel, launch
        self.plan = self.interp.plan(kernel.name)
        self.threads = 0  # threads counted so far
        #: a sample's chunks: threads, counts, spreads
        self.chunks: list[tuple[int, dict[str, dict[int, float]], dict[tuple[str, int], Spread]]] = []
        self.strata: list[Box] = []  # the classes of CTAs found (the grid when every CTA is alike)

    def run(self, ctas: np.ndarray, scale: tuple[int, int] = (1, 1), check: list[tuple[int, int, int]] | None = None,
            flag: str = "", sampled: bool = False) -> None:
        """Interpret the CTAs ``ctas`` (linear ids) and add their counts times ``scale`` (numerator,
        denominator); with ``check`` (their coordinates) the CTAs are the corners and probes of a box of CTAs
        and must agree (else :class:`Divergent`, and nothing is added). ``flag``: why these counts are not
        exact (every block they reach is flagged with it). ``sampled``: the CTAs are a sample, run in growing
        chunks whose counts are kept for extrapolating to the others (what ran until the budget ends it stays
        counted)."""
        tpb = self.launch.threads_per_block
        per_chunk = max(1, CHUNK_THREADS // tpb)
        size = max(1, SAMPLE_CHUNK_THREADS // tpb) if sampled else per_chunk
        start = 0
        while start < len(ctas):
            chunk = ctas[start:start + size]
            self._chunk(chunk, scale, check, flag, sampled)
            start += len(chunk)
            size = min(2 * size, per_chunk)

    def _chunk(self, ctas: np.ndarray, scale: tuple[int, int], check: list[tuple[int, int, int]] | None, flag: str,
               sampled: bool) -> None:
        interp, tpb = self.interp, self.launch.threads_per_block
        saved, spreads = interp.counts, interp.spreads
        interp.counts = {fn: dict.fromkeys(blocks, 0) for fn, blocks in saved.items()}
        interp.spreads = {}
        try:
            with np.errstate(all="ignore"):
                g = entry_group(self.launch, ctas)
                g.rows.params = dict(self.params)
                if check:
                    g.rows.key = np.arange(g.n) // tpb * CORNER + np.tile(np.arange(tpb), g.n // tpb)
                interp.corners.set(check)
                interp.run(self.plan, g)
        except BaseException:
            for fn, blocks in interp.counts.items():
                saved.setdefault(fn, dict.fromkeys(blocks, 0))
            interp.counts, interp.spreads = saved, spreads
            raise
        fresh, fresh_spreads = interp.counts, interp.spreads
        interp.counts, interp.spreads = saved, spreads
        num, den = scale
        for fn, blocks in fresh.items():
            dst = saved.setdefault(fn, dict.fromkeys(blocks, 0))
            for b, c in blocks.items():
                dst[b] = dst.get(b, 0) + _scaled(c, num, den)
                if flag:  # CTAs between the corners may run blocks the corners did not
                    interp.estimated(fn, b, flag)
                    interp.prior.add((fn, b))
        for (fn, b), sp in fresh_spreads.items():
            f = num / den
            interp.spread(fn, b).add(Spread(sp.below * f, sp.above * f, sp.variance * f * f))
        if sampled:
            self.chunks.append((len(ctas) * tpb, fresh, fresh_spreads))
        self.threads += len(ctas) * tpb * num // den

    def extrapolate(self, threads: int, reason: str) -> None:
        """Add the counts of ``threads`` threads not interpreted, by the mean per thread of the sampled chunks,
        with the spread the chunks' differences give; every block is flagged with ``reason`` (those the sample
        never entered too: the others may)."""
        interp = self.interp
        for fn, blocks in interp.counts.items():
            for b in blocks:
                interp.estimated(fn, b, reason)
        sizes = np.array([t for t, _, _ in self.chunks], dtype=np.float64)
        for fn in {fn for _, counts, _ in self.chunks for fn in counts}:
            for b in {b for _, counts, _ in self.chunks for b in counts.get(fn, {})}:
                amounts = np.array([counts.get(fn, {}).get(b, 0) for _, counts, _ in self.chunks], dtype=np.float64)
                if not amounts.any():
                    continue
                count, spread = sampled(amounts, sizes, threads)
                interp.add(fn, b, count)
                interp.spread(fn, b).add(spread)
                for _, _, spreads in self.chunks:  # the chunks' own spread, per thread, carries over to the rest
                    if (fn, b) in spreads:
                        own = spreads[(fn, b)]
                        f = threads / sizes.sum()
                        interp.spread(fn, b).add(Spread(own.below * f, own.above * f, own.variance * f * f))
        self.threads += threads


def spread(n: int, count: int) -> np.ndarray:
    """``count`` of the CTAs ``0 .. n-1`` (linear ids), seeded: all of them in a random order, or one at random
    from each of ``count`` equal runs of the grid (a stratified sample, which a period in the grid cannot fool
    as an evenly spaced one can), the runs in bit-reversed order so that every prefix is spread too."""
    rng = np.random.default_rng(0)
    if count >= n:
        return rng.permutation(n)
    bits = max(1, (count - 1).bit_length())
    idx = np.arange(1 << bits, dtype=np.int64)
    rev = np.zeros_like(idx)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    runs = rev[rev < count]
    lo = runs * n // count
    hi = (runs + 1) * n // count
    return lo + (rng.random(count) * (hi - lo)).astype(np.int64)


def _linear(launch: Launch, coords: list[tuple[int, int, int]]) -> np.ndarray:
    gx, gy, _ = launch.grid
    return np.array([x + gx * (y + gy * z) for x, y, z in coords], dtype=np.int64)


def _by_classes(session: _Session, aff: Affinity, launch: Launch) -> str:
    """Counts of a launch whose control flow depends on the CTA index, by classes of CTAs; the method.

    Where that dependence is not affine, every CTA is interpreted up to STATIC_MAX_THREADS threads, and a
    random sample of CTAs (scaled, flagged) beyond."""
    n_cta, tpb = launch.blocks, launch.threads_per_block
    budget = min(STATIC_CLASS_CTAS, max(8, STATIC_MAX_THREADS // tpb))
    if aff.reason is not None:
        gx, gy, gz = launch.grid
        runs = min(gx, STATIC_DATA_SAMPLE_CTAS)
        session.strata = [((i * gx // runs, (i + 1) * gx // runs - 1), (0, gy - 1), (0, gz - 1)) for i in range(runs)]
        order = spread(n_cta, n_cta if n_cta * tpb <= STATIC_MAX_THREADS else budget)
        session.run(order, sampled=True)
        if len(order) == n_cta:
            return "all threads interpreted"
        session.extrapolate((n_cta - budget) * tpb, f"control flow depends on the CTA index ({aff.reason}): "
                                                    f"{budget} of {n_cta} CTAs sampled across the grid, scaled")
        return f"{budget} of {n_cta} CTAs sampled across the grid, scaled"
    unproven = f"CTAs counted from the corner CTAs of their class without proof (after {budget} corner CTAs)"

    def corners(cs: list[tuple[int, int, int]], size: int, check: bool) -> None:
        session.run(_linear(launch, cs), (size, len(cs)), cs if check else None,
                    "" if len(cs) == 1 or check else unproven)

    found = search(launch.grid, corners, budget)
    session.strata = found.classes
    method = f"{n_cta} CTAs in {found.boxes} classes, {found.runs} corner CTAs interpreted"
    if found.probes:
        method += f" (and {found.probes} probe CTAs)"
    if found.unproven:
        method += f", {found.unproven} CTAs from unproven classes"
    return method


def measured_counts(module: Module, kernel: Function, profile: BlockCounts) -> dict[str, dict[int, float]]:
    """The block counts of ``profile`` per function, checked to be of this kernel and this build of it."""
    if profile.kernel != kernel.name:
        raise PtxstaticError(f"the measured counts are of kernel {profile.kernel}, not {kernel.name}")
    out = {}
    for name, blocks in profile.counts.items():
        try:
            fn = module.function(name)
        except KeyError:
            raise PtxstaticError(f"the measured counts have function {name}, which {module.filename} "
                                 "does not define: counts of another build?") from None
        n = len(build_cfg(fn).blocks)
        if any(not 0 <= b < n for b in blocks):
            raise PtxstaticError(f"the measured counts of {name} name blocks up to {max(blocks)}, but it has "
                                 f"{n} blocks here: counts of another build?")
        out[name] = dict(blocks)
    return out


def estimate_counts(bound: BoundLaunch, *, max_work: float = STATIC_MAX_WORK,
                    fast_forward: bool = True, max_seconds: float = STATIC_MAX_SECONDS,
                    profile: BlockCounts | None = None) -> StaticEstimate:
    """Block execution counts (summed over threads) of the bound kernel and the functions it calls.

    ``max_seconds`` bounds the whole estimate (CPU seconds); past it the threads not yet counted are
    extrapolated from those counted, or get branch-probability frequencies, and every block they reach is
    flagged. ``profile``: block counts measured in a run of the kernel (any launch), whose branch shares split
    the data-dependent branches (still flagged). Without it, where branches depend on data the interpreter
    cannot read and the launch gives every argument, they split as they went in an emulated sample of the
    launch's CTAs (:mod:`ptxstatic.counts.static.sample`)."""
    started = time.process_time()
    deadline = started + max_seconds
    measured = measured_counts(bound.module, bound.kernel, profile) if profile is not None else None
    first, session = _estimate(bound, max_work, fast_forward, started, deadline, measured, profile=profile)
    if profile is not None or not session.interp.data_splits or not complete(bound):
        return first
    sample = emulated_sample(bound, session.strata, started + max_seconds * STATIC_DATA_SAMPLE_SHARE)
    if not sample.ctas or time.process_time() > deadline:
        first.notes.append(f"no emulated sample of the launch: {sample.error or 'no time left for it'}")
        return first
    return _estimate(bound, max_work, fast_forward, started, deadline, sample.totals(), sample)[0]


def _estimate(bound: BoundLaunch, max_work: float, fast_forward: bool, started: float, deadline: float,
              measured: dict[str, dict[int, float]] | None, sample: DataSample | None = None,
              profile: BlockCounts | None = None) -> tuple[StaticEstimate, _Session]:
    """One static pass: branches on data split as in ``measured`` (block counts) where given, those counts
    being the emulated ``sample``'s or the ``profile``'s."""
    module, kernel, launch = bound.module, bound.kernel, bound.launch
    n_cta, tpb = launch.blocks, launch.threads_per_block
    memory = KnownMemory(module, kernel, launch, symbol_tags(module, kernel))
    unknown = frozenset(d.name for p in kernel.params or () for d in p.names if d.name not in launch.args
                        and not (p.dtype in ("u64", "b64", "s64") and not d.dims))
    aff = cta_affinity(module, kernel, memory.loads, unknown)
    session = _Session(module, kernel, launch, memory, max_work, fast_forward, deadline, aff.watch, measured)
    interp = session.interp
    interp.sampled_shares = sample is not None
    try:
        if aff.uniform:
            session.strata = [tuple((0, n - 1) for n in launch.grid)]  # type: ignore[list-item]
            session.run(np.zeros(1, dtype=np.int64), (n_cta, 1))
            method = "one CTA interpreted, scaled by CTAs"
        else:
            method = _by_classes(session, aff, launch)
    except WorkLimit as stop:
        rest = n_cta * tpb - session.threads
        spent = f"{stop} after {time.process_time() - started:.1f} CPU s"
        if session.chunks:
            counted = sum(t for t, _, _ in session.chunks)
            session.extrapolate(rest, f"{spent}: extrapolated from {counted // tpb} CTAs sampled across the grid")
            method = f"{spent}: {rest} of {n_cta * tpb} threads extrapolated from {counted} sampled across the grid"
        else:
            frequency_estimate(interp, kernel.name, rest, f"{spent}: branch-probability estimate")
            method = f"{stop}: {rest} of {n_cta * tpb} threads from branch-probability frequencies"
    exact = {fn: {b: b not in interp.reasons.get(fn, {}) for b in blocks} for fn, blocks in interp.counts.items()}
    for fn, blocks in interp.counts.items():  # exact counts are sums of fragment weights that add up to whole threads
        for b, c in blocks.items():
            if exact[fn][b]:
                blocks[b] = round(c)
    if sample is not None:
        _sample_spreads(interp, sample, exact)
        method += (f"; branches on data split as in an emulated sample of {sample.ctas} CTAs in "
                   f"{len(sample.strata)} classes ({sample.steps} warp instructions"
                   + (f", {sample.cut} CTAs cut short" if sample.cut else "") + ")")
    elif profile is not None:
        split = sum(len(interp.plan(fn).shares) for fn in interp.counts)
        interp.notes.append(f"{split} branch(es) with their shares in the {profile.source} counts of a launch "
                            f"of {profile.launch.threads} threads; data-dependent ones split by them")
    low, high, stderr = intervals(interp, kernel.name, n_cta * tpb, exact)
    counts = BlockCounts(kernel.name, launch, "static", interp.counts, exact, [method, *interp.notes], low, high)
    est = StaticEstimate(counts, {f: r for f, r in interp.reasons.items() if r}, method, interp.notes, stderr)
    return est, session


def _sample_spreads(interp: Interpreter, sample: DataSample, exact: dict[str, dict[int, bool]]) -> None:
    """The spread of the blocks whose counts rest on the sample's shares: three standard errors of the sample's
    stratified total (relative to the count) either side, widened by the rule of three over its CTAs for the
    CTAs it did not run; a block the sample never entered rests on nothing but the code's bounds."""
    relative = sample.relative_error()
    totals = sample.totals()
    k = sample.ctas
    unsampled = 1 - k / interp_ctas if (interp_ctas := sum(n for n, _ in sample.strata)) else 1.0
    for fn, blocks in interp.counts.items():
        for b, c in blocks.items():
            if exact[fn][b] or (fn, b) in interp.prior:
                continue
            if not totals.get(fn, {}).get(b):
                interp.prior.add((fn, b))
                continue
            se = relative[fn][b] * float(c)
            width = SPREAD_Z * se + float(c) * 3 / k * unsampled
            interp.spread(fn, b).add(Spread(min(float(c), width), width, se * se))
