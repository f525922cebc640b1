"""Where kernels are in an editor's text: each kernel's header (a ``__global__`` function in CUDA, an
``.entry`` in PTX), matched to the kernels of the document's PTX by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

_GLOBAL = re.compile(r"\b__global__\b")
_CALL = re.compile(r"(\w+)\s*\(")
_ATTRIBUTES = {"__launch_bounds__", "__attribute__", "__declspec", "__maxnreg__", "__cluster_dims__",
               "__grid_constant__", "__align__"}
_ENTRY = re.compile(r"^[ \t]*(?:\.visible[ \t]+|\.weak[ \t]+)?\.entry[ \t]+([\w$.]+)", re.M)


@dataclass(frozen=True)
class KernelSpan:
    """A kernel's header in the document: its name (the CUDA identifier, or the PTX name) and its lines
    (0-based, first to last inclusive)."""

    name: str
    first: int
    last: int


def kernel_spans(text: str, kind: str) -> list[KernelSpan]:
    """Each kernel's header in ``text``: from ``__global__`` to its name's line in CUDA, the ``.entry``
    line in PTX."""
    if kind == "ptx":
        return [KernelSpan(m.group(1), *([text.count("\n", 0, m.start(1))] * 2)) for m in _ENTRY.finditer(text)]
    spans = []
    for g in _GLOBAL.finditer(text):
        stop = min((i for i in (text.find(";", g.end()), text.find("{", g.end())) if i >= 0), default=len(text))
        name = next((m for m in _CALL.finditer(text, g.end(), stop) if m.group(1) not in _ATTRIBUTES), None)
        if name is not None:
            spans.append(KernelSpan(name.group(1), text.count("\n", 0, g.start()), text.count("\n", 0, name.start())))
    return spans


def base_name(display_name: str) -> str:
    """The identifier of a demangled kernel name: ``void ns::k<int>(int*)`` -> ``k``."""
    head = display_name.split("(", 1)[0]
    while head.endswith(">"):  # drop template arguments, nested ones included
        depth, i = 0, len(head) - 1
        for i in range(len(head) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(head[i], 0)
            if depth == 0:
                break
        head = head[:i]
    return head.split("::")[-1].split()[-1] if head.split() else head
