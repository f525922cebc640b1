"""The per-lane addresses of a module's memory instructions, measured by emulating representative warps.

Every kernel of the module runs on the emulator for CTA (0, 0, 0) of a launch: the configuration's
``launch`` with the arguments it leaves out filled in, else the default launch (:func:`kernel_launch`). The
accesses of warps ``0 .. MEMORY_RULES_SAMPLE_WARPS - 1`` are kept (the CTA's other warps run too, for its
barriers), for the kernel and the device functions it calls: the first ``MEMORY_RULES_SAMPLE_REQUESTS``
executions of each instruction by each sampled warp. The warps take turns every ``SAMPLE_TIME_SLICE`` warp
instructions, so that all of them are sampled early; once each sampled warp has gone
``MEMORY_RULES_IDLE_TURNS`` turns without adding a request (``MEMORY_RULES_QUIET_TURNS`` before its first:
the warps go round loops whose memory instructions are all sampled, or that have none), the emulation ends
there, and otherwise after ``MEMORY_RULES_MAX_STEPS`` warp instructions or when the analysis's CPU budget
(:class:`~ptxstatic.rules.budget.Budget`) is spent. When it ends before the CTA has finished (that saturation,
the step limit or the budget, an instruction the emulator does not model, a fault on made-up data) what ran
until then is kept with the reason. The rules PS101 and PS102 read it (``ctx.mc.memo``) and fall
back to the affine stride of an address in ``%tid.x`` where nothing was measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from ptxstatic.config import Config
from ptxstatic.launch import Launch
from ptxstatic.limits import (
    MEMORY_RULES_IDLE_TURNS,
    MEMORY_RULES_MAX_STEPS,
    MEMORY_RULES_QUIET_TURNS,
    MEMORY_RULES_SAMPLE_REQUESTS,
    MEMORY_RULES_SAMPLE_WARPS,
)
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.launch_binding import bind_present
from ptxstatic.rules.budget import Budget
from ptxstatic.traffic.sample import complete_args

if TYPE_CHECKING:
    from ptxstatic.analysis.defuse import DefUse

#: the default launch: blocks of 32 x 4 threads (one warp a row of x, every warp sampled) in a 32 x 32 grid,
#: integer arguments 1024, floating-point ones 1.0, and a 2 MiB zero-filled buffer for every pointer
DEFAULT_BLOCK = (32, 4, 1)
DEFAULT_GRID = (32, 32, 1)
DEFAULT_BUFFER_BYTES = 2 << 20
DEFAULT_SHARED_BYTES = 48 << 10
SAMPLED_CTA = (0, 0, 0)
#: warp instructions a warp of the sampled CTA runs before the next one gets its turn
SAMPLE_TIME_SLICE = 64

#: why an emulation stopped whose warps had stopped adding requests (:attr:`KernelRun.stopped`)
#: what the budget leaves unfinished, as :meth:`Budget.record` names it
EMULATION = "the memory rules' emulation"
OUT_OF_BUDGET = "the analysis's CPU budget was spent"
SATURATED = (f"each sampled warp went {MEMORY_RULES_IDLE_TURNS} turns of {SAMPLE_TIME_SLICE} warp instructions "
             f"without reaching a memory instruction not sampled yet, or {MEMORY_RULES_QUIET_TURNS} before its first")


@dataclass
class Requests:
    """The sampled requests of one instruction in one state space: (lanes, addresses) per warp execution."""

    space: str
    width: int
    requests: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    warps: set[int] = field(default_factory=set)  # the warps that made them
    per_warp: dict[int, int] = field(default_factory=dict)  # how many each made

    def add(self, warp: int, lanes: np.ndarray, addresses: np.ndarray) -> bool:
        """Keep one request of ``warp`` unless that warp has made its share already; whether it was kept."""
        made = self.per_warp.get(warp, 0)
        if made >= MEMORY_RULES_SAMPLE_REQUESTS:
            return False
        self.per_warp[warp] = made + 1
        self.requests.append((lanes, addresses))
        self.warps.add(warp)
        return True


@dataclass(frozen=True)
class KernelRun:
    """How one kernel was emulated."""

    kernel: str
    launch: Launch
    invented: frozenset[str]  # scalar parameters whose values the launch made up
    stopped: str | None  # why the emulation ended before the CTA finished, None when it finished
    from_config: bool
    made_up_buffers: frozenset[str] = frozenset()  # pointer parameters given a zero-filled buffer

    def method(self, warps_measured: set[int]) -> str:
        """How figures measured on ``warps_measured`` in this run were obtained, for a finding's message."""
        w = sorted(warps_measured)
        if len(w) == 1:
            warps = f"warp {w[0]}"
        elif w == list(range(w[0], w[-1] + 1)):
            warps = f"warps {w[0]}..{w[-1]}"
        else:
            warps = "warps " + ", ".join(map(str, w))
        block = "x".join(str(d) for d in self.launch.block)
        where = "the configured launch" if self.from_config else "the default launch"
        return f"measured by emulation of {warps} of CTA {SAMPLED_CTA} ({where}, block {block})"


@dataclass
class Sampling:
    """What the emulation of a module's kernels measured."""

    runs: list[KernelRun] = field(default_factory=list)
    # (function name, id of the instruction) -> space -> its requests
    accesses: dict[tuple[str, int], dict[str, Requests]] = field(default_factory=dict)
    # function name -> the runs that executed it
    reached_by: dict[str, list[KernelRun]] = field(default_factory=dict)

    def requests(self, function: str, instruction: object, space: str) -> Requests | None:
        return self.accesses.get((function, id(instruction)), {}).get(space)


def kernel_launch(module: Module, fn: Function, pointers: set[str], configured: Launch | None
                  ) -> tuple[Launch, frozenset[str], frozenset[str]]:
    """The launch the memory rules emulate ``fn`` with, and the scalar and pointer parameters it made up.

    Arguments of ``configured`` are taken by C++ name, index or PTX name, as on the command line. Grid,
    block and dynamic shared memory come from ``configured`` when there is one; otherwise the
    default block (``.reqntid`` when the kernel declares it, fewer rows under ``.maxntid``), the default
    grid and 48 KiB. Arguments the configuration does not give (by name or position) are made up: a
    zero-filled buffer for a pointer, 1024 for an integer, 1.0 for a floating-point value, zeros for an
    aggregate passed by value.
    """
    given = bind_present(module, fn, configured.args)[0] if configured is not None else {}
    args, scalars, buffers = complete_args(fn, given, pointers, DEFAULT_BUFFER_BYTES)
    if configured is not None:
        return Launch(configured.grid, configured.block, configured.shared_bytes, args), scalars, buffers
    return Launch(DEFAULT_GRID, _default_block(fn), DEFAULT_SHARED_BYTES, args), scalars, buffers


def _default_block(fn: Function) -> tuple[int, int, int]:
    required = fn.directive("reqntid")
    if required is not None and required.values:
        dims = [int(v) for v in required.values][:3]
        return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]
    most = fn.directive("maxntid")
    threads = math.prod(DEFAULT_BLOCK)
    if most is not None and most.values:
        threads = min(threads, math.prod(int(v) for v in most.values))
    x = min(DEFAULT_BLOCK[0], threads)
    return (x, max(1, threads // x), 1)


def sample_module(module: Module, config: Config, budget: Budget | None = None,
                  def_use_of: Callable[[Function], DefUse] | None = None) -> Sampling:
    """Emulate CTA (0, 0, 0) of every kernel of ``module`` and keep the sampled warps' accesses, within
    ``budget`` (an emulation it cuts short is recorded there); ``def_use_of`` gives a function's reaching
    definitions where they are kept (else they are computed here)."""
    from ptxstatic.analysis.address_slice import memory_steers_addresses
    from ptxstatic.analysis.defuse import function_def_use
    from ptxstatic.analysis.memory_access import pointer_params

    du = def_use_of or function_def_use
    out = Sampling()
    device_functions = [f for f in module.functions if not f.is_kernel]
    # whether memory steers an address in a device function: asked once, when a kernel's emulation first needs it
    in_calls = cache(lambda: memory_steers_addresses(device_functions, du))

    for fn in module.kernels:
        pointers = pointer_params(fn, du(fn))
        launch, invented, buffers = kernel_launch(module, fn, pointers, config.launch)
        reached: set[str] = set()
        stopped = _emulate(module, fn, launch, out, reached, budget, _leave_out(fn, du, in_calls))
        if stopped == OUT_OF_BUDGET:
            budget.record(EMULATION, fn.name)
        run = KernelRun(fn.name, launch, invented, stopped, config.launch is not None, buffers)
        out.runs.append(run)
        for name in reached | {fn.name}:
            out.reached_by.setdefault(name, []).append(run)
    return out


def _leave_out(kernel: Function, du: Callable[[Function], DefUse], in_calls: Callable[[], bool]
               ) -> Callable[[Function], frozenset[int]]:
    """The instructions an emulation of ``kernel`` need not run (they decide no address): stores keep their
    data when a value read from memory steers an address in the kernel or (``in_calls()``) a device function
    it may call."""
    from ptxstatic.analysis.address_slice import address_slice

    @cache
    def kernel_slice() -> tuple[frozenset[int], bool]:
        """The kernel's instructions left out, and whether stores keep their data (decided on first use)."""
        left, steers = address_slice(kernel, du(kernel), False)
        with_data = in_calls() or steers
        return (address_slice(kernel, du(kernel), True)[0] if with_data else left), with_data

    def leave_out(fn: Function) -> frozenset[int]:
        left, with_data = kernel_slice()
        return left if fn is kernel else address_slice(fn, du(fn), with_data)[0]

    return leave_out


def _settled(idle: list[int | None], turns: list[int]) -> bool:
    """Whether the sampled warps have stopped adding requests: each has gone ``MEMORY_RULES_IDLE_TURNS`` turns
    without adding one, or, one that has made none yet, ``MEMORY_RULES_QUIET_TURNS`` turns in all."""
    return all(t >= MEMORY_RULES_QUIET_TURNS if n is None else n >= MEMORY_RULES_IDLE_TURNS
               for n, t in zip(idle, turns, strict=True))


class _Saturated(Exception):
    """Ends an emulation that has gone on without sampling anything new."""


class _OutOfBudget(Exception):
    """Ends an emulation when the analysis's budget is spent."""


def _emulate(module: Module, fn: Function, launch: Launch, out: Sampling, reached: set[str],
             budget: Budget | None, leave_out: Callable[[Function], frozenset[int]] | None = None) -> str | None:
    """Run the sampled CTA of ``fn``, adding the sampled warps' accesses to ``out`` (the functions they came
    from to ``reached``); returns why it stopped early (None when it finished). ``leave_out``: the instructions
    of a function that decide no address (not run)."""
    from ptxstatic.emulator import EmulationError, MemoryAccess, emulate

    if budget is not None and budget.spent():
        return OUT_OF_BUDGET
    sampled = min(MEMORY_RULES_SAMPLE_WARPS, launch.warps_per_block)
    idle: list[int | None] = [None] * sampled  # per sampled warp: turns since it last added a request
    turns = [0] * sampled  # and turns in all

    def observe(access: MemoryAccess) -> None:
        if access.warp >= sampled or access.space not in ("global", "shared"):
            return
        reached.add(access.function)
        by_space = out.accesses.setdefault((access.function, id(access.instruction)), {})
        kept = by_space.setdefault(access.space, Requests(access.space, access.width))
        if kept.add(access.warp, access.lanes, access.addresses):
            idle[access.warp] = 0

    def progress(warp: int, _executed: int) -> None:
        if budget is not None and budget.spent():
            raise _OutOfBudget
        if warp < sampled:
            turns[warp] += 1
            if idle[warp] is not None:
                idle[warp] += 1
            if _settled(idle, turns):
                raise _Saturated

    try:
        emulate(module, fn, launch, max_steps=MEMORY_RULES_MAX_STEPS, ctas=[SAMPLED_CTA], observer=observe,
                time_slice=SAMPLE_TIME_SLICE, progress=progress, outputs=False, leave_out=leave_out)
    except EmulationError as exc:
        return str(exc)
    except _Saturated:
        return SATURATED
    except _OutOfBudget:
        return OUT_OF_BUDGET
    return None
