"""The one shape of every command's ``--format json``: an object with the ``schema`` version, the ``command``,
the ``tool``, the command's own fields, a ``kernels`` list and an ``errors`` list. Each command's shape is a
JSON Schema shipped in the package (``ptxstatic/report/schemas/COMMAND.schema.json``)."""

from __future__ import annotations

import json
from typing import Any

from ptxstatic.errors import PtxstaticError, SourceError

#: the version of the commands' JSON shapes (``schema`` in every document)
SCHEMA_VERSION = 1


def error_json(err: PtxstaticError | str, file: str = "") -> dict[str, Any]:
    """An error as ``{file, line, column, message, detail}`` (line and column 0 where it has none; ``detail``:
    the offending line and a caret, or further lines of the message)."""
    if isinstance(err, SourceError):
        detail = err.render().partition("\n")[2]
        return {"file": err.file, "line": max(0, err.line), "column": max(0, err.column), "message": err.message,
                "detail": detail}
    message, _, detail = str(err).partition("\n")
    return {"file": file, "line": 0, "column": 0, "message": message, "detail": detail}


def json_document(command: str, kernels: list[dict[str, Any]], errors: list[dict[str, Any]],
                  **fields: Any) -> str:
    """The JSON text of ``command``'s output (``errors`` as :func:`error_json` gives them)."""
    from ptxstatic import __version__

    doc = {"schema": SCHEMA_VERSION, "command": command, "tool": {"name": "ptxstatic", "version": __version__},
           **fields, "kernels": kernels, "errors": errors}
    return json.dumps(doc, indent=1)


def error_document(command: str, err: PtxstaticError) -> str | None:
    """The JSON text of ``command``'s output when ``err`` ended it before it had anything to show: no
    kernels, the error in ``errors``; None for a command whose shape requires more than that."""
    from ptxstatic.report.schemas import json_schema

    if set(json_schema(command).get("required", ())) - {"schema", "command", "tool", "kernels", "errors"}:
        return None
    return json_document(command, [], [error_json(err)])


def kernel_entry(file: str, kernel: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One item of ``kernels``: its ``file``, ``kernel`` (PTX name) and ``display_name`` (demangled), then
    ``fields``."""
    from ptxstatic.ptx.kernels import demangle

    return {"file": file, "kernel": kernel, "display_name": demangle([kernel])[kernel],
            **{k: v for k, v in fields.items() if k not in ("file", "kernel")}}
