"""Which values and branches of a function can differ between the threads of one CTA.

A value is *thread-dependent* when it is derived, through register def-use chains, from a per-thread source:
the thread index and the other per-thread special registers (:data:`THREAD_SPECIALS`), or the result of an
instruction that gives threads different values (an atomic's old value, a warp shuffle, vote or match).
Values merged after a thread-dependent branch are thread-dependent too (*sync dependence*): a register that
reaches a use both from inside the region the branch controls and from elsewhere, or that leaves a loop
whose exit is thread-dependent. ``%ctaid``, ``%ntid``, kernel parameters, and values loaded from addresses
that are the same for all threads are uniform; so is the result of ``bar.red``.

The propagation is :func:`~ptxstatic.analysis.deps.dependent_instructions` (the same one the divergence
features use), iterated to a fixpoint with the merges; control dependence comes from
:mod:`ptxstatic.analysis.control_dependence`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import BlockGraph, build_cfg, call_sites
from ptxstatic.analysis.control_dependence import ControlDependence
from ptxstatic.analysis.defuse import DefUse, def_use
from ptxstatic.analysis.deps import dependent_instructions, is_conditional_transfer
from ptxstatic.analysis.registers import defs_uses
from ptxstatic.ptx.ast import Addr, Function, Instruction, Module, Sym, Tup

#: special registers whose value differs between the threads of a CTA (prefixes)
THREAD_SPECIALS = ("%tid", "%laneid", "%warpid", "%lanemask", "%clock", "%globaltimer")
#: opcodes whose result can differ between threads even when their operands do not
#: call summaries (:func:`call_summaries`)
PER_THREAD, FOLLOWS_ARGS, UNIFORM = "per-thread", "follows-args", "uniform"
PER_THREAD_RESULTS = frozenset({"atom", "shfl", "vote", "match", "activemask", "redux", "elect"})

_SPECIAL_WORDS = {
    "%tid.x": "threadIdx.x", "%tid.y": "threadIdx.y", "%tid.z": "threadIdx.z", "%laneid": "the lane index",
    "%warpid": "the warp slot (%warpid)", "%globaltimer": "the global timer",
}
_RESULT_WORDS = {
    "atom": "an atomic's returned value", "shfl": "a warp shuffle", "vote": "a warp vote", "match": "a warp match",
    "activemask": "the active mask", "redux": "a warp reduction", "elect": "a warp election",
}


def _per_thread_result(ins: Instruction) -> bool:
    return ins.info.opcode.split(".")[0] in PER_THREAD_RESULTS


@dataclass
class ThreadDependence:
    """The thread-dependent instructions of one function and the blocks whose branch is thread-dependent."""

    cfg: BlockGraph
    du: DefUse
    cd: ControlDependence
    dependent: set[int] = field(default_factory=set)  # instruction indexes
    divergent: dict[int, int] = field(default_factory=dict)  # block -> index of its thread-dependent transfer
    merged: dict[int, int] = field(default_factory=dict)  # instruction -> branch block whose merge it reads
    call_results: dict[int, str] = field(default_factory=dict)  # ld.param of a thread-dependent result -> callee
    block_of: list[int] = field(default_factory=list)

    def guard_dependent(self, index: int) -> bool:
        """Whether instruction ``index`` has a guard predicate that can differ between threads."""
        guard = self.cfg.function.instructions[index].guard
        if guard is None:
            return False
        return any(d in self.dependent for d in self.du.reaching.get((index, guard.name), ()))

    def divergent_controllers(self, block: int) -> list[int]:
        """Blocks ending in a thread-dependent branch that ``block`` is (transitively) control dependent on,
        nearest first."""
        return [x for x in self.cd.all_controllers(block) if x in self.divergent]

    def sources(self, index: int) -> list[str]:
        """Why instruction ``index`` is thread-dependent, in words: ``threadIdx.x``, ``an atomic's returned
        value``, ``a value merged after the branch at PTX line 42`` (sorted, without repeats)."""
        fn = self.cfg.function
        words: set[str] = set()
        seen = {index}
        todo = [index]
        while todo:
            i = todo.pop()
            ins = fn.instructions[i]
            for r in defs_uses(ins)[1]:
                if r.startswith(THREAD_SPECIALS):
                    words.add(_SPECIAL_WORDS.get(r, r))
            if _per_thread_result(ins):
                words.add(_RESULT_WORDS[ins.info.opcode.split(".")[0]])
            if i in self.call_results:
                words.add(f"the result of `{self.call_results[i]}`")
            if i in self.merged:
                branch = self.cfg.blocks[self.merged[i]].instructions[-1]
                words.add(f"a value merged after the thread-dependent branch at PTX line {branch.line}")
            for r in self.du.uses[i]:
                for d in self.du.reaching.get((i, r), ()):
                    if d in self.dependent and d not in seen:
                        seen.add(d)
                        todo.append(d)
        return sorted(words)


def thread_dependence(cfg: BlockGraph, du: DefUse, cd: ControlDependence | None = None,
                      calls: Mapping[str, str] | None = None, params_dependent: bool = False) -> ThreadDependence:
    """Thread-dependence of every instruction of ``cfg.function``, with merges iterated to a fixpoint.

    ``calls`` summarises the module's functions (:func:`call_summaries`): a call's results are
    thread-dependent when the callee's are (``per-thread``), or when an argument is and the callee passes it
    on (``follows-args``) or is not in ``calls`` (a declaration whose body is unknown). The function's own
    parameters count as uniform unless ``params_dependent``.
    """
    fn = cfg.function
    result = ThreadDependence(cfg, du, cd or ControlDependence(cfg))
    block_of = [0] * len(fn.instructions)
    for b in cfg.blocks:
        for k in range(len(b.instructions)):
            block_of[b.start + k] = b.id
    result.block_of = block_of
    seeds = {i for i, ins in enumerate(fn.instructions) if _per_thread_result(ins)}
    if params_dependent:
        seeds |= _parameter_loads(fn)
    block_wide = {i for i, ins in enumerate(fn.instructions) if ins.info.opcode in ("bar", "barrier")}
    while True:
        result.dependent = dependent_instructions(fn, du, THREAD_SPECIALS, seeds, stops=block_wide)
        result.divergent = _divergent_blocks(cfg, result.dependent)
        results = _call_results(fn.instructions, result.dependent, calls or {})
        result.call_results.update(results)
        new = (_merges(result) | set(results)) - result.dependent
        if not new:
            return result
        seeds |= new


def _parameter_loads(fn: Function) -> set[int]:
    names = {d.name for v in fn.params or () for d in v.names}
    out = set()
    for i, ins in enumerate(fn.instructions):
        address = next((o for o in ins.operands if isinstance(o, Addr)), None)
        if ins.info.opcode == "ld" and address is not None and isinstance(address.base, Sym) \
                and address.base.name in names:
            out.add(i)
    return out


def _divergent_blocks(cfg: BlockGraph, dependent: set[int]) -> dict[int, int]:
    out = {}
    for b in cfg.blocks:
        if b.instructions and b.id in cfg.reachable and is_conditional_transfer(b.instructions[-1]):
            last = b.start + len(b.instructions) - 1
            if last in dependent:
                out[b.id] = last
    return out


def _merges(td: ThreadDependence) -> set[int]:
    """Uses that read a register merged after a thread-dependent branch (recorded in ``td.merged``)."""
    cfg, block_of = td.cfg, td.block_of
    new: set[int] = set()
    for x in td.divergent:
        region = td.cd.regions.get(x, frozenset())
        exits_loops = [lp for lp in cfg.loops if any(u == x for u, _ in lp.exits)]
        for (user, _reg), defs in td.du.reaching.items():
            if user in td.dependent or block_of[user] in region:
                continue
            inside = [d for d in defs if block_of[d] in region]
            if not inside:
                continue
            left_loop = any(block_of[d] in lp.body and block_of[user] not in lp.body
                            for lp in exits_loops for d in inside)
            if len(defs) > 1 or left_loop:
                new.add(user)
                td.merged.setdefault(user, x)
    return new


def _call_results(instructions: list[Instruction], dependent: set[int], calls: Mapping[str, str]) -> dict[int, str]:
    """The ``ld.param`` instructions that read a thread-dependent call result, with the callee's name."""
    out: dict[int, str] = {}
    args_dependent = False  # a thread-dependent argument was stored since the last call
    results: set[str] = set()
    callee: str | None = None
    for i, ins in enumerate(instructions):
        info = ins.info
        if info.opcode == "st" and info.space == "param":
            args_dependent |= i in dependent
        elif info.opcode == "call":
            callee = next((o.name for o in ins.operands if isinstance(o, Sym)), None)
            first = ins.operands[0] if ins.operands else None
            names = {o.name for o in first.items if isinstance(o, Sym)} if isinstance(first, Tup) else set()
            summary = calls.get(callee or "", "follows-args")
            per_thread = summary == PER_THREAD or (args_dependent and summary == FOLLOWS_ARGS)
            results = names if per_thread else set()
            args_dependent = False
        elif results and info.opcode == "ld" and info.space == "param":
            address = next((o for o in ins.operands if isinstance(o, Addr)), None)
            if address is not None and isinstance(address.base, Sym) and address.base.name in results:
                out[i] = callee or "an indirect call"
    return out


def call_summaries(module: Module) -> dict[str, str]:
    """Every ``.func`` with a body: :data:`PER_THREAD` when its return value can differ between threads
    for uniform arguments, :data:`FOLLOWS_ARGS` when only for thread-dependent ones, else :data:`UNIFORM`
    (callees analysed before their callers; within recursion, a callee not yet summarised counts as uniform)."""
    defined = {f.name: f for f in module.functions if f.body is not None and f.kind == "func"}
    calls: dict[str, list[str]] = {}
    for c in call_sites(defined.values()):
        if c.callee in defined and c.callee not in calls.setdefault(c.caller, []):
            calls[c.caller].append(c.callee)
    out: dict[str, str] = dict.fromkeys(defined, UNIFORM)
    for component in graphs.components_callees_first(calls, defined):
        for name in sorted(component):
            fn = defined[name]
            cfg = build_cfg(fn)
            du = def_use(cfg)
            if _returns_dependent(fn, thread_dependence(cfg, du, calls=out)):
                out[name] = PER_THREAD
            elif _returns_dependent(fn, thread_dependence(cfg, du, calls=out, params_dependent=True)):
                out[name] = FOLLOWS_ARGS
    return out


def _returns_dependent(fn: Function, td: ThreadDependence) -> bool:
    returns = {d.name for v in fn.returns for d in v.names}
    for i in td.dependent:
        ins = fn.instructions[i]
        address = next((o for o in ins.operands if isinstance(o, Addr)), None)
        if ins.info.opcode == "st" and address is not None and isinstance(address.base, Sym) \
                and address.base.name in returns:
            return True
    return False
