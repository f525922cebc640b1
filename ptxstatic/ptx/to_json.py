"""The AST as JSON-ready data: every node a dict with its ``node`` type, positions and decoded opcode."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ptxstatic.limits import MAX_BLOCK_NESTING
from ptxstatic.ptx.ast import Instruction, Module


def node(obj: Any) -> Any:
    if isinstance(obj, Instruction):
        out = {"node": "Instruction", **{f.name: node(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
        out["info"] = dataclasses.asdict(obj.info)
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"node": type(obj).__name__, **{f.name: node(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if isinstance(obj, (list, tuple)):
        return [node(x) for x in obj]
    return obj


def module_json(module: Module) -> dict:
    return {
        "file": module.filename,
        "version": module.version,
        "target": list(module.target),
        "address_size": module.address_size,
        "items": node(module.items),
        "errors": [str(e) for e in module.errors],
    }


@contextmanager
def room_for_nesting() -> Iterator[None]:
    """Python's recursion limit raised while the JSON of a module is made and written: :func:`node` and json's
    encoder recurse a few levels per ``{ }`` block, and blocks nest up to MAX_BLOCK_NESTING deep."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 8 * MAX_BLOCK_NESTING + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
