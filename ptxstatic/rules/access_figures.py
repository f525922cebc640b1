"""The figures of one memory instruction that PS101 and PS102 report: global sectors or shared wavefronts per
request against the ideal, measured on the emulated warps (:mod:`ptxstatic.rules.memory_sampling`) or, where
nothing was measured, estimated from the affine stride of the address in ``%tid.x``.

Measured figures are not used when the address depends on values read from memory (the emulator only has
made-up data), nor when its lane-to-lane stride is not a constant and depends on a parameter whose value the
launch made up; the affine estimate is only made when the stride is a constant number of bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ptxstatic.analysis.memory_access import (
    AddressInputs,
    address_inputs,
    address_operand,
    global_sectors,
    pointer_params,
    sectors_of,
    shared_wavefronts,
    value_inputs,
)
from ptxstatic.analysis.strides import VAR
from ptxstatic.limits import MEMORY_RULES_MAX_STEPS
from ptxstatic.ptx.ast import Reg, VarDecl
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.memory_sampling import KernelRun, Sampling, sample_module

#: the memory instructions whose requests PS101 and PS102 judge: loads and stores (not atomics, not copies)
JUDGED = {"ld": "load", "ldu": "load", "st": "store"}


@dataclass(frozen=True)
class Figures:
    """One instruction's requests in one state space, summed over the sampled executions."""

    requests: int
    cost: int  # sectors touched (global) or wavefronts (shared)
    ideal: int  # the minimum sectors, or the ideal wavefronts
    worst: int  # the worst n-way bank conflict of one request (shared; 1 for global)
    stride: int | None  # bytes between neighbouring lanes, when every request had the same one
    measured: bool  # by emulation (else estimated from the affine stride)
    method: str  # how, for the message
    samples: tuple[tuple[np.ndarray, np.ndarray], ...] = ()  # (lanes, addresses): measured, or the estimated warp
    indirect: bool = False  # estimated for addresses computed from loaded indices

    @property
    def ratio(self) -> float:
        return self.cost / self.ideal if self.ideal else 1.0


@dataclass(frozen=True)
class Summary:
    """The figures of the instructions one finding reports together (one source line): per request, the
    stride they share (else None), and the message's tail (stride, method, how many instructions)."""

    requests: int
    cost: float
    ideal: float
    stride: int | None
    method: str
    tail: str
    lines: list[int]


def summarise(ctx: RuleContext, found: list[tuple[int, Figures]]) -> Summary:
    """The :class:`Summary` of the (instruction index, figures) pairs of one finding."""
    requests = sum(f.requests for _, f in found)
    strides = {f.stride for _, f in found}
    stride = strides.pop() if len(strides) == 1 else None
    between = f" (stride {stride} B between lanes)" if stride is not None else ""
    several = f", {len(found)} instructions" if len(found) > 1 else ""
    methods = "; ".join(dict.fromkeys(f.method for _, f in found))
    kinds = dict.fromkeys(_method_kind(f) for _, f in found)
    return Summary(requests, sum(f.cost for _, f in found) / requests, sum(f.ideal for _, f in found) / requests,
                   stride, "+".join(kinds), f"{between}; {methods}{several}",
                   [ctx.instructions[i].line for i, _ in found])


def _method_kind(f: Figures) -> str:
    if f.measured:
        return "emulation"
    if f.indirect:
        return "indirect"
    return "affine" if f.stride is not None else "symbolic"


def sampling(ctx: RuleContext) -> Sampling:
    """The module's sampled accesses, emulated once for all rules and functions."""
    return ctx.mc.memo("PS1.sampling", lambda: sample_module(ctx.module, ctx.config, ctx.mc.budget, ctx.mc.def_use))


def instruction_figures(ctx: RuleContext, index: int, space: str) -> Figures | None:
    """The figures of instruction ``index`` (a judged load or store) in ``space``, or None when they cannot be
    known without guessing."""
    ins = ctx.instructions[index]
    found = sampling(ctx)
    coef = ctx.strides.coef(address_operand(ins), index)
    inputs = address_inputs(ctx.function, ctx.du, index)
    masks = _mask_params(ctx, inputs)
    # in a device function, parameters differ between the calling lanes: a stride through them is not known
    constant = isinstance(coef, int) and (ctx.function.is_kernel or not inputs.params)
    observed = found.requests(ctx.function.name, ins, space)
    runs = found.reached_by.get(ctx.function.name, [])
    data_given = inputs.loaded and _data_given(ctx, inputs, runs)
    folded = False
    if observed is not None:
        made_up = _invented(ctx, inputs.params, runs)
        # a made-up mask (an argument of 1024) folds the lanes' addresses together: nothing to measure
        folded = masks is not None and bool(masks & made_up)
        measurable = data_given if inputs.loaded else (constant or not made_up) and not folded
        if measurable:
            return _measured(observed.requests, observed.width, space, runs[0].method(observed.warps))
    assumed = _mask_assumption(ctx, masks)
    if constant and not inputs.loaded and _static_space(ctx, index, inputs) == space:
        offset = address_operand(ins).offset  # type: ignore[union-attr]
        why = "the emulation made up the mask" if folded else _why_not_measured(runs)
        return _affine(int(coef), offset, ins.info.width_bytes, space, why, assumed)
    # judged by assumption only where the launch leaves the stride or the data unknown (else: not reached)
    if coef == VAR and space == "global" and not inputs.loaded and _static_space(ctx, index, inputs) == space \
            and _made_up(ctx, inputs.params, runs):
        return _symbolic(ctx, inputs, ins.info.width_bytes, assumed)
    if space == "global" and inputs.loaded and not inputs.symbols and _static_space(ctx, index, inputs) == space \
            and not data_given:
        indices = _lane_loads(ctx, index)
        if indices and inputs.params & _pointers(ctx):
            return _indirect(ctx, indices, ins.info.width_bytes, "store" if ins.info.is_store else "load")
    return None


def _invented(ctx: RuleContext, params: frozenset[str], runs: list[KernelRun]) -> frozenset[str]:
    """Those of ``params`` (scalars) whose values the launches of ``runs`` made up (in a device function, all of
    them when a launch made anything up: its parameters come from the caller)."""
    if ctx.function.is_kernel:
        return params & frozenset().union(*(r.invented for r in runs))
    return params if any(r.invented for r in runs) else frozenset()


def _made_up(ctx: RuleContext, params: frozenset[str], runs: list[KernelRun]) -> bool:
    """Whether a value of ``params`` is unknown: no emulation reached the function, or its launch made one up."""
    return not runs or bool(_invented(ctx, params, runs))


def _data_given(ctx: RuleContext, inputs: AddressInputs, runs: list[KernelRun]) -> bool:
    """Whether the emulation had the real data an address computed from loaded values depends on: the launch
    gave the scalars the address reads and every argument its loaded values come from (the index buffer,
    data included), and no loaded value comes from a variable (shared memory filled elsewhere)."""
    if not runs:
        return False
    made_up = set().union(*(r.invented | r.made_up_buffers for r in runs))
    if not ctx.function.is_kernel:
        return not made_up
    data: set[str] = set()
    for j in inputs.slice:
        load = ctx.instructions[j]
        addr = address_operand(load)
        if load.info.is_load and load.info.space != "param" and addr is not None:
            if not isinstance(addr.base, Reg):
                return False
            deep = value_inputs(ctx.function, ctx.du, j, addr.base.name, through_loads=True)
            if deep.symbols:
                return False
            data |= deep.params
    return not _invented(ctx, inputs.params, runs) and not (data & made_up)


def _lane_loads(ctx: RuleContext, index: int) -> list[int]:
    """The global loads whose values instruction ``index``'s address is computed from, each lane from its own
    address (a gather's indices), as far as the values differ between lanes: the walk stops at values uniform
    along x (a ballot of loaded flags adds the same to every lane)."""
    addr = address_operand(ctx.instructions[index])
    if addr is None or not isinstance(addr.base, Reg):
        return []
    todo, seen, out = [(index, addr.base.name)], set(), []
    while todo:
        at, reg = todo.pop()
        for d in ctx.du.reaching.get((at, reg), ()):
            if d in seen or ctx.strides.value.get(d) == 0:
                continue
            seen.add(d)
            ins = ctx.instructions[d]
            if ins.info.is_load and ins.info.space != "param":
                inputs = address_inputs(ctx.function, ctx.du, d)
                if ctx.strides.coef(address_operand(ins), d) != 0 and _static_space(ctx, d, inputs) == "global":
                    out.append(d)
            elif not ins.info.is_memory_access:
                todo.extend((d, r) for r in ctx.du.uses[d])
    return sorted(out)


def _indirect(ctx: RuleContext, loads: list[int], width: int, kind: str) -> Figures:
    """Figures of an address computed from values the lanes load from their own addresses (``in[idx[i]]``):
    one sector per lane, assuming neighbouring lanes' loaded indices are not consecutive."""
    names = _cxx_names(ctx)
    read = set()
    for j in loads:
        addr = address_operand(ctx.instructions[j])
        if addr is not None and isinstance(addr.base, Reg):
            read |= value_inputs(ctx.function, ctx.du, j, addr.base.name).params
    buffers = sorted(names.get(p, p) for p in read & _pointers(ctx))
    source = " and ".join(buffers) if buffers else "memory"
    pattern = "scatter" if kind == "store" else "gather"
    method = (f"from indices the lanes load from {source}: judged assuming neighbouring lanes' indices are not "
              f"consecutive (a {pattern}; give the launch with that data to measure it)")
    return _sector_per_lane(width, method, indirect=True)


def _mask_params(ctx: RuleContext, inputs: AddressInputs) -> frozenset[str] | None:
    """The parameters of the masks (``i & mask``) that the address's stride was carried through, or None when
    it went through none."""
    masked = inputs.slice & ctx.strides.masked
    if not masked:
        return None
    out: set[str] = set()
    for i in masked:
        ins = ctx.instructions[i]
        for reg in ins.operands[1:]:
            if isinstance(reg, Reg) and ctx.strides.coef(reg, i) == 0:
                out |= value_inputs(ctx.function, ctx.du, i, reg.name).params
    return frozenset(out)


def _mask_assumption(ctx: RuleContext, masks: frozenset[str] | None) -> str:
    """The assumption a stride through masks rests on, for the message ("" when there is none)."""
    if masks is None:
        return ""
    names = _cxx_names(ctx)
    by = " and ".join(sorted(names.get(p, p) for p in masks)) or "a value uniform across the warp"
    return f"masking with {by} keeps the bits the lanes' indices differ in"


def _symbolic(ctx: RuleContext, inputs: AddressInputs, width: int, assumed: str = "") -> Figures:
    """Figures of an address whose stride between lanes is uniform but not a constant (``tid * cols * 4``):
    uncoalesced, one sector per lane, for every stride but the access width, which is assumed not to hold."""
    names = _cxx_names(ctx)
    scalars = sorted(names.get(p, p) for p in inputs.params - _pointers(ctx))
    by = " and ".join(scalars) if scalars else "values uniform across the warp"
    also = f" and that {assumed}" if assumed else ""
    method = (f"from the address's stride in %tid.x, which depends on {by}: uncoalesced for every stride but "
              f"{width} bytes, judged assuming it is not {width}{also} (a symbolic stride; give the launch to "
              "measure it)")
    return _sector_per_lane(width, method)


def _sector_per_lane(width: int, method: str, indirect: bool = False) -> Figures:
    """Figures of a warp whose 32 lanes each touch their own sector(s), against a coalesced warp's."""
    lanes = np.arange(32)
    ideal = global_sectors(lanes, (4096 + lanes * width).astype(np.uint64), width)[1]
    return Figures(1, 32 * max(1, -(-width // 32)), ideal, 1, None, False, method, indirect=indirect)


def _pointers(ctx: RuleContext) -> set[str]:
    return ctx.mc.memo(f"PS1.pointers.{ctx.function.name}", lambda: pointer_params(ctx.function, ctx.du))


def _cxx_names(ctx: RuleContext) -> dict[str, str]:
    """The kernel's PTX parameter names -> C++ names, where its CUDA source gives them."""
    from ptxstatic.ptx.cxx_params import cxx_param_names

    def names() -> dict[str, str]:
        ptx = [d.name for decl in ctx.function.params or () for d in decl.names]
        cxx = cxx_param_names(ctx.module, ctx.function)
        return {p: c for p, c in zip(ptx, cxx, strict=False) if c}

    return ctx.mc.memo(f"PS1.cxx.{ctx.function.name}", names)


def _static_space(ctx: RuleContext, index: int, inputs: AddressInputs) -> str | None:
    """The state space an instruction accesses, as far as the code tells: its own, or for a generic access in
    a kernel, global when its address comes from pointer parameters only and shared when it comes from
    shared variables only."""
    space = ctx.instructions[index].info.space
    if space != "generic" or not ctx.function.is_kernel:
        return space
    if inputs.symbols and not inputs.params and inputs.symbols <= _shared_variables(ctx):
        return "shared"
    if inputs.params and not inputs.symbols:
        return "global" if inputs.params & _pointers(ctx) else None
    return None


def _shared_variables(ctx: RuleContext) -> set[str]:
    decls = [*ctx.module.globals, *(s for s in ctx.function.statements if isinstance(s, VarDecl))]
    return {d.name for decl in decls if decl.space == "shared" for d in decl.names}


def _why_not_measured(runs: list[KernelRun]) -> str:
    stopped = next((r for r in runs if r.stopped), None)
    if stopped is None:
        return "the emulated warps did not reach it"
    reason = re.sub(r"^\S*:\d+: ", "", stopped.stopped or "")  # without the PTX position: fingerprints stay put
    if "warp instructions executed" in reason:
        reason = f"its budget of {MEMORY_RULES_MAX_STEPS} warp instructions ran out"
    return f"the emulation of {stopped.kernel} stopped: {reason}"


def _cost(lanes: np.ndarray, addresses: np.ndarray, width: int, space: str) -> tuple[int, int, int]:
    if space == "global":
        return (*global_sectors(lanes, addresses, width), 1)
    return shared_wavefronts(lanes, addresses, width)


def _measured(requests: list[tuple[np.ndarray, np.ndarray]], width: int, space: str, method: str) -> Figures:
    cost = ideal = worst = 0
    strides = set()
    for lanes, addresses in requests:
        c, i, w = _cost(lanes, addresses, width, space)
        cost, ideal, worst = cost + c, ideal + i, max(worst, w)
        strides.add(_stride(lanes, addresses))
    stride = strides.pop() if len(strides) == 1 else None
    return Figures(len(requests), cost, ideal, worst, stride, True, method, tuple(requests))


def _stride(lanes: np.ndarray, addresses: np.ndarray) -> int | None:
    """The bytes between neighbouring lanes when they are the same across the request."""
    if len(lanes) < 2:
        return None
    steps = np.diff(addresses.astype(np.int64)) / np.diff(lanes)
    return int(steps[0]) if np.all(steps == steps[0]) and float(steps[0]).is_integer() else None


def _affine(coef: int, offset: int, width: int, space: str, why: str, assumed: str = "") -> Figures:
    """Figures of lanes 0..31 at ``offset + coef * lane`` from a sector- and bank-aligned base."""
    lanes = np.arange(32)
    base = 128 * ((abs(coef) * 32 + abs(offset)) // 128 + 1)  # keeps every address positive
    addresses = (base + offset + coef * lanes).astype(np.uint64)
    cost, ideal, worst = _cost(lanes, addresses, width, space)
    also = f"; assuming {assumed}" if assumed else ""
    method = f"estimated from the address's affine stride in %tid.x, 32 threads along x per warp ({why}{also})"
    return Figures(1, cost, ideal, worst, coef, False, method, ((lanes, addresses),))


def _block_of(ctx: RuleContext) -> dict[int, int]:
    return ctx.mc.memo(f"PS1.blocks.{ctx.function.name}", lambda: {
        j: b.id for b in ctx.cfg.blocks for j in range(b.start, b.start + len(b.instructions))})


def report_key(ctx: RuleContext, index: int) -> object:
    """What the accesses of one finding share: their ``.cu`` line, or without line information their basic
    block and address register (the copies of an unrolled loop)."""
    source, _ = ctx.source_location(index)
    if source is not None:
        return source
    addr = address_operand(ctx.instructions[index])
    base = getattr(addr.base, "name", None) if addr is not None else None
    return (_block_of(ctx).get(index), base) if base else index


def sibling_groups(ctx: RuleContext, indices: list[int], judged: dict[int, Figures]) -> list[list[int]]:
    """``indices`` grouped into accesses of one warp to neighbouring fields (``a[2 * i]`` and ``a[2 * i + 1]``,
    ``p[i].x`` and ``p[i].y``): same basic block, and addresses a lane-constant offset apart that is smaller
    than their stride, in every measured request (estimated ones: the same address register)."""
    block_of = _block_of(ctx)
    parent = {i: i for i in indices}

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for k, a in enumerate(indices):
        for b in indices[k + 1:]:
            if block_of.get(a) == block_of.get(b) and _neighbours(ctx, judged[a], judged[b], a, b):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _neighbours(ctx: RuleContext, a: Figures, b: Figures, ia: int, ib: int) -> bool:
    if a.measured != b.measured or len(a.samples) != len(b.samples):
        return False
    if not a.measured:
        base_a, base_b = address_operand(ctx.instructions[ia]), address_operand(ctx.instructions[ib])
        return base_a is not None and base_b is not None and base_a.base == base_b.base
    stride = max(abs(a.stride or 0), abs(b.stride or 0))
    for (lanes_a, addr_a), (lanes_b, addr_b) in zip(a.samples, b.samples, strict=True):
        if not np.array_equal(lanes_a, lanes_b):
            return False
        gap = addr_b.astype(np.int64) - addr_a.astype(np.int64)
        if not np.all(gap == gap[0]) or abs(int(gap[0])) >= stride:
            return False
    return True


def combined_sectors(members: list[Figures], widths: list[int]) -> tuple[int, int] | None:
    """(sectors, minimum) of sibling global accesses taken together, request by request: the sectors their
    bytes touch together against the sum of their minimums; None when they did not run together."""
    counts = {len(f.samples) for f in members}
    if len(counts) != 1 or len({f.measured for f in members}) != 1:
        return None
    sectors = minimum = 0
    for k in range(counts.pop()):
        touched = [sectors_of(f.samples[k][1], w) for f, w in zip(members, widths, strict=True)]
        sectors += len(np.unique(np.concatenate(touched)))
        minimum += sum(global_sectors(*f.samples[k], w)[1] for f, w in zip(members, widths, strict=True))
    return sectors, minimum
