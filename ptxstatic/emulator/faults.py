"""The emulator's error type, and the signal that ends an emulation early on purpose."""

from __future__ import annotations

from ptxstatic.errors import PtxstaticError


class EmulationError(PtxstaticError):
    """Something the emulator does not model or a fault of the emulated program (bad address, trap, deadlock)."""


class StopEmulation(Exception):
    """Ends an emulation early and keeps what ran: raised by an observer or a progress callback, or by the
    step limit of an emulation asked for ``partial`` results; the message says why."""
