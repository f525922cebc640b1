"""Observing the emulator's memory accesses: one :class:`MemoryAccess` per warp-level memory instruction.

``emulate(..., observer=f)`` calls ``f(access)`` before every ``ld``, ``ldu``, ``st``, ``atom``, ``red`` and
``cp.async`` a warp executes on global, shared, local or constant memory (kernel and ``.func`` parameters
are not reported), with the addresses of the lanes that make it. A generic access is
reported once per state space its lanes' addresses fall in, with space addresses. The observer must not
change the arrays it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ptxstatic.ptx.ast import Instruction

LOAD, STORE, ATOMIC = "load", "store", "atomic"


@dataclass(frozen=True, slots=True)
class MemoryAccess:
    """One warp's execution of one memory instruction in one state space."""

    function: str  # PTX name of the function executing it
    instruction: Instruction  # the instruction, as in the parsed module given to ``emulate``
    cta: tuple[int, int, int]
    warp: int  # the warp's index in its CTA
    space: str  # "global", "shared", "local" or "const"
    kind: str  # LOAD, STORE or ATOMIC (cp.async: a global load and a shared store)
    lanes: np.ndarray  # indices (0..31) of the lanes making the access, ascending
    addresses: np.ndarray  # addresses in ``space`` (uint64): global (and .const), shared offsets, local frame offsets
    width: int  # bytes each lane accesses (vector accesses: the whole vector)


Observer = Callable[[MemoryAccess], None]
