"""Per-kernel instruction sequences: one :class:`SeqItem` per instruction, the unit every model consumes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ptxstatic.analysis.registers import operand_registers
from ptxstatic.ptx.ast import Function, Instruction
from ptxstatic.ptx.isa import OpInfo

#: dependency kinds, in the order models encode them
DEP_KINDS = ("none", "arith", "global_load", "shared_load", "other_mem")


class SeqItem(NamedTuple):
    """What a sequence model sees of one instruction (an immutable, hashable record)."""

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


def producer_kind(info: OpInfo) -> str:
    """What kind of value an instruction of this opcode produces, as a dependency of a later one."""
    if not info.is_load:
        return "arith"
    if info.space == "global":
        return "global_load"
    if info.space == "shared":
        return "shared_load"
    return "other_mem"


def kernel_sequence(fn: Function) -> list[SeqItem]:
    """The function's instructions in program order, each with the exact distance back to the closest
    instruction that wrote one of its inputs (0 when none did) and that producer's kind."""
    return instruction_sequence(fn.instructions)


def instruction_sequence(instructions: Iterable[Instruction]) -> list[SeqItem]:
    """:class:`SeqItem` records for instructions in the given order (an executed order, say), with
    dependency distances measured along that order."""
    last_writer: dict[str, int] = {}
    kinds: list[str] = []
    out: list[SeqItem] = []
    static: dict[str, tuple] = {}  # opcode token -> (opcode, group, space, dtype, vec, kind as producer)
    for i, ins in enumerate(instructions):
        defs, uses, has_dst = operand_registers(ins)
        producer = -1
        for r in uses:
            w = last_writer.get(r, -1)
            if w > producer:
                producer = w
        st = static.get(ins.opcode)
        if st is None:
            info = ins.info
            st = static[ins.opcode] = (info.opcode, info.group, info.space, info.dtype, info.vec, producer_kind(info))
        kinds.append(st[5])
        n_dst = 1 if has_dst else 0
        out.append(SeqItem(
            st[0], st[1], st[2], st[3], st[4], len(ins.operands) - n_dst, n_dst, ins.guard is not None,
            i - producer if producer >= 0 else 0, kinds[producer] if producer >= 0 else "none",
        ))
        for r in defs:
            last_writer[r] = i
    return out


# ------------------------------------------------------------------------------------------- runs
#: an item and how many times in a row it executes
Run = tuple[SeqItem, int]


def as_runs(seq: Sequence) -> list[Run]:
    """Flat (item, count) runs from a plain item list, runs, or the nested run-length form of an executed
    sequence (``(body, times)`` entries whose body is itself such a list)."""
    out: list[Run] = []

    def walk(nodes: Sequence, times: int) -> None:
        for node in nodes:
            if isinstance(node, SeqItem):
                out.append((node, times))
            elif isinstance(node[0], SeqItem):
                out.append((node[0], times * int(node[1])))
            else:
                walk(node[0], times * int(node[1]))

    walk(seq, 1)
    return out


def run_length(items: Sequence[SeqItem]) -> list[Run]:
    """Merge consecutive identical items into (item, repeat count) runs."""
    runs: list[Run] = []
    for item in items:
        if runs and runs[-1][0] == item:
            runs[-1] = (item, runs[-1][1] + 1)
        else:
            runs.append((item, 1))
    return runs
