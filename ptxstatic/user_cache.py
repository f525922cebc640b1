"""The per-user cache directory: ``$PTXSTATIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptxstatic`` (``~/.cache``).

Every on-disk cache lives under it: the parser's statement shapes and Lark tables (``ptx/``), the ``ptxas -v``
statistics (``toolchain/ptxas.py``) and the PTX the nvcc hook keeps for findings without line information.
``PTXSTATIC_NO_CACHE=1`` turns them all off.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path | None:
    """The cache directory (not created here), or None when caching is off."""
    if os.environ.get("PTXSTATIC_NO_CACHE"):
        return None
    base = os.environ.get("PTXSTATIC_CACHE_DIR")
    return Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ptxstatic"
