"""Where the configuration of a path is, and whether it turns the hook's analysis server off: no more than the
standard library's ``os`` (not even ``re``), since the nvcc hook asks on every compile, before nvcc starts.

In each directory from the path up to the file-system root, ``ptxstatic.toml`` is taken first, then a
``pyproject.toml`` that has a ``[tool.ptxstatic]`` table. ``ptxstatic.config`` reads and checks the file.
"""

from __future__ import annotations

import os

CONFIG_NAMES = ("ptxstatic.toml", "pyproject.toml")
SERVER_KEY = "hook-server"


def config_file(start: str) -> str | None:
    """The configuration file for ``start`` (a file or directory; resolved), walking up to the root."""
    here = os.path.realpath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        own = os.path.join(here, CONFIG_NAMES[0])
        if os.path.isfile(own):
            return own
        project = os.path.join(here, CONFIG_NAMES[1])
        if os.path.isfile(project) and has_tool_table(project):
            return project
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def has_tool_table(path: str) -> bool:
    """Whether a ``pyproject.toml`` has a ``[tool.ptxstatic]`` table (a quick look; unreadable counts as
    yes, so that the error is reported when it is loaded)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return True
    return any(_opens_tool_table(line) for line in text.splitlines())


def _opens_tool_table(line: str) -> bool:
    """Whether a TOML line is ``[tool.ptxstatic...]`` or a ``tool.ptxstatic...`` dotted key (spaces allowed)."""
    rest = line.lstrip()
    rest = rest[1:].lstrip() if rest.startswith("[") else rest
    for part in ("tool", "."):
        if not rest.startswith(part):
            return False
        rest = rest[len(part):].lstrip()
    after = rest[len("ptxstatic"):len("ptxstatic") + 1]
    return rest.startswith("ptxstatic") and not (after.isalnum() or after == "_")


def server_allowed(path: str | None) -> bool:
    """False when the configuration file ``path`` sets ``hook-server = false``. Only a file that mentions the
    key is parsed; one that cannot be read or parsed allows it (``ptxstatic.config`` reports its errors)."""
    if path is None:
        return True
    try:
        with open(path, "rb") as f:
            data = f.read()
        if SERVER_KEY.encode() not in data:
            return True
        import tomllib

        table = tomllib.loads(data.decode("utf-8"))
    except (OSError, ValueError):  # tomllib.TOMLDecodeError and UnicodeDecodeError are ValueErrors
        return True
    if os.path.basename(path) == CONFIG_NAMES[1]:
        table = table.get("tool", {}).get("ptxstatic", {})
    return not (isinstance(table, dict) and table.get(SERVER_KEY) is False)
