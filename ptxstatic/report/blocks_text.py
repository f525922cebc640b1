"""A static block-count estimate as text: one line per block with its label, lines, count and status (an
estimate with the interval that holds it), and the blocks executed in all."""

from __future__ import annotations

import math

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
            status = f"estimated {_interval(*est.counts.interval(fn, b))}: {why[b]}" if b in why else "exact"
            count = f"{c:.0f}" if c == int(c) else f"{c:.2f}"
            lines.append(f"  {fn[:32]:<32} {b:>5} {blk.name[:16]:<16} {span:<11} {count:>16}  {status}")
    lines += [f"  {r.name}: {counted(r.blocks, 'block')}, {r.exact} exact, {r.estimated} estimated"
              for r in est.functions()]
    total = est.executed()
    line = f"  executed blocks: {total['count']:.6g}"
    if not est.exact:
        high = math.inf if total["high"] is None else total["high"]
        line += f" in {_interval(total['low'], high)}"
        if total["stderr"]:
            line += f", standard error {total['stderr']:.3g} of the sampled part"
    lines.append(line)
    return "\n".join(lines)


def _interval(low: float, high: float) -> str:
    return f"[{low:.6g}, {'unbounded' if math.isinf(high) else f'{high:.6g}'}]"
