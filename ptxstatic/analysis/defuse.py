"""Def-use chains over registers, from reaching definitions on the basic-block graph."""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BlockGraph
from ptxstatic.analysis.registers import defs_uses, is_special


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


def def_use(cfg: BlockGraph) -> DefUse:
    """Iterative reaching-definitions analysis with Python integers as bit sets (one bit per definition)."""
    ins_defs: list[list[str]] = []
    ins_uses: list[list[str]] = []
    for ins in cfg.function.instructions:
        d, u = defs_uses(ins)
        ins_defs.append(d)
        ins_uses.append([r for r in u if not is_special(r)])

    # one bit per (instruction, register) definition
    bit_of: list[list[int]] = []
    reg_bits: dict[str, int] = {}
    owner: list[tuple[int, str]] = []
    for i, regs in enumerate(ins_defs):
        bits = []
        for r in regs:
            b = len(owner)
            owner.append((i, r))
            reg_bits[r] = reg_bits.get(r, 0) | (1 << b)
            bits.append(b)
        bit_of.append(bits)

    gen: dict[int, int] = {}
    kill: dict[int, int] = {}
    for blk in cfg.blocks:
        last: dict[str, int] = {}  # register -> bit of its last definition in the block
        for j in range(blk.start, blk.start + len(blk.instructions)):
            for r, b in zip(ins_defs[j], bit_of[j], strict=True):
                last[r] = b
        g = k = 0
        for r, b in last.items():
            g |= 1 << b
            k |= reg_bits[r]
        gen[blk.id], kill[blk.id] = g, k

    order = graphs.preorder(cfg.succ, cfg.entry) if cfg.blocks else []
    seen = set(order)
    order += [b.id for b in cfg.blocks if b.id not in seen]
    preds = cfg.pred
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

    reaching: dict[tuple[int, str], list[int]] = {}
    for blk in cfg.blocks:
        live_in = 0
        for p in preds[blk.id]:
            live_in |= out[p]
        local: dict[str, int] = {}  # register -> instruction of its latest definition inside the block
        for j in range(blk.start, blk.start + len(blk.instructions)):
            for r in ins_uses[j]:
                if r in local:
                    reaching[(j, r)] = [local[r]]
                    continue
                mask = live_in & reg_bits.get(r, 0)
                srcs = []
                while mask:
                    low = mask & -mask
                    srcs.append(owner[low.bit_length() - 1][0])
                    mask ^= low
                reaching[(j, r)] = srcs
            for r in ins_defs[j]:
                local[r] = j
    return DefUse(ins_defs, ins_uses, reaching)
