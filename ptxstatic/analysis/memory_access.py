"""What the per-lane addresses of one warp-level memory request cost, and what an address is computed from.

A global request touches 32-byte sectors; its minimum is the number of sectors the same lanes touch when
they access consecutive elements (``sectors/request`` against the ideal, as Nsight Compute reports them).
A shared request is served in wavefronts: shared memory has 32 banks of 4-byte words, and lanes that ask
for different words of one bank are served one after another (an n-way conflict), while lanes that ask for
the same word share it (broadcast). 64-bit accesses are split into two phases of 16 lanes and 128-bit
accesses into four phases of 8 lanes, as the hardware does, and conflicts only arise within a phase.

:func:`address_inputs` walks an address back through the def-use chains to the parameters it is computed
from and tells whether it depends on a value read from memory; :func:`pointer_params` finds the 64-bit
parameters that are used as addresses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxstatic.analysis.defuse import DefUse
from ptxstatic.limits import WARP_SIZE as WARP
from ptxstatic.ptx.ast import Addr, Function, Instruction, Reg, Sym

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4


def global_sectors(lanes: np.ndarray, addresses: np.ndarray, width: int) -> tuple[int, int]:
    """(sectors touched, minimum sectors) of one global request by ``lanes`` (0..31) at ``addresses`` of
    ``width`` bytes each. The minimum is what the same lanes touch when each accesses the element after the
    previous lane's from an aligned base (a coalesced access), so that inactive lanes do not count as waste."""
    offsets = np.asarray(lanes, dtype=np.int64) * width
    coalesced = np.union1d(offsets // SECTOR_BYTES, (offsets + width - 1) // SECTOR_BYTES)
    return len(sectors_of(addresses, width)), len(coalesced)


def sectors_of(addresses: np.ndarray, width: int) -> np.ndarray:
    """The distinct 32-byte sectors (address // 32) that accesses of ``width`` bytes at ``addresses`` touch."""
    a = np.asarray(addresses, dtype=np.uint64)
    first = a // SECTOR_BYTES
    if SECTOR_BYTES % width == 0 and not (a % np.uint64(width)).any():  # aligned: no access spans two sectors
        return np.unique(first)
    return np.union1d(first, (a + np.uint64(width - 1)) // SECTOR_BYTES)


def shared_wavefronts(lanes: np.ndarray, addresses: np.ndarray, width: int) -> tuple[int, int, int]:
    """(wavefronts, ideal wavefronts, worst n-way degree) of one shared request by ``lanes`` (0..31) at
    ``addresses`` of ``width`` bytes each."""
    lanes = np.asarray(lanes)
    a = np.asarray(addresses, dtype=np.uint64)
    phase_lanes = WARP * BANK_BYTES // max(width, BANK_BYTES)  # 32, 16 (64-bit) or 8 (128-bit) lanes a phase
    words_per_lane = max(width // BANK_BYTES, 1)
    wavefronts = ideal = worst = 0
    for phase in np.unique(lanes // phase_lanes):
        first = a[lanes // phase_lanes == phase] // BANK_BYTES
        words = np.unique(first[:, None] + np.arange(words_per_lane, dtype=np.uint64)[None, :])
        degree = int(np.bincount((words % BANKS).astype(np.int64), minlength=BANKS).max())
        wavefronts += degree
        ideal += 1
        worst = max(worst, degree)
    return wavefronts, ideal, worst


@dataclass(frozen=True)
class AddressInputs:
    """What the address of a memory instruction (or any register's value) is computed from."""

    params: frozenset[str]  # parameters whose values it reads
    loaded: bool  # whether it depends on a value read from memory other than a parameter
    symbols: frozenset[str] = frozenset()  # variables whose addresses it is computed from
    slice: frozenset[int] = frozenset()  # the instructions that compute it


def address_operand(ins: Instruction) -> Addr | None:
    """The ``[address]`` operand of a memory instruction (the destination's for a copy), or None."""
    return next((o for o in ins.operands if isinstance(o, Addr)), None)


def address_inputs(fn: Function, du: DefUse, index: int) -> AddressInputs:
    """The parameters and loaded values that instruction ``index``'s address is computed from."""
    addr = address_operand(fn.instructions[index])
    inputs = value_inputs(fn, du, index, addr.base.name) if addr is not None and isinstance(addr.base, Reg) \
        else AddressInputs(frozenset(), False)
    if addr is not None and isinstance(addr.base, Sym):
        return AddressInputs(inputs.params, inputs.loaded, inputs.symbols | {addr.base.name}, inputs.slice)
    return inputs


def value_inputs(fn: Function, du: DefUse, user: int, register: str, through_loads: bool = False) -> AddressInputs:
    """The parameters and loaded values that ``register``, as instruction ``user`` reads it, is computed from;
    ``through_loads``: also what the addresses of the loads it reads are computed from (the data it depends on:
    a gather's index buffer)."""
    params: set[str] = set()
    symbols: set[str] = set()
    loaded = False
    todo = [(user, register)]
    seen: set[int] = set()
    while todo:
        at, reg = todo.pop()
        for d in du.reaching.get((at, reg), ()):
            if d in seen:
                continue
            seen.add(d)
            ins = fn.instructions[d]
            source = address_operand(ins)
            if ins.info.is_load and ins.info.space == "param":
                if source is not None and isinstance(source.base, Sym):
                    params.add(source.base.name)
            elif ins.info.is_load or ins.info.is_memory_access:
                loaded = True
                if through_loads:
                    symbols.update(o.base.name for o in ins.operands[1:]
                                   if isinstance(o, Addr) and isinstance(o.base, Sym))
                    todo.extend((d, r) for r in du.uses[d])
            else:
                symbols.update(o.name for o in ins.operands[1:] if isinstance(o, Sym))
                todo.extend((d, r) for r in du.uses[d])
    return AddressInputs(frozenset(params), loaded, frozenset(symbols), frozenset(seen))


_POINTER_ARITHMETIC = ("mov", "cvta", "add", "sub")
_PASSED_ON = ("st", "call")  # a value stored (to a call's .param or memory) says nothing of its kind


def pointer_params(fn: Function, du: DefUse) -> set[str]:
    """64-bit parameters that are pointers: their loaded value reaches an address or a ``cvta`` through moves,
    additions and subtractions, or is never used as an integer (scaled, compared, divided, ...); a size or an
    index is scaled before it is added to a pointer."""
    chains = du.chains()
    out = set()
    for i, ins in enumerate(fn.instructions):
        source = address_operand(ins)
        if (ins.info.is_load and ins.info.space == "param" and ins.info.width_bytes == 8
                and source is not None and isinstance(source.base, Sym)):
            pointer, integer = _uses(fn, du, chains, i)
            if pointer or not integer:
                out.add(source.base.name)
    return out


def _uses(fn: Function, du: DefUse, chains: dict[int, list[int]], start: int) -> tuple[bool, bool]:
    """(used as an address, used as an integer) of the value instruction ``start`` defines."""
    todo, seen = [start], {start}
    integer = False
    while todo:
        d = todo.pop()
        for u in chains.get(d, ()):
            user = fn.instructions[u]
            based = address_operand(user)
            if user.info.opcode == "cvta" or (based is not None and isinstance(based.base, Reg)
                                              and based.base.name in du.defs[d]):
                return True, integer
            if user.info.opcode in _POINTER_ARITHMETIC:
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
            elif user.info.opcode not in _PASSED_ON:
                integer = True
    return False, integer
