"""Per-function analysis summary: blocks, loops, instruction mix, sequence and dependency statistics."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from operator import attrgetter

from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.sequence import DEP_KINDS, kernel_sequence
from ptxstatic.ptx.ast import Addr, Function, Module, Sym, VarDecl
from ptxstatic.ptx.isa import TYPE_BITS

#: upper bounds of the dependency-distance histogram buckets (distance 0 means "no producer")
DISTANCE_BUCKETS = (1, 2, 4, 8, 16, 32)


@dataclass
class LoopSummary:
    header: str
    blocks: int
    depth: int
    back_edges: int
    lines: tuple[int, int]  # PTX line range of the loop's instructions
    source_line: int | None  # .cu line of the header's first instruction, when known


@dataclass
class FunctionSummary:
    name: str
    kind: str  # "entry" or "func"
    lines: tuple[int, int]
    instructions: int
    blocks: int
    edges: int
    exits: int
    unreachable_blocks: int
    loops: list[LoopSummary]
    max_loop_depth: int
    irreducible: bool
    mix: dict[str, int]  # ISA group -> static instruction count
    guarded: int  # instructions under a predicate guard
    dep_kinds: dict[str, int]
    dep_distance_mean: float  # over instructions that have a producer
    dep_distance_hist: dict[str, int]  # "1", "2", "3-4", ..., ">32"
    calls: list[str]
    registers: dict[str, int]  # register type -> declared count
    shared_bytes: int  # statically declared .shared bytes (extern arrays count 0)
    local_bytes: int
    params: int
    directives: dict[str, list] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _bucket_name(d: int) -> str:
    lo = 1
    for hi in DISTANCE_BUCKETS:
        if d <= hi:
            return str(hi) if lo == hi else f"{lo}-{hi}"
        lo = hi + 1
    return f">{DISTANCE_BUCKETS[-1]}"


_BUCKETS = [_bucket_name(d) for d in range(DISTANCE_BUCKETS[-1] + 2)]


def _bucket(d: int) -> str:
    return _BUCKETS[min(d, len(_BUCKETS) - 1)]


def _declared_bytes(decls: list[VarDecl], space: str) -> int:
    total = 0
    for v in decls:
        if v.space != space:
            continue
        bits = TYPE_BITS.get(v.dtype, 8)
        vec = next((int(a[1]) for a in v.attrs if a in ("v2", "v4", "v8")), 1)
        for d in v.names:
            n = 1
            for dim in d.dims:
                n *= dim or 0
            total += n * vec * max(1, bits // 8)
    return total


def referenced_symbols(fn: Function) -> set[str]:
    """Names the function's instructions refer to (variables, labels, functions)."""
    names: set[str] = set()
    for i in fn.instructions:
        for o in i.operands:
            if isinstance(o, Sym):
                names.add(o.name)
            elif isinstance(o, Addr) and isinstance(o.base, Sym):
                names.add(o.base.name)
    return names


def summarize(fn: Function, module: Module | None = None, cfg: BlockGraph | None = None) -> FunctionSummary:
    """Analyse one function with a body; with its module, module-scope ``.shared`` variables it uses count too."""
    cfg = cfg or build_cfg(fn)
    ins = fn.instructions
    seq = kernel_sequence(fn)
    with_dep = [d for d in map(attrgetter("dep_distance"), seq) if d]
    kinds = Counter(map(attrgetter("dep_kind"), seq))
    hist: Counter[str] = Counter()
    for d, n in Counter(with_dep).items():
        hist[_bucket(d)] += n
    decls = [s for s in fn.statements if isinstance(s, VarDecl)]
    shared_globals = [g for g in module.globals if g.space == "shared"] if module is not None else []
    if shared_globals:
        used = referenced_symbols(fn)
        decls += [g for g in shared_globals if any(d.name in used for d in g.names)]
    regs: Counter[str] = Counter()
    for v in decls:
        if v.space == "reg":
            for d in v.names:
                regs[v.dtype] += d.count if d.count is not None else 1
    loops = []
    for lp in cfg.loops:
        body = [cfg.blocks[b] for b in sorted(lp.body)]
        lines = [ln for b in body for ln in b.lines if ln]
        head = cfg.blocks[lp.header]
        first = head.instructions[0] if head.instructions else None
        loops.append(LoopSummary(
            head.name, len(lp.body), lp.depth, len(lp.back_edges),
            (min(lines), max(lines)) if lines else (0, 0),
            first.loc.line if first is not None and first.loc is not None else None,
        ))
    loops.sort(key=lambda lp: (lp.lines[0], -lp.blocks))  # source order, an outer loop before its inner ones
    calls = sorted({
        o.name for i in ins if i.opcode.startswith("call") for o in i.operands[:2] if isinstance(o, Sym)
    })
    return FunctionSummary(
        name=fn.name,
        kind=fn.kind,
        lines=(ins[0].line, ins[-1].line) if ins else (fn.line, fn.line),
        instructions=len(ins),
        blocks=len(cfg.blocks),
        edges=cfg.graph.number_of_edges(),
        exits=len(cfg.exits),
        unreachable_blocks=len(cfg.unreachable),
        loops=loops,
        max_loop_depth=max((lp.depth for lp in cfg.loops), default=0),
        irreducible=cfg.irreducible if cfg.loops or len(cfg.blocks) > 2 else False,
        mix=dict(Counter(map(attrgetter("group"), seq)).most_common()),
        guarded=sum(map(attrgetter("guarded"), seq)),
        dep_kinds={k: kinds[k] for k in DEP_KINDS if kinds[k]},
        dep_distance_mean=round(sum(with_dep) / len(with_dep), 3) if with_dep else 0.0,
        dep_distance_hist={b: hist[b] for b in [_bucket(d) for d in (1, 2, 3, 5, 9, 17, 33)] if hist[b]},
        calls=calls,
        registers=dict(regs),
        shared_bytes=_declared_bytes(decls, "shared"),
        local_bytes=_declared_bytes(decls, "local"),
        params=len(fn.params or ()),
        directives={d.name: list(d.values) for d in fn.directives},
    )


def summarize_module(module: Module, kernels_only: bool = True, name: str | None = None) -> list[FunctionSummary]:
    """Summaries of the module's kernels (or every defined function), optionally one by name."""
    fns = module.kernels if kernels_only else [f for f in module.functions if f.body is not None]
    if name is not None:
        fns = [f for f in fns if f.name == name]
    return [summarize(f, module) for f in fns]
