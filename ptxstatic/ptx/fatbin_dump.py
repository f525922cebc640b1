"""PTX as ``cuobjdump -ptx`` writes it: an object file's or executable's fat binary as sections, each a
header (``Fatbin ptx code:``, a rule, ``arch = sm_80``, ``code version``, ``host``, ``compile_size``,
``compressed``, ...) and then the PTX of one translation unit for one virtual architecture.

:func:`ptx_of_dump` turns such a dump into one PTX module: the sections of the highest architecture (one per
translation unit), every other line blanked so that line numbers stay those of the dump file, and the
``.version``/``.target``/``.address_size`` lines of the second and later translation units blanked where
they repeat the first's. Text that is not a dump is returned unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ptxstatic.errors import SourceError
from ptxstatic.ptx.isa import sm_number

_SECTION = re.compile(r"Fatbin (\w+) code:")
_DUMP_START = re.compile(r"\s*Fatbin \w+ code:")
_ARCH = re.compile(r"arch\s*=\s*(sm_\d+[a-z]?)")
_MODULE_HEADER = (".version", ".target", ".address_size")


@dataclass(frozen=True)
class Section:
    """One PTX section of a dump: its architecture and its PTX lines (``first`` to ``end``, 0-based)."""

    arch: str
    first: int
    end: int


def is_dump(text: str) -> bool:
    """Whether ``text`` starts (after blank lines) with a ``Fatbin ... code:`` section header."""
    return _DUMP_START.match(text) is not None


def sections(lines: list[str]) -> list[Section]:
    """The PTX sections of a dump's lines (ELF and SASS sections are skipped)."""
    found, i = [], 0
    while i < len(lines):
        m = _SECTION.fullmatch(lines[i].strip())
        if m is None:
            i += 1
            continue
        kind, arch, i = m[1], "", i + 1
        while i < len(lines) and lines[i].strip():  # the rule and the key = value lines, up to a blank line
            arch = (_ARCH.search(lines[i]) or [None, arch])[1]
            i += 1
        first = i
        while i < len(lines) and _SECTION.fullmatch(lines[i].strip()) is None:
            i += 1
        if kind == "ptx":
            found.append(Section(arch, first, i))
    return found


def ptx_of_dump(text: str, filename: str) -> str:
    """The PTX module of a ``cuobjdump -ptx`` dump (see the module's docstring); ``text`` if it is not one."""
    if not is_dump(text):
        return text
    lines = text.split("\n")
    found = sections(lines)
    if not found:
        raise SourceError(filename, 1, 1, "cuobjdump output without PTX sections (only machine code): "
                                          "dump it with `cuobjdump -ptx`")
    best = max((s.arch for s in found), key=sm_number)
    kept = [s for s in found if s.arch == best]
    out = [""] * len(lines)
    header: dict[str, str] = {}
    for n, s in enumerate(kept):
        for i in range(s.first, s.end):
            line = lines[i]
            word = line.split(maxsplit=1)[0] if line.strip() else ""
            if word in _MODULE_HEADER:
                if n and header.get(word) == line.strip():
                    continue
                header.setdefault(word, line.strip())
            out[i] = line
    return "\n".join(out)
