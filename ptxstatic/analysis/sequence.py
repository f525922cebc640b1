"""Per-kernel instruction sequences: one :class:`SeqItem` per instruction, the unit every model consumes."""

from __future__ import annotations

from dataclasses import dataclass

#: dependency kinds, in the order models encode them
DEP_KINDS = ("none", "arith", "global_load", "shared_load", "other_mem")


@dataclass(frozen=True, slots=True)
class SeqItem:
    """What a sequence model sees of one instruction."""

    opcode: str  # canonical opcode from the ISA table: "ld", "fma", "cp.async.bulk.tensor"
    group: str  # ISA group (ptxstatic.ptx.isa.GROUPS)
    space: str  # state space accessed, "" if none
    dtype: str  # primary data type, "" if none
    vec: int  # vector width, 1 when scalar
    n_src: int  # source operands (registers, immediates, addresses; the guard is not counted)
    n_dst: int  # destination operands
    guarded: bool  # executes under a predicate guard
    dep_distance: int  # instructions back to the closest producer of an input, 0 if none
    dep_kind: str  # one of DEP_KINDS: what that producer was

    @property
    def n_operands(self) -> int:
        return self.n_src + self.n_dst
