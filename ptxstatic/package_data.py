"""The one way to find the files ptxstatic ships beside its code.

Two kinds, one rule. The folders the product names at the top of the repository (``grammars/``,
``instrumentation/``, ``trained/``) are built into the wheel under ``ptxstatic/data/<folder>``; the pages,
templates and schemas that live in the package (``rules/docs``, ``report/templates``, ``report/schemas``)
are in the wheel where they are. :func:`data_path` finds either through :mod:`importlib.resources` on the
installed package and, in a checkout (an editable install or ``PYTHONPATH``), falls back to the
repository's top-level folder. ``$PTXSTATIC_MODELS`` replaces ``trained/`` for a user's own models.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

#: the repository's top-level data folders, shipped in the wheel under ``ptxstatic/data/``
TOP_LEVEL = ("grammars", "instrumentation", "trained")
#: data inside the package, found the same way
IN_PACKAGE = ("rules/docs", "report/templates", "report/schemas")
#: replaces the shipped ``trained/`` folder
MODELS_ENV = "PTXSTATIC_MODELS"


def data_path(folder: str, *parts: str) -> Path:
    """The path of ``parts`` under one of the shipped folders (:data:`TOP_LEVEL` or :data:`IN_PACKAGE`)."""
    if folder == "trained" and os.environ.get(MODELS_ENV):
        return Path(os.environ[MODELS_ENV]).joinpath(*parts)
    package = Path(str(resources.files("ptxstatic")))
    if folder in IN_PACKAGE:
        return package.joinpath(folder, *parts)
    if folder not in TOP_LEVEL:
        raise ValueError(f"not a shipped folder: {folder!r}")
    installed = package / "data" / folder
    base = installed if installed.is_dir() else package.parent / folder
    return base.joinpath(*parts)
