"""Plain-text rendering of parse and analysis results."""

from __future__ import annotations

from ptxstatic.analysis.summary import FunctionSummary
from ptxstatic.ptx.ast import Module
from ptxstatic.report.words import counted


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"


def module_header(m: Module) -> str:
    target = ", ".join(m.target) or "?"
    return f"{m.filename}  (PTX {m.version or '?'}, {target}, {m.address_size or '?'}-bit addresses)"


def parse_summary(m: Module) -> str:
    lines = [module_header(m)]
    for f in m.functions:
        if f.body is None:
            lines.append(f"  declared {f.kind:5} {f.name}")
            continue
        dirs = " ".join(f".{d.name} {','.join(map(str, d.values))}".rstrip() for d in f.directives)
        lines.append(
            f"  {f.kind:5} {f.name}  line {f.line}: {counted(len(f.params or ()), 'param')}, "
            f"{counted(len(f.instructions), 'instruction')}{'  ' + dirs if dirs else ''}"
        )
    for g in m.globals:
        names = ", ".join(d.name for d in g.names)
        lines.append(f"  .{g.space} {names}")
    if m.files:
        lines.append("  files: " + ", ".join(f"{i}={f.path}" for i, f in sorted(m.files.items())))
    return "\n".join(lines)


def function_summary(s: FunctionSummary) -> str:
    lines = [
        f"  {'kernel' if s.kind == 'entry' else 'function'} {s.name}  (PTX lines {s.lines[0]}-{s.lines[1]})",
        f"    instructions {s.instructions}  blocks {s.blocks}  edges {s.edges}  exits {s.exits}  "
        f"loops {len(s.loops)} (max depth {s.max_loop_depth})  unreachable blocks {s.unreachable_blocks}"
        + ("  irreducible" if s.irreducible else ""),
    ]
    for lp in s.loops:
        src = f"  .cu line {lp.source_line}" if lp.source_line else ""
        lines.append(
            f"    loop {lp.header}: depth {lp.depth}, {counted(lp.blocks, 'block')}, "
            f"PTX lines {lp.lines[0]}-{lp.lines[1]}{src}"
        )
    lines.append(f"    mix: {_counts(s.mix)}")
    lines.append(
        f"    dependencies: mean distance {s.dep_distance_mean}; kinds: {_counts(s.dep_kinds)}; "
        f"distances: {_counts(s.dep_distance_hist)}"
    )
    extra = []
    if s.guarded:
        extra.append(f"guarded {s.guarded}")
    if s.calls:
        extra.append("calls " + ", ".join(s.calls))
    if s.shared_bytes:
        extra.append(f"shared {s.shared_bytes} B")
    if s.local_bytes:
        extra.append(f"local {s.local_bytes} B")
    if s.registers:
        extra.append("registers " + _counts(s.registers))
    if extra:
        lines.append("    " + "; ".join(extra))
    return "\n".join(lines)
