"""Demangling C++ kernel names (``_Z14tmpl_block_sumIfLi256EEvPKT_PS0_i``) with ``c++filt`` or ``cu++filt``."""

from __future__ import annotations

from collections.abc import Iterable

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import TOOL_QUERY_TIMEOUT_S
from ptxstatic.toolchain.process import find, run_tool


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Each name mapped to its demangled form; names that are not mangled, or every name when no demangler
    is on the PATH or it fails, map to themselves."""
    names = list(dict.fromkeys(names))
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    tool = find("c++filt") or find("cu++filt")
    if not mangled or tool is None:
        return out
    try:
        run = run_tool([tool, *mangled], TOOL_QUERY_TIMEOUT_S, "demangling kernel names")
    except PtxstaticError:
        return out
    lines = run.stdout.splitlines()
    if run.returncode == 0 and len(lines) == len(mangled):
        out.update(zip(mangled, lines, strict=True))
    return out
