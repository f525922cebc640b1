"""The emulator's error type."""

from __future__ import annotations

from ptxstatic.errors import PtxstaticError


class EmulationError(PtxstaticError):
    """Something the emulator does not model or a fault of the emulated program (bad address, trap, deadlock)."""
