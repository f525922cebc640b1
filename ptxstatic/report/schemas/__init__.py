"""JSON Schemas of the commands' ``--format json`` output, shipped in the package (``NAME.schema.json``)."""

from __future__ import annotations

import json
from typing import Any

from ptxstatic.package_data import data_path


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of ``ptxstatic COMMAND --format json``."""
    return json.loads(data_path("report/schemas", f"{command}.schema.json").read_text(encoding="utf-8"))
