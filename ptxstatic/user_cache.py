"""The per-user cache directory: ``$PTXSTATIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/ptxstatic`` (``~/.cache``).

Every on-disk cache lives under it: the parser's statement shapes and Lark tables (``ptx/``), the ``ptxas -v``
statistics (``toolchain/ptxas.py``), ``check``'s and the hook's results (``lint/cache.py``), the PTX the nvcc
hook keeps for findings without line information, and the hook's analysis servers (``hook/client.py``).
``PTXSTATIC_NO_CACHE=1`` turns them all off. Only ``os`` is imported up front: the nvcc hook asks on every
compile.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself costs an import
    from pathlib import Path


def cache_dir() -> str | None:
    """The cache directory as a string (not created here), or None when caching is off."""
    if os.environ.get("PTXSTATIC_NO_CACHE"):
        return None
    base = os.environ.get("PTXSTATIC_CACHE_DIR")
    if base:
        return base
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                        "ptxstatic")


def cache_root() -> Path | None:
    """The cache directory (not created here), or None when caching is off."""
    from pathlib import Path

    found = cache_dir()
    return Path(found) if found is not None else None


def keep_copy(data: bytes, stem: str, folder: str, newest: int) -> Path | None:
    """A lasting copy of ``data`` named by its content (``STEM-HASH.ptx``) in ``folder`` of the cache (of the
    temporary directory when caching is off), keeping the ``newest`` files there; None if it cannot be written.
    Findings in PTX that exists only for a moment (nvcc's temporary files) point at such a copy."""
    import hashlib
    import tempfile
    from pathlib import Path

    root = cache_root() or Path(tempfile.gettempdir()) / f"ptxstatic-{os.getuid()}"
    where = root / folder
    target = where / f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}.ptx"
    try:
        where.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            tmp = where / f".{target.name}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, target)
        kept = sorted(where.glob("*.ptx"), key=lambda p: p.stat().st_mtime)
        for old in kept[:-newest]:
            old.unlink(missing_ok=True)
    except OSError:
        return None
    return target
