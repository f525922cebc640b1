"""A static block-count estimate as text: one line per block with its label, lines, count and status."""

from __future__ import annotations

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.static.estimate import StaticEstimate
from ptxstatic.ptx.ast import Module
from ptxstatic.report.words import counted


def estimate_text(module: Module, est: StaticEstimate) -> str:
    """What ``ptxstatic blocks`` prints: the launch and method, notes, then every block of every function."""
    launch = est.counts.launch
    lines = [f"{module.filename}: {est.counts.kernel}  grid {launch.grid}  block {launch.block}  ({est.method})"]
    lines += [f"  note: {note}" for note in est.notes]
    lines.append(f"  {'function':<32} {'block':>5} {'label':<16} {'lines':<11} {'count':>16}  status")
    for fn, counts in est.counts.counts.items():
        cfg = build_cfg(module.function(fn))
        why = est.reasons.get(fn, {})
        for b, c in counts.items():
            blk = cfg.blocks[b]
            span = "{}-{}".format(*blk.lines)
            status = f"estimated: {why[b]}" if b in why else "exact"
            count = f"{c:.0f}" if c == int(c) else f"{c:.2f}"
            lines.append(f"  {fn[:32]:<32} {b:>5} {blk.name[:16]:<16} {span:<11} {count:>16}  {status}")
    lines += [f"  {r.name}: {counted(r.blocks, 'block')}, {r.exact} exact, {r.estimated} estimated"
              for r in est.functions()]
    return "\n".join(lines)
