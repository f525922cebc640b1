"""Which instructions depend, through register def-use chains, on chosen special registers.

Used to tell whether a launch's control flow can differ between CTAs (``%ctaid``), by the features whether
a branch can diverge within a warp (``%tid``, ``%laneid``), and by :mod:`ptxstatic.analysis.uniformity`
which values differ between the threads of a CTA (with extra seeds and stop points).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ptxstatic.analysis.cfg import BlockGraph
from ptxstatic.analysis.defuse import DefUse
from ptxstatic.analysis.registers import defs_uses
from ptxstatic.ptx.ast import Function, Instruction, Module, Sym


def reads_special(ins: Instruction, prefixes: tuple[str, ...]) -> bool:
    """Whether the instruction reads a special register whose name starts with one of ``prefixes``."""
    return any(r.startswith(prefixes) for r in defs_uses(ins)[1])


def dependent_instructions(fn: Function, du: DefUse, prefixes: tuple[str, ...], seeds: Iterable[int] = (),
                           stops: Collection[int] = ()) -> set[int]:
    """Indexes of instructions that read one of the special registers or a value derived from one (or from
    one of the instructions ``seeds``); the instructions ``stops`` give results that depend on neither."""
    chains = du.chains()
    start = {i for i, ins in enumerate(fn.instructions) if reads_special(ins, prefixes)} | set(seeds)
    out = set(start)
    work = list(start)
    while work:
        for user in chains.get(work.pop(), ()):
            if user not in out and user not in stops:
                out.add(user)
                work.append(user)
    return out


def is_conditional_transfer(ins: Instruction) -> bool:
    """A branch, return or exit whose outcome can differ between threads (guarded, or indexed)."""
    op = ins.opcode
    return op.startswith("brx") or (ins.guard is not None and op.startswith(("bra", "ret", "exit", "trap")))


def control_depends_on(module: Module, kernel: Function, prefixes: tuple[str, ...]) -> bool:
    """Whether any conditional transfer of the kernel, or of a function it calls, can depend on the special
    registers (call arguments derived from them count, since the callee may branch on them)."""
    from ptxstatic.analysis.cfg import build_cfg
    from ptxstatic.analysis.defuse import def_use

    seen: set[str] = set()
    todo = [kernel]
    while todo:
        fn = todo.pop()
        if fn.name in seen or fn.body is None:
            continue
        seen.add(fn.name)
        cfg: BlockGraph = build_cfg(fn)
        dep = dependent_instructions(fn, def_use(cfg), prefixes)
        for i in dep:
            ins = fn.instructions[i]
            if is_conditional_transfer(ins) or ins.opcode.startswith(("st.param", "call")):
                return True
        todo.extend(_callees(module, fn.instructions))
    return False


def _callees(module: Module, instructions: Iterable[Instruction]) -> list[Function]:
    defined = {f.name: f for f in module.functions if f.body is not None}
    out = []
    for ins in instructions:
        if ins.opcode.startswith("call"):
            target = next((o for o in ins.operands if isinstance(o, Sym)), None)
            if target is not None and target.name in defined:
                out.append(defined[target.name])
    return out
