"""The instructions an emulation that only watches addresses can leave out: register-to-register operations
whose values decide neither control flow, nor a guard, nor an address, nor anything a kept instruction reads
(the fp32 chain of an arithmetic benchmark, the data a kernel stores), and the reading of loads whose values
serve none of these either (the load still touches its addresses). The memory rules emulate a sample of
warps for the addresses they touch (:mod:`ptxstatic.rules.memory_sampling`); leaving these out gives them the
same accesses for less work.

Stored data is left out only where no value read from memory the program may have written (a load, an
atomic's old value; not parameters, constant memory or read-only ``.nc`` loads) reaches what is kept, in the
kernel or a device function of its module: when one does, memory's contents can steer an address, and every
store keeps its data; when none does, a store (but to ``.param``) only touches its addresses, writing nothing.
Parameters passed to and returned from calls (``st.param``) always keep theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ptxstatic.analysis.defuse import DefUse
from ptxstatic.ptx.ast import Addr, Function, Instruction, Reg, Vec

#: register-to-register operations without side effects and without faults of their own at run time
PURE = frozenset({
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "fma", "neg", "abs", "min", "max", "and", "or", "xor",
    "not", "cnot", "shl", "shr", "mov", "cvt", "cvta", "selp", "slct", "setp", "set", "bfe", "bfi", "prmt",
    "popc", "clz", "brev", "bfind", "lop3", "shf", "copysign", "testp", "rcp", "sqrt", "rsqrt", "ex2", "lg2",
    "sin", "cos", "tanh", "dp4a", "dp2a",
})


#: instructions that write the data of their operands after the address to memory
_WRITES = frozenset({"st", "red", "atom"})
#: loads, whose reading an emulation can leave out where their values are not needed (not their addresses)
LOADS = frozenset({"ld", "ldu"})
#: what an emulation runs for its addresses alone when it is left out: loads and stores
TOUCHING = LOADS | {"st"}


def _data_registers(ins: Instruction) -> set[str]:
    """The registers of the data a store, reduction or atomic writes: its operands after the address."""
    ops = ins.operands
    at = next((k for k, o in enumerate(ops) if isinstance(o, Addr)), len(ops))
    out: set[str] = set()
    for op in ops[at + 1:]:
        if isinstance(op, Reg):
            out.add(op.name)
        elif isinstance(op, Vec):
            out.update(e.name for e in op.items if isinstance(e, Reg))
    return out


def _kept_uses(ins: Instruction, uses: list[str], with_data: bool) -> Iterable[str]:
    """The registers a kept instruction needs: all it reads, but the data it stores unless ``with_data``."""
    if with_data or ins.info.opcode not in _WRITES or ins.info.space == "param":
        return uses
    data = _data_registers(ins) - _address_registers(ins)
    if ins.guard is not None:
        data.discard(ins.guard.name)
    return [r for r in uses if r not in data]


def _address_registers(ins: Instruction) -> set[str]:
    return {o.base.name for o in ins.operands if isinstance(o, Addr) and isinstance(o.base, Reg)}


def _written_memory(ins: Instruction) -> bool:
    """Whether ``ins`` reads memory the program may have written: not a parameter, not constant memory, not
    a read-only (``.nc``) load."""
    info = ins.info
    return info.is_load and info.space not in ("param", "const") and "nc" not in info.cache


def _needed(fn: Function, du: DefUse, with_data: bool) -> tuple[set[int], bool]:
    """(the pure instructions and loads whose values are needed, whether a value read from memory is needed)."""
    ins = fn.instructions
    needed: set[int] = set()
    reads_memory = False
    todo = [(i, r) for i, x in enumerate(ins) if x.info.opcode not in PURE
            for r in _kept_uses(x, du.uses[i], with_data)]
    while todo:
        user, reg = todo.pop()
        for d in du.reaching.get((user, reg), ()):
            x = ins[d]
            if x.info.opcode not in PURE:
                reads_memory = reads_memory or _written_memory(x)
                needed.add(d)  # its uses are followed already: it is kept
            elif d not in needed:
                needed.add(d)
                todo.extend((d, r) for r in du.uses[d])
    return needed, reads_memory


def address_slice(fn: Function, du: DefUse, with_data: bool) -> tuple[frozenset[int], bool]:
    """(the indices of ``fn``'s pure instructions an address-watching emulation can leave out, of the loads
    whose values it need not read and, without ``with_data``, of the stores it need not write; whether a value
    read from memory the program may have written reaches what is kept); ``with_data``: stores keep their
    data (when memory steers an address anywhere the emulation runs)."""
    needed, reads_memory = _needed(fn, du, with_data)
    left = frozenset(i for i, x in enumerate(fn.instructions)
                     if ((x.info.opcode in PURE or x.info.opcode in LOADS) and i not in needed)
                     or (not with_data and x.info.opcode == "st" and x.info.space != "param"))
    return left, reads_memory


def memory_steers_addresses(functions: Iterable[Function], def_use: Callable[[Function], DefUse]) -> bool:
    """Whether, in any of ``functions``, a value read from memory reaches an address, a branch, a guard or
    another instruction that cannot be left out (then stored data must be kept everywhere)."""
    return any(_needed(fn, def_use(fn), False)[1] for fn in functions if fn.body is not None)
