"""Register liveness and register pressure of one function, in 32-bit register words.

The pressure is the largest number of 32-bit words of virtual registers live at once (a 64-bit register
counts two, a 16-bit one one, predicates none: they live in a separate predicate file). It is what a
register count estimated from the PTX alone rests on, where ptxas cannot assemble for the architecture.
"""

from __future__ import annotations

import re

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BlockGraph
from ptxstatic.analysis.registers import defs_uses, is_special
from ptxstatic.ptx.ast import Function, VarDecl
from ptxstatic.ptx.isa import bit_width

_INDEXED = re.compile(r"^(.*?)(\d+)$")


def register_words(fn: Function) -> dict[str, int]:
    """32-bit words per declared register name (``%rd<5>`` gives ``%rd`` for every ``%rdN``); predicates 0."""
    out: dict[str, int] = {}
    for s in fn.statements:
        if not isinstance(s, VarDecl) or s.space != "reg":
            continue
        ty = s.dtype
        lanes = 4 if "v4" in s.attrs else 2 if "v2" in s.attrs else 1
        words = 0 if ty == "pred" else max(1, bit_width(ty) // 32) * lanes
        for d in s.names:
            out[d.name] = words
    return out


def _words(name: str, words: dict[str, int]) -> int:
    if name in words:
        return words[name]
    m = _INDEXED.match(name)
    return words.get(m.group(1), 1) if m else 1


def live_out(cfg: BlockGraph) -> dict[int, set[str]]:
    """Registers live at the end of each block (backward dataflow to a fixpoint)."""
    return _liveness(cfg, True)[1]


def live_in(cfg: BlockGraph) -> dict[int, set[str]]:
    """Registers whose value at the start of each block may be read later; a guarded write does not end a
    register's life (where the guard is false the register keeps its value)."""
    return _liveness(cfg, False)[0]


def _liveness(cfg: BlockGraph, guarded_kills: bool) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    use: dict[int, set[str]] = {}
    kill: dict[int, set[str]] = {}
    for blk in cfg.blocks:
        u: set[str] = set()
        k: set[str] = set()
        for ins in blk.instructions:
            defs, uses = defs_uses(ins)
            u |= {r for r in uses if not is_special(r) and r not in k}
            if guarded_kills or ins.guard is None:
                k |= set(defs)
        use[blk.id], kill[blk.id] = u, k
    live = {b: set() for b in use}
    out = {b: set() for b in use}
    order = graphs.postorder(cfg.succ, cfg.entry) if cfg.blocks else []  # successors first
    seen = set(order)
    order += [b for b in use if b not in seen]
    changed = True
    while changed:
        changed = False
        for b in order:
            new_out = set().union(*(live[s] for s in cfg.succ[b]))
            new_in = use[b] | (new_out - kill[b])
            if new_out != out[b] or new_in != live[b]:
                out[b], live[b] = new_out, new_in
                changed = True
    return live, out


def register_pressure(cfg: BlockGraph) -> int:
    """The largest number of 32-bit register words live at once anywhere in the function."""
    words = register_words(cfg.function)
    blocks = {b.id: b for b in cfg.blocks}
    best = 0
    for blk, live in live_out(cfg).items():
        current = set(live)
        total = sum(_words(r, words) for r in current)
        for ins in reversed(blocks[blk].instructions):
            defs, uses = defs_uses(ins)
            read = {r for r in uses if not is_special(r)}
            # the results and the operands are live together at the instruction
            best = max(best, total + sum(_words(r, words) for r in (set(defs) | read) - current))
            for r in set(defs) - read:
                if r in current:
                    current.discard(r)
                    total -= _words(r, words)
            for r in read - current:
                current.add(r)
                total += _words(r, words)
        best = max(best, total)
    return best
