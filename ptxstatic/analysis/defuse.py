"""Def-use chains over registers, from reaching definitions on the basic-block graph."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.analysis.registers import defs_uses, is_special
from ptxstatic.limits import DEF_USE_KEPT
from ptxstatic.ptx.ast import Function


@dataclass
class DefUse:
    """Reaching definitions of one function. Instructions are numbered as in ``Function.instructions``."""

    defs: list[list[str]]  # registers written by each instruction
    uses: list[list[str]]  # registers read by each instruction
    reaching: dict[tuple[int, str], list[int]]  # (user, register) -> defining instructions that reach it

    def chains(self) -> dict[int, list[int]]:
        """Definition -> the instructions that use a value it wrote."""
        out: dict[int, list[int]] = {}
        for (user, _reg), sources in self.reaching.items():
            for d in sources:
                out.setdefault(d, []).append(user)
        return {d: sorted(set(u)) for d, u in out.items()}

    def undefined_uses(self) -> list[tuple[int, str]]:
        """Uses that no definition reaches (parameters are loaded, so these are reads of unset registers)."""
        return [k for k, v in self.reaching.items() if not v]


_KEPT: OrderedDict[int, tuple[Function, DefUse]] = OrderedDict()


def function_def_use(fn: Function) -> DefUse:
    """``def_use(build_cfg(fn))``, kept for the last :data:`~ptxstatic.limits.DEF_USE_KEPT` functions asked for
    (one launch's traffic model, stride analysis and work ask for the same kernel's chains)."""
    kept = _KEPT.get(id(fn))
    if kept is not None and kept[0] is fn:
        _KEPT.move_to_end(id(fn))
        return kept[1]
    du = def_use(build_cfg(fn))
    _KEPT[id(fn)] = (fn, du)
    while len(_KEPT) > DEF_USE_KEPT:
        _KEPT.popitem(last=False)
    return du


def def_use(cfg: BlockGraph) -> DefUse:
    """Reaching definitions: a register written once reaches the uses its block reaches (the blocks' strongly
    connected components, reachability as bit sets over them); the others by the iterative analysis with
    Python integers as bit sets, one bit per definition of a register written more than once. Memory grows
    with the blocks times those definitions, not times every definition (compilers write most registers once).
    """
    ins_defs: list[list[str]] = []
    ins_uses: list[list[str]] = []
    for ins in cfg.function.instructions:
        d, u = defs_uses(ins)
        ins_defs.append(d)
        ins_uses.append([r for r in u if not is_special(r)])
    written: dict[str, list[int]] = {}
    for i, regs in enumerate(ins_defs):
        for r in regs:
            written.setdefault(r, []).append(i)
    once = {r: ds[0] for r, ds in written.items() if len(ds) == 1}
    live_in, reg_bits, owner = _multiple_definitions(cfg, ins_defs, once)
    block_of = [0] * len(ins_defs)
    for blk in cfg.blocks:
        block_of[blk.start: blk.start + len(blk.instructions)] = [blk.id] * len(blk.instructions)
    reaches = _BlockReach(cfg)

    reaching: dict[tuple[int, str], list[int]] = {}
    for blk in cfg.blocks:
        local: dict[str, int] = {}  # register -> instruction of its latest definition inside the block
        for j in range(blk.start, blk.start + len(blk.instructions)):
            for r in ins_uses[j]:
                if r in local:
                    reaching[(j, r)] = [local[r]]
                elif r in once:
                    d = once[r]
                    reaching[(j, r)] = [d] if reaches(block_of[d], blk.id) else []
                else:
                    mask = live_in[blk.id] & reg_bits.get(r, 0)
                    srcs = []
                    while mask:
                        low = mask & -mask
                        srcs.append(owner[low.bit_length() - 1][0])
                        mask ^= low
                    reaching[(j, r)] = srcs
            for r in ins_defs[j]:
                local[r] = j
    return DefUse(ins_defs, ins_uses, reaching)


def _multiple_definitions(cfg: BlockGraph, ins_defs: list[list[str]], once: dict[str, int],
                          ) -> tuple[dict[int, int], dict[str, int], list[tuple[int, str]]]:
    """Iterative reaching definitions of the registers written more than once: per block the definitions
    live on entry (a bit set), each register's bits, and each bit's (instruction, register)."""
    bit_of: list[list[int]] = []
    reg_bits: dict[str, int] = {}
    owner: list[tuple[int, str]] = []
    for i, regs in enumerate(ins_defs):
        bits = []
        for r in regs:
            if r in once:
                bits.append(-1)
                continue
            b = len(owner)
            owner.append((i, r))
            reg_bits[r] = reg_bits.get(r, 0) | (1 << b)
            bits.append(b)
        bit_of.append(bits)
    preds = cfg.pred
    if not owner:
        return dict.fromkeys((b.id for b in cfg.blocks), 0), reg_bits, owner

    gen: dict[int, int] = {}
    kill: dict[int, int] = {}
    for blk in cfg.blocks:
        last: dict[str, int] = {}  # register -> bit of its last definition in the block
        for j in range(blk.start, blk.start + len(blk.instructions)):
            for r, b in zip(ins_defs[j], bit_of[j], strict=True):
                if b >= 0:
                    last[r] = b
        g = k = 0
        for r, b in last.items():
            g |= 1 << b
            k |= reg_bits[r]
        gen[blk.id], kill[blk.id] = g, k

    order = graphs.preorder(cfg.succ, cfg.entry) if cfg.blocks else []
    seen = set(order)
    order += [b.id for b in cfg.blocks if b.id not in seen]
    out = dict.fromkeys(gen, 0)
    changed = True
    while changed:
        changed = False
        for n in order:
            inn = 0
            for p in preds[n]:
                inn |= out[p]
            new = gen[n] | (inn & ~kill[n])
            if new != out[n]:
                out[n] = new
                changed = True
    live_in = {}
    for n in gen:
        inn = 0
        for p in preds[n]:
            inn |= out[p]
        live_in[n] = inn
    return live_in, reg_bits, owner


class _BlockReach:
    """Whether a path of one or more edges leads from one block to another: the strongly connected
    components, and per component the bit set of the components it reaches."""

    def __init__(self, cfg: BlockGraph) -> None:
        self.succ = cfg.succ
        components = graphs.components_callees_first(cfg.succ, [b.id for b in cfg.blocks])
        self.component = {b: c for c, members in enumerate(components) for b in members}
        self.size = [len(members) for members in components]
        self.below: list[int] = []  # the components each one reaches, itself included
        for c, members in enumerate(components):  # every component after those it reaches
            bits = 1 << c
            for b in members:
                for s in self.succ[b]:
                    bits |= self.below[self.component[s]] if self.component[s] != c else 0
            self.below.append(bits)

    def __call__(self, a: int, b: int) -> bool:
        ca, cb = self.component[a], self.component[b]
        if ca == cb:
            return self.size[ca] > 1 or a in self.succ[a]
        return bool(self.below[ca] >> cb & 1)
