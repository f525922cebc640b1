"""Which registers an instruction writes and reads."""

from __future__ import annotations

from functools import lru_cache

from ptxstatic.ptx.ast import Addr, Instruction, Neg, Pair, Reg, Tup, Vec

#: the implicit carry flag written by add.cc/sub.cc/mad.cc and read by addc/subc/madc
CARRY = "%cc"

#: special registers: read-only, never written by an instruction (prefix match on the name)
SPECIAL_REGISTERS = (
    "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
    "%clock", "%globaltimer", "%lanemask", "%pm", "%envreg", "%dynamic_smem_size", "%total_smem_size",
    "%aggr_smem_size", "%cluster", "%is_explicit_cluster", "%nclusterid", "%clusterid", "%reserved_smem",
    "%current_graph_exec", "%WARP_SZ",
)

_READ_WRITE_DEST = frozenset({"wgmma.mma_async", "wgmma.mma_async.sp"})


@lru_cache(maxsize=4096)
def _dest_policy(opcode: str) -> tuple[bool, bool, int, int]:
    """(first operand may be a destination, destination is also read, carry written, carry read)."""
    from ptxstatic.ptx.isa import op_info

    info = op_info(opcode)
    writes_carry = info.opcode in ("add.cc", "sub.cc", "mad.cc") or (
        info.opcode in ("addc", "subc", "madc") and "cc" in info.other
    )
    reads_carry = info.opcode in ("addc", "subc", "madc")
    return (not info.first_operand_read, info.opcode in _READ_WRITE_DEST, writes_carry, reads_carry)


def _collect(op: object, out: list[str]) -> None:
    t = type(op)
    if t is Reg:
        out.append(op.name)  # type: ignore[attr-defined]
    elif t is Addr:
        if type(op.base) is Reg:  # type: ignore[attr-defined]
            out.append(op.base.name)  # type: ignore[attr-defined]
        for x in op.extra:  # type: ignore[attr-defined]
            _collect(x, out)
    elif t is Vec or t is Tup:
        for x in op.items:  # type: ignore[attr-defined]
            _collect(x, out)
    elif t is Neg:
        out.append(op.reg.name)  # type: ignore[attr-defined]
    elif t is Pair:
        out.append(op.first.name)  # type: ignore[attr-defined]
        out.append(op.second.name)  # type: ignore[attr-defined]


def defs_uses(ins: Instruction) -> tuple[list[str], list[str]]:
    """Registers written and registers read (the guard predicate counts as read)."""
    defs, uses, _ = operand_registers(ins)
    return defs, uses


def operand_registers(ins: Instruction) -> tuple[list[str], list[str], bool]:
    """Registers written, registers read, and whether the first operand is a destination."""
    ops = ins.operands
    defs: list[str] = []
    uses: list[str] = [ins.guard.name] if ins.guard is not None else []
    first_is_dest, dest_read, carry_w, carry_r = _dest_policy(ins.opcode)
    start = 0
    if ops and first_is_dest:
        first = ops[0]
        t = type(first)
        if t is Reg or t is Vec or t is Pair:
            _collect(first, defs)
            start = 1
            if dest_read:
                uses.extend(defs)
    for op in ops[start:]:
        _collect(op, uses)
    if carry_w:
        defs.append(CARRY)
    if carry_r:
        uses.append(CARRY)
    return defs, uses, start == 1


def is_special(name: str) -> bool:
    return name.startswith(SPECIAL_REGISTERS)
