"""JSON Schemas of the commands' ``--format json`` output, shipped in the package (``NAME.schema.json``)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of ``ptxstatic COMMAND --format json``."""
    return json.loads((resources.files(__name__) / f"{command}.schema.json").read_text(encoding="utf-8"))
