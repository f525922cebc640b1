"""Demangling C++ kernel names (``_Z14tmpl_block_sumIfLi256EEvPKT_PS0_i``) with ``c++filt`` or ``cu++filt``."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Each name mapped to its demangled form; names that are not mangled, or every name when no demangler
    is on the PATH or it fails, map to themselves."""
    names = list(dict.fromkeys(names))
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    tool = shutil.which("c++filt") or shutil.which("cu++filt")
    if not mangled or tool is None:
        return out
    try:
        run = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return out
    lines = run.stdout.splitlines()
    if run.returncode == 0 and len(lines) == len(mangled):
        out.update(zip(mangled, lines, strict=True))
    return out
