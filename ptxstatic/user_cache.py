"""The per-user cache directory: ``$PTXSTATIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptxstatic`` (``~/.cache``).

``PTXSTATIC_NO_CACHE=1`` turns every on-disk cache off.
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
