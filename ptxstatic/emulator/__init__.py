"""The functional PTX emulator: runs a kernel's whole grid on the CPU and counts basic-block entries.

``emulate(module, kernel, launch)`` returns an :class:`Emulation` (block counts, buffers, instruction
counts) or raises :class:`EmulationError`. See ``docs/emulator.md``.
"""

from ptxstatic.emulator.faults import EmulationError, StopEmulation
from ptxstatic.emulator.observe import MemoryAccess, Observer
from ptxstatic.emulator.simt import EMULATED, CodeCache, Emulation, emulate

__all__ = ["EMULATED", "CodeCache", "Emulation", "EmulationError", "MemoryAccess", "Observer", "StopEmulation",
           "emulate"]
