"""The LLVM NVPTX back end through llvmlite: parsing and verifying IR text, and lowering it to PTX.

llvmlite is optional (``pip install 'ptxstatic[llvm]'``); :func:`binding` says so when it is missing.
"""

from __future__ import annotations

import re
from typing import Any

from ptxstatic.errors import PtxstaticError, SourceError

DEFAULT_CPU = "sm_80"
DEFAULT_FEATURES = "+ptx80"


def binding() -> Any:
    """``llvmlite.binding`` with every target and assembly printer initialised."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        raise PtxstaticError("the LLVM IR route needs llvmlite: pip install 'ptxstatic[llvm]'") from None
    for init in ("initialize_all_targets", "initialize_all_asmprinters"):
        getattr(llvm, init)()
    return llvm


def parse_ir(text: str, filename: str) -> Any:
    """The verified llvmlite module of IR ``text``; a parse error is a :class:`SourceError` at its line."""
    llvm = binding()
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as exc:
        msg = str(exc).strip()
        m = re.search(r":(\d+):(\d+): error: (.*)", msg)
        if m:
            line = int(m.group(1))
            raise SourceError(filename, line, int(m.group(2)), m.group(3),
                              text.splitlines()[line - 1] if line <= text.count("\n") + 1 else "") from None
        raise PtxstaticError(f"{filename}: not valid LLVM IR: {msg.splitlines()[-1] if msg else exc}") from None
    return mod


def lower(text: str, filename: str, cpu: str = DEFAULT_CPU, features: str = DEFAULT_FEATURES) -> str:
    """PTX from NVPTX IR text through llvmlite's back end (opt level 3)."""
    mod = parse_ir(text, filename)
    target = binding().Target.from_triple("nvptx64-nvidia-cuda")
    tm = target.create_target_machine(cpu=cpu, features=features, opt=3)
    try:
        return tm.emit_assembly(mod)
    except RuntimeError as exc:
        raise PtxstaticError(f"{filename}: the NVPTX back end failed: {exc}") from None
