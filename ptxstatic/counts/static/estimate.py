"""Static block-count estimates for one kernel launch, without a GPU (docs/static_counts.md).

:func:`estimate_counts` interprets the kernel's control flow over the threads of the launch
(:mod:`ptxstatic.counts.static.interp`), with scalar arguments from the launch and pointer arguments as
opaque distinct bases. Counts are exact wherever control flow depends only on the launch configuration and
scalar arguments; blocks under a branch on data are estimated and say why. When control flow cannot differ
between CTAs, one CTA is interpreted and scaled. Launches too large to interpret are sampled by CTA, and a
kernel that exhausts the budget falls back to branch-probability frequencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.deps import control_depends_on
from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.interp import Group, Interpreter, WorkLimit
from ptxstatic.counts.static.markov import frequency_estimate
from ptxstatic.counts.static.values import Rows, constant_bits, fake_base, maybe_null
from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import STATIC_MAX_THREADS, STATIC_MAX_WORK, STATIC_SAMPLE_CTAS
from ptxstatic.ptx.ast import Function, Module, VarDecl
from ptxstatic.ptx.dtypes import U64, Unsupported

CHUNK_THREADS = 1 << 15  #: threads interpreted together (whole CTAs)


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
    counts: BlockCounts
    reasons: dict[str, dict[int, str]]  # function -> block -> why its count is an estimate
    method: str  # how the counts were obtained
    notes: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        """Whether every block count is exact."""
        return not any(self.reasons.values())

    def functions(self) -> list[FunctionReport]:
        out = []
        for fn, blocks in self.counts.counts.items():
            why = self.reasons.get(fn, {})
            out.append(FunctionReport(fn, len(blocks), len(blocks) - len(why), len(why), dict(sorted(why.items()))))
        return out

    def to_dict(self) -> dict:
        return {
            **self.counts.to_dict(), "method": self.method,
            "reasons": {f: {str(b): r for b, r in sorted(rs.items())} for f, rs in self.reasons.items() if rs},
            "summary": [{"function": r.name, "blocks": r.blocks, "exact": r.exact, "estimated": r.estimated}
                        for r in self.functions()],
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


def _param_lookup(kernel: Function, launch: Launch) -> dict[str, int | float | Buffer]:
    """Launch arguments keyed by PTX parameter name; accepts the name, the index, or ``param_<index>``."""
    decls = [d.name for p in kernel.params or () for d in p.names]
    aliases = {}
    for i, name in enumerate(decls):
        aliases.update({name: name, str(i): name, f"param_{i}": name})
    out = {}
    for key, value in launch.args.items():
        if key not in aliases:
            raise PtxstaticError(
                f"kernel {kernel.name} has no parameter {key!r}; name one of: "
                + ", ".join(f"{i} ({n})" for i, n in enumerate(decls)))
        out[aliases[key]] = value
    return out


def kernel_params(kernel: Function, launch: Launch, tags: dict[str, int]) -> tuple[dict, list[str]]:
    """Parameter-space contents at kernel entry, and notes on parameters left unknown."""
    given = _param_lookup(kernel, launch)
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


def _kernel(module: Module, name: str) -> Function:
    for k in module.kernels:
        if k.name == name:
            return k
    raise PtxstaticError(f"{module.filename}: no kernel named {name!r}; kernels: "
                         + ", ".join(k.name for k in module.kernels))


def _interpret(module: Module, kernel: Function, launch: Launch, ctas: np.ndarray, scale: float,
               max_work: float, fast_forward: bool) -> Interpreter:
    tags = symbol_tags(module, kernel)
    params, notes = kernel_params(kernel, launch, tags)
    interp = Interpreter(module, tags, max_work=max_work)
    if fast_forward:
        from ptxstatic.counts.static.loops import fast_forward as hook

        interp.on_header = hook
    interp.notes += notes
    plan = interp.plan(kernel.name)
    per_chunk = max(1, CHUNK_THREADS // launch.threads_per_block)
    with np.errstate(all="ignore"):
        for start in range(0, len(ctas), per_chunk):
            g = entry_group(launch, ctas[start:start + per_chunk])
            g.rows.params = dict(params)
            interp.run(plan, g)
    if scale != 1.0:
        for blocks in interp.counts.values():
            for b in blocks:
                blocks[b] *= scale
    return interp


def estimate_counts(module: Module, kernel_name: str, launch: Launch, *, max_work: float = STATIC_MAX_WORK,
                    fast_forward: bool = True) -> StaticEstimate:
    """Block execution counts (summed over threads) of ``kernel_name`` and the functions it calls."""
    kernel = _kernel(module, kernel_name)
    n_cta = launch.blocks
    tpb = launch.threads_per_block
    per_cta = control_depends_on(module, kernel, ("%ctaid",))
    sampled = False
    if not per_cta:
        ctas, scale, method = np.zeros(1, dtype=np.int64), float(n_cta), "one CTA interpreted, scaled by CTAs"
    elif n_cta * tpb <= STATIC_MAX_THREADS:
        ctas, scale, method = np.arange(n_cta, dtype=np.int64), 1.0, "all threads interpreted"
    else:
        ctas = np.unique(np.linspace(0, n_cta - 1, STATIC_SAMPLE_CTAS).round().astype(np.int64))
        scale, method, sampled = n_cta / len(ctas), f"{len(ctas)} of {n_cta} CTAs interpreted, scaled", True
    try:
        interp = _interpret(module, kernel, launch, ctas, scale, max_work, fast_forward)
    except WorkLimit:
        interp = Interpreter(module, symbol_tags(module, kernel))
        frequency_estimate(interp, kernel.name, float(n_cta * tpb))
        method = "interpretation budget exceeded: branch-probability frequencies"
    if sampled:
        for fn, blocks in interp.counts.items():
            for b in blocks:
                interp.estimated(fn, b, f"sampled {len(ctas)} of {n_cta} CTAs")
    exact = {fn: {b: b not in interp.reasons.get(fn, {}) for b in blocks} for fn, blocks in interp.counts.items()}
    for fn, blocks in interp.counts.items():  # exact counts are sums of fragment weights that add up to whole threads
        for b, c in blocks.items():
            if exact[fn][b]:
                blocks[b] = float(round(c))
    counts = BlockCounts(kernel.name, launch, "static", interp.counts, exact, [method, *interp.notes])
    return StaticEstimate(counts, {f: r for f, r in interp.reasons.items() if r}, method, interp.notes)
