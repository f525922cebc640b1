"""A functional PTX emulator: runs a kernel over its whole grid on the CPU and counts basic-block entries.

CTAs run one after another. Each warp executes its 32 lanes in lockstep under an active mask, with the
classic SIMT reconvergence stack: a divergent branch runs its paths one after the other and they meet again
at the branch block's immediate post-dominator. Warps of a CTA are generators scheduled round robin; a
warp runs until it reaches a barrier or finishes, and a barrier releases once every live warp (or the
requested thread count) has arrived. Device-function calls run the callee with the calling lanes' mask.

This is a functional model, not a timing model: the order in which it runs divergent paths and warps is
one valid order, not necessarily the hardware's. See ``docs/emulator.md``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Collection, Generator, Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from ptxstatic.block_counts import BlockCounts
from ptxstatic.emulator import memops, ops, warp
from ptxstatic.emulator.code import (
    BRA,
    BRX,
    CALL,
    END,
    EXIT,
    EXIT_NODE,
    OP,
    TRAP,
    BarrierSpec,
    CallSite,
    Code,
    compile_function,
)
from ptxstatic.emulator.faults import EmulationError, StopEmulation
from ptxstatic.emulator.lanes import FULL, WARP, lanes
from ptxstatic.emulator.memory import Device
from ptxstatic.emulator.observe import Observer
from ptxstatic.emulator.state import Cta, Frame, Warp
from ptxstatic.launch import Launch
from ptxstatic.limits import EMULATOR_CALL_DEPTH, EMULATOR_MAX_STEPS
from ptxstatic.ptx.ast import Function, Imm, Module, Operand, Reg, Sym
from ptxstatic.ptx.dtypes import UINT, Unsupported, bf16_to_f32, const, np_type, resize

#: the ``BlockCounts.source`` of emulated counts
EMULATED = "emulated"
TIME_SLICE = 4096  # warp instructions a warp runs before the scheduler moves on to the next one

_BUILDERS = {**ops.BUILDERS, **memops.BUILDERS, **warp.BUILDERS}
_INTERNAL = (IndexError, ValueError, TypeError, OverflowError, ZeroDivisionError, KeyError, AttributeError)


@dataclass
class Emulation:
    """What one emulated launch produced."""

    kernel: str
    launch: Launch
    buffers: dict[str, np.ndarray]  # buffer arguments after the run, by parameter name
    globals: dict[str, np.ndarray]  # module-scope .global variables after the run
    counts: BlockCounts  # thread entries per block, source "emulated"
    warp_entries: dict[str, dict[int, int]]  # warp entries per block (a warp counts once per entry)
    instructions: dict[str, int] = field(default_factory=dict)  # opcode token -> thread executions
    warp_instructions: int = 0  # instructions issued, counted once per warp
    stopped: str | None = None  # why a partial emulation ended early (None: it ran to the end)
    buffer_addresses: dict[str, int] = field(default_factory=dict)  # each buffer argument's global address

    @property
    def thread_instructions(self) -> int:
        return sum(self.instructions.values())


def emulate(module: Module, kernel: str | Function, launch: Launch, *, max_steps: int = EMULATOR_MAX_STEPS,
            inputs: dict[str, np.ndarray] | None = None, symbols: dict[str, np.ndarray] | None = None,
            ctas: Iterable[tuple[int, int, int]] | None = None, observer: Observer | None = None,
            time_slice: int = TIME_SLICE, progress: Callable[[int, int], None] | None = None,
            outputs: bool | Collection[str] = True, partial: bool = False,
            compiled: CodeCache | None = None,
            leave_out: Callable[[Function], frozenset[int]] | None = None) -> Emulation:
    """Run ``kernel`` of ``module`` over the grid of ``launch``.

    ``inputs`` gives initial contents of buffer arguments (by parameter name or index) in place of their
    fill pattern; ``symbols`` gives initial contents of module ``.global``/``.const`` variables (as
    ``cudaMemcpyToSymbol`` would). ``max_steps`` bounds the warp instructions executed. ``ctas`` runs only
    these CTAs of the grid, in the order given (``%nctaid`` still reads the whole grid); ``observer`` is
    called with every memory access (:mod:`ptxstatic.emulator.observe`); an exception it raises ends the
    emulation and reaches the caller. ``time_slice`` is how many warp instructions a warp runs before the
    next warp of its CTA gets its turn (results do not depend on it; what an observer sees first does);
    ``progress``, if given, is called at the end of every time slice with the index (in its CTA) of the warp
    whose turn ends and the warp instructions executed so far, and an exception it raises ends the emulation
    too. ``outputs``: whose final contents the result holds: every buffer's (True), none (False: a sample of
    CTAs of a launch with large buffers reads only the pages it touched), or those of the parameters named.
    With ``partial``, the step limit, a fault of the program or a :class:`StopEmulation` raised by
    ``observer`` or ``progress`` ends the run and the result holds what ran until then (its ``stopped`` says
    why). ``compiled`` keeps the compiled functions for the next emulation of the same module and launch (a
    sample of CTAs run one emulation each); they are reused only where the device's symbols lie at the same
    addresses. ``leave_out`` gives, per function, the indices of instructions not to run (an emulation that
    only watches addresses: :func:`ptxstatic.analysis.address_slice.address_slice`); it is not used
    with ``compiled``. Raises
    :class:`EmulationError` for anything the emulator does not support and for faults of the program (bad
    address, trap, deadlock, and the step limit without ``partial``).
    """
    fn = kernel if isinstance(kernel, Function) else _kernel(module, kernel)
    with np.errstate(all="ignore"):
        try:
            emulator = _Emulator(module, fn, launch, max_steps, inputs, symbols, time_slice, progress, partial,
                                 None if leave_out is not None else compiled, leave_out)
            emulator.device.observer = observer
            try:
                emulator.run(_ctas(launch, ctas))
            except (StopEmulation, EmulationError) as stop:
                if not partial:
                    raise
                return replace(emulator.result(outputs), stopped=str(stop))
            return emulator.result(outputs)
        except Unsupported as exc:  # a buffer or variable of a type the value semantics does not define
            raise EmulationError(str(exc)) from None


def _ctas(launch: Launch, chosen: Iterable[tuple[int, int, int]] | None) -> list[tuple[int, int, int]]:
    """The CTAs to run: every one of the grid in x, y, z order, or the chosen ones (checked against the grid)."""
    gx, gy, gz = launch.grid
    if chosen is None:
        return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
    out = [tuple(int(v) for v in c) for c in chosen]
    for c in out:
        if len(c) != 3 or not all(0 <= v < g for v, g in zip(c, launch.grid, strict=True)):
            raise EmulationError(f"CTA {c} is outside the grid {launch.grid}")
    return out  # type: ignore[return-value]


def _kernel(module: Module, name: str) -> Function:
    try:
        fn = module.function(name)
    except KeyError:
        raise EmulationError(f"no function named {name} with a body in {module.filename}") from None
    if not fn.is_kernel:
        raise EmulationError(f"{name} is a .func, not a kernel (.entry)")
    return fn


@dataclass
class CodeCache:
    """Functions compiled for one layout of the device's symbols (names, kinds, addresses, sizes)."""

    layout: tuple = ()
    codes: dict[str, Code | None] = field(default_factory=dict)

    def for_device(self, device: Device) -> dict[str, Code | None]:
        """The functions compiled for ``device``'s layout (emptied when the layout differs)."""
        tables = [("", device.symbols), *sorted(device.function_shared.items())]
        layout = tuple((owner, n, sym.kind, sym.address, sym.size) for owner, table in tables
                       for n, sym in sorted(table.items()))
        if layout != self.layout:
            self.layout, self.codes = layout, {}
        return self.codes


@dataclass
class _Barrier:
    arrived: set[int] = field(default_factory=set)
    threads: int = 0
    expected: int | None = None
    waiting: list[int] = field(default_factory=list)
    values: list = field(default_factory=list)


class _Emulator:
    def __init__(self, module: Module, kernel: Function, launch: Launch, max_steps: int,
                 inputs: dict[str, np.ndarray] | None, symbols: dict[str, np.ndarray] | None,
                 time_slice: int, progress: Callable[[int, int], None] | None, partial: bool = False,
                 compiled: CodeCache | None = None,
                 leave_out: Callable[[Function], frozenset[int]] | None = None) -> None:
        self.module = module
        self.partial = partial
        self.kernel = kernel
        self.launch = launch
        self.max_steps = max_steps
        self.device = Device(module, kernel, launch, symbols, inputs)
        self.codes: dict[str, Code | None] = {}
        self.compiled = compiled.for_device(self.device) if compiled is not None else {}
        self.thread_counts: dict[str, np.ndarray] = {}
        self.warp_counts: dict[str, np.ndarray] = {}
        self.time_slice = time_slice
        self.progress = progress
        self.slice_end = min(time_slice, max_steps + 1)
        self.ran = 0  # CTAs run
        self.leave_out = leave_out
        self.functions = {s.address: name for name, s in self.device.symbols.items() if s.kind == "func"}

    def code(self, name: str) -> Code | None:
        """The compiled function ``name`` (None when the module only declares it)."""
        if name not in self.codes:
            if name not in self.compiled:
                fn = next((f for f in self.module.functions if f.name == name and f.body is not None), None)
                left = self.leave_out(fn) if self.leave_out is not None and fn is not None else frozenset()
                self.compiled[name] = compile_function(fn, self.device, _BUILDERS, left) if fn is not None else None
            code = self.codes[name] = self.compiled[name]
            if code is not None:
                self.thread_counts[name] = np.zeros(len(code.blocks), dtype=np.int64)
                self.warp_counts[name] = np.zeros(len(code.blocks), dtype=np.int64)
        return self.codes[name]

    # ------------------------------------------------------------------------------------ grid, CTA
    def run(self, ctas: list[tuple[int, int, int]]) -> None:
        self.ran = len(ctas)
        for ctaid in ctas:
            self._run_cta(Cta(ctaid, self.device, self.launch))

    def _run_cta(self, cta: Cta) -> None:
        code = self.code(self.kernel.name)
        assert code is not None
        warps = [Warp(i, cta) for i in range(self.launch.warps_per_block)]
        gens = [self._run(Frame(code, w, w.push_frame(code.local_size)), w.alive.copy()) for w in warps]
        live = set(range(len(warps)))
        resume: list[object] = [None] * len(warps)
        ready = deque(range(len(warps)))
        barriers: dict[int, _Barrier] = {}
        while ready:
            i = ready.popleft()
            try:
                request = gens[i].send(resume[i])
            except StopIteration:
                live.discard(i)
                self._release(barriers, live, ready, resume)
                continue
            resume[i] = None
            if request is None:  # end of a time slice
                ready.append(i)
                continue
            mode, ident, count, value = request
            bar = barriers.setdefault(ident, _Barrier())
            bar.arrived.add(i)
            bar.threads += WARP
            bar.expected = count
            bar.values.append(value)
            if mode == "arrive":
                ready.appendleft(i)
            else:
                bar.waiting.append(i)
            self._release(barriers, live, ready, resume)
        if live:
            stuck = ", ".join(f"barrier {b} ({len(v.waiting)} warps waiting)" for b, v in barriers.items())
            raise EmulationError(f"deadlock in CTA {cta.ctaid}: {stuck}")

    @staticmethod
    def _release(barriers: dict[int, _Barrier], live: set[int], ready: deque, resume: list) -> None:
        for ident, bar in list(barriers.items()):
            done = bar.threads >= bar.expected if bar.expected is not None else live <= bar.arrived
            if not done:
                continue
            values = [v for v in bar.values if v is not None]
            result = None
            if values:
                op = values[0][0]
                got = [v[1] for v in values]
                result = np.uint32(sum(got)) if op == "popc" else np.bool_(all(got) if op == "and" else any(got))
            for w in bar.waiting:
                resume[w] = result
                ready.append(w)
            del barriers[ident]

    # --------------------------------------------------------------------------------- one frame
    def _run(self, frame: Frame, mask: np.ndarray) -> Generator:
        """Execute ``frame`` for the lanes in ``mask`` until they all return or exit (a generator)."""
        code = frame.code
        blocks, ipdom, kernel = code.blocks, code.ipdom, code.is_kernel
        warp, regs = frame.warp, frame.regs
        tcount, wcount = self.thread_counts[code.name], self.warp_counts[code.name]
        stack = [[0, EXIT_NODE, mask]]
        step: tuple | None = None
        try:
            while stack:
                top = stack[-1]
                pc = top[0]
                if pc == top[1]:
                    stack.pop()
                    continue
                m = top[2] & warp.alive
                if not kernel:
                    m &= ~frame.returned
                n = np.count_nonzero(m)
                if n == WARP:
                    m = FULL
                if pc < 0 or not n:
                    if pc == END and n:
                        self._leave(frame, m)
                    stack.pop()
                    continue
                blk = blocks[pc]
                step = None
                if blk.steps is None:
                    code.compile_block(blk)
                self.device.steps += len(blk.opcodes)
                if self.device.steps >= self.slice_end:
                    if self.device.steps > self.max_steps:
                        if self.partial:
                            raise StopEmulation(f"stopped after {self.max_steps} warp instructions")
                        raise EmulationError(f"more than {self.max_steps} warp instructions executed (runaway loop?)")
                    self.slice_end = min(self.device.steps + self.time_slice, self.max_steps + 1)
                    if self.progress is not None:
                        self.progress(warp.index, self.device.steps)
                    yield None  # let the other warps run: one of them may be what this one waits for
                tcount[pc] += n  # counted as it runs: a run that stops here has not entered the block
                wcount[pc] += 1
                for step in blk.steps:
                    kind, guard, negated, payload, _ = step
                    em = m
                    if guard is not None:
                        em = m & ~regs[guard] if negated else m & regs[guard]
                        if not em.any():
                            continue
                    if kind == OP:
                        payload(frame, em)
                    elif kind == CALL:
                        yield from self._call(frame, payload, em)
                        m = m & warp.alive
                    else:
                        result = yield self._barrier(frame, payload, em)
                        if payload.dest is not None:
                            payload.dest(frame, result, em)
                step = blk.term
                if step is None:
                    top[0] = blk.fall
                    continue
                self._terminate(frame, stack, top, m, step, ipdom[pc], blk.fall)
        except EmulationError as exc:
            raise _located(exc, frame, step) from None
        except Unsupported as exc:
            raise _located(EmulationError(str(exc)), frame, step) from None
        except _INTERNAL as exc:
            raise _located(EmulationError(f"internal emulator error: {type(exc).__name__}: {exc}"), frame,
                           step) from exc

    def _terminate(self, frame: Frame, stack: list, top: list, m: np.ndarray, term: tuple, r: int,
                   fall: int | None) -> None:
        """Apply a block's last instruction (branch, return, exit, trap) to the reconvergence stack."""
        kind, guard, negated, payload, _ = term
        em = m
        if guard is not None:
            em = m & ~frame.regs[guard] if negated else m & frame.regs[guard]
        rest = m & ~em
        if kind == BRA:
            if not rest.any():
                top[0] = payload
            elif not em.any():
                top[0] = fall
            else:
                _diverge(stack, top, r, [(fall, rest), (payload, em)])
        elif kind == BRX:
            index, targets = payload
            idx = lanes(index(frame))
            if (idx[em] >= len(targets)).any():
                raise EmulationError(f"brx.idx index {int(idx[em].max())} is outside its {len(targets)} targets")
            paths = [(fall, rest)] if rest.any() else []
            for t in dict.fromkeys(np.asarray(targets)[idx[em]].tolist()):
                paths.append((t, em & (np.asarray(targets)[np.minimum(idx, len(targets) - 1)] == t)))
            if len(paths) == 1:
                top[0] = paths[0][0]
            else:
                _diverge(stack, top, r, paths)
        elif kind == TRAP:
            if em.any():
                raise EmulationError(f"trap executed by {np.count_nonzero(em)} thread(s)")
            top[0] = fall
        else:
            if kind == EXIT:
                frame.warp.alive &= ~em
            else:
                self._leave(frame, em)
            if rest.any():
                top[0] = fall
            else:
                stack.pop()

    @staticmethod
    def _leave(frame: Frame, m: np.ndarray) -> None:
        """Lanes ``m`` return from the frame (from a kernel: they exit)."""
        if frame.code.is_kernel:
            frame.warp.alive &= ~m
        else:
            frame.returned |= m

    @staticmethod
    def _barrier(frame: Frame, spec: BarrierSpec, em: np.ndarray) -> tuple:
        first = int(np.argmax(em))
        ident = int(lanes(spec.ident(frame))[first])
        count = int(lanes(spec.count(frame))[first]) if spec.count is not None else None
        value = None
        if spec.mode == "red":
            p = lanes(spec.pred(frame)) & em
            value = (spec.red, int(np.count_nonzero(p)) if spec.red == "popc" else
                     bool(p.any()) if spec.red == "or" else bool((p | ~em).all()))
        return ("arrive" if spec.mode == "arrive" else "sync", ident, count, value)

    # ----------------------------------------------------------------------------------------- calls
    def _call(self, frame: Frame, site: CallSite, em: np.ndarray) -> Generator:
        if site.callee is not None:
            targets = [(site.callee, em)]
        else:
            addrs = lanes(site.target(frame))
            targets = []
            for a in dict.fromkeys(addrs[em].tolist()):
                if a not in self.functions:
                    raise EmulationError(f"indirect call to {a:#x}, which is not a function address")
                targets.append((self.functions[a], em & (addrs == a)))
        for name, mask in targets:
            code = self.code(name)
            if code is None:
                _external(frame, name, site, mask)
                continue
            if len(site.args) != len(code.params) or len(site.returns) > len(code.returns):
                raise EmulationError(f"call to {name} passes {len(site.args)} arguments for {len(code.params)}")
            warp = frame.warp
            if warp.depth >= EMULATOR_CALL_DEPTH:
                raise EmulationError(f"call depth exceeds {EMULATOR_CALL_DEPTH} (unbounded recursion?)")
            warp.depth += 1
            callee = Frame(code, warp, warp.push_frame(code.local_size))
            for arg, param in zip(site.args, code.params, strict=True):
                _pass(frame, _side(arg), callee, param, None)
            yield from self._run(callee, mask)
            warp.depth -= 1
            warp.pop_frame(callee.local_base)
            for ret, param in zip(site.returns, code.returns, strict=False):
                _pass(callee, param, frame, _side(ret), mask)

    # ---------------------------------------------------------------------------------------- result
    def result(self, outputs: bool | Collection[str] = True) -> Emulation:
        dev = self.device
        buffers = {}
        for name, (_, buf) in dev.buffers.items():
            if outputs is False or (outputs is not True and name not in outputs):
                continue
            raw = dev.read(name, np_type(buf.dtype), buf.count)
            buffers[name] = bf16_to_f32(raw) if buf.dtype == "bf16" else raw
        globals_ = {}
        for name, (decl, _) in dev.globals.items():
            if decl.space == "global":
                dt = np_type(decl.dtype)
                globals_[name] = dev.read(name, dt, dev.symbols[name].size // dt.itemsize)
        counts, entries, opcodes, issued = {}, {}, Counter(), 0
        for name, code in self.codes.items():
            if code is None:
                continue
            tc, wc = self.thread_counts[name], self.warp_counts[name]
            counts[name] = {b.id: float(tc[b.id]) for b in code.blocks}
            entries[name] = {b.id: int(wc[b.id]) for b in code.blocks}
            for b in code.blocks:
                issued += int(wc[b.id]) * len(b.opcodes)
                for op in b.opcodes:
                    opcodes[op] += int(tc[b.id])
        notes = [f"emulated {self.ran} CTAs x {self.launch.threads_per_block} threads"]
        if self.ran != self.launch.blocks:
            notes.append(f"{self.ran} of the grid's {self.launch.blocks} CTAs were run")
        bc = BlockCounts(self.kernel.name, self.launch, EMULATED, counts, notes=notes)
        addresses = {name: address for name, (address, _) in dev.buffers.items()}
        return Emulation(self.kernel.name, self.launch, buffers, globals_, bc, entries, dict(opcodes), issued,
                         buffer_addresses=addresses)


def _diverge(stack: list, top: list, r: int, paths: list[tuple[int, np.ndarray]]) -> None:
    """Split the top entry into ``paths`` that reconverge at block ``r`` (the last path runs first)."""
    if top[1] == r:
        stack.pop()  # the entry below already waits at r with these lanes
    else:
        top[0] = r
    for pc, pm in paths:
        if pc != r:
            stack.append([pc, r, pm])


def _side(op: Operand) -> tuple[str, str] | Imm:
    """A caller-side call operand as (name, "reg" or "param"); constants stay as they are."""
    if isinstance(op, Imm):
        return op
    return (op.name, "reg") if isinstance(op, Reg) else (getattr(op, "name", ""), "param")


def _pass(src: Frame, a: tuple[str, str] | Imm, dst: Frame, b: tuple[str, str], mask: np.ndarray | None) -> None:
    """Copy call argument ``a`` of frame ``src`` into parameter ``b`` of frame ``dst`` (for ``mask`` lanes)."""
    name, space = b
    if space == "reg":
        if isinstance(a, Imm):
            value = np.asarray(const(a.value, UINT[8]))
        elif a[1] == "reg":
            value = src.regs[a[0]]
        else:
            raise EmulationError(f".param variable {a[0]} passed to register parameter {name}")
        raw = resize(np.broadcast_to(value, (WARP,)), dst.regs.types[name])
        dst.regs[name] = raw.copy() if mask is None else np.where(mask, raw, dst.regs[name])
        return
    if isinstance(a, Imm) or a[1] == "reg":
        raise EmulationError(f"a register or constant passed to .param parameter {name}")
    from_, to = src.param(a[0]), dst.param(name)
    n = min(from_.shape[1], to.shape[1])
    if mask is None:
        to[:, :n] = from_[:, :n]
    else:
        to[mask, :n] = from_[mask, :n]


def _external(frame: Frame, name: str, site: CallSite, mask: np.ndarray) -> None:
    """A call to a function the module only declares: ``vprintf`` returns 0 and prints nothing."""
    if name == "vprintf":
        for ret in site.returns:
            if isinstance(ret, Sym):
                frame.param(ret.name)[mask] = 0
        return
    if name in ("__assertfail", "__assert_fail"):
        raise EmulationError(f"device assertion failed in {np.count_nonzero(mask)} thread(s)")
    raise EmulationError(f"call to {name}, which the module declares but does not define")


def _located(exc: EmulationError, frame: Frame, step: tuple | None) -> EmulationError:
    """``exc`` with the PTX position and opcode of the instruction that raised it (added once)."""
    if getattr(exc, "located", False) or step is None:
        return exc
    ins = step[4]
    out = EmulationError(f"{frame.device.module.filename}:{ins.line}: {ins.opcode}: {exc}")
    out.located = True  # type: ignore[attr-defined]
    return out

