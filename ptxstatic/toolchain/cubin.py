"""What ``ptxas -v`` would report, read from a cubin that ptxas wrote without ``-v`` (nvcc's own, in a build).

A cubin is an ELF file. ptxas records in its ``.nv.info`` section, per function, the registers
(``EIATTR_REGCOUNT``) and the stack frame (``EIATTR_FRAME_SIZE``) as records of the function's symbol index
and a 32-bit value; a kernel's static shared memory is the size of its ``.nv.shared.KERNEL`` section, which
from sm_90 on also holds the block's reserved shared memory (the cubin then names it: a
``.nv.shared.reserved.0`` section or a ``.nv.reservedSmem.*`` symbol), and ``ptxas -v`` leaves that out.
Spills are not recorded anywhere: only a function without a stack frame is known not to spill, so a cubin with
a stack frame anywhere answers nothing (None) and ``ptxas -v`` has to. A device function that ptxas inlined
everywhere has no record; ``ptxas -v`` lists some of those with an empty frame and not others, which matters
only to a function with local memory in its PTX (PS301 reads its frame), so such a function answers nothing
either. The fields filled are those the rules read: registers and static shared memory of kernels, stack
frame and spills of every function.
"""

from __future__ import annotations

import io
import re
import struct

from ptxstatic.hardware.occupancy import ARCHS
from ptxstatic.ptx.ast import Module
from ptxstatic.toolchain.ptxas import PtxasFunction

_REGCOUNT = 0x2F
_FRAME_SIZE = 0x11
_SIZED = 0x04  # EIFMT_SVAL: a 16-bit size and that many bytes; the other formats hold 2 bytes
_ET_EXEC = "ET_EXEC"  # a whole-program cubin (``ptxas -c`` writes a relocatable one, ET_REL)
_RESERVED_SHARED = re.compile(r"\.nv\.(shared\.reserved|reservedSmem)\.")


def cubin_stats(data: bytes, module: Module, arch: str) -> dict[str, PtxasFunction] | None:
    """``ptxas -v -arch=ARCH`` statistics of ``module``'s functions from the cubin ``data`` that ptxas made of
    it for ``arch`` with its default options; None when the cubin cannot tell them all (a stack frame, which may
    hold spills; a relocatable or unreadable cubin; a function of the module it does not account for)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        if elf.header.e_type != _ET_EXEC:
            return None
        sections = {s.name: s for s in elf.iter_sections()}
        symbols = [s.name for s in sections[".symtab"].iter_symbols()]
        info = _function_attributes(sections[".nv.info"].data(), symbols)
    except (ELFError, KeyError, IndexError, struct.error, ValueError):
        return None
    base = ARCHS.get(re.sub(r"(?<=\d)[a-z]$", "", arch))
    reserved = 0
    if any(map(_RESERVED_SHARED.match, [*sections, *symbols])):
        if base is None:
            return None  # how much it reserves is known for the architectures of the occupancy table only
        reserved = base.shared_reserved_per_block
    out: dict[str, PtxasFunction] = {}
    for fn in module.functions:
        if fn.body is None:
            continue
        registers, frame = info.get((_REGCOUNT, fn.name)), info.get((_FRAME_SIZE, fn.name))
        if frame is None and not fn.is_kernel:
            if any(ins.info.space == "local" for ins in fn.instructions):
                return None
            continue
        if frame or registers is None:
            return None
        stats = out[fn.name] = PtxasFunction(fn.name, arch)
        if not fn.is_kernel:
            continue  # ptxas -v gives a device function its stack frame only
        shared = sections.get(f".nv.shared.{fn.name}")
        stats.registers = registers
        stats.shared_bytes = max(0, shared["sh_size"] - reserved) if shared is not None else 0
    return out


def _function_attributes(data: bytes, symbols: list[str]) -> dict[tuple[int, str], int]:
    """(attribute, function name) -> value of the per-function records of a ``.nv.info`` section."""
    out: dict[tuple[int, str], int] = {}
    i = 0
    while i + 4 <= len(data):
        fmt, attribute = data[i], data[i + 1]
        if fmt != _SIZED:
            i += 4
            continue
        (size,) = struct.unpack_from("<H", data, i + 2)
        if attribute in (_REGCOUNT, _FRAME_SIZE):
            index, value = struct.unpack_from("<II", data, i + 4)
            out[(attribute, symbols[index])] = value
        i += 4 + size
    return out
