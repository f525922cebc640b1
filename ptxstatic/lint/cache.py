"""The result cache: one file's findings, kept until anything they were made from changes.

An entry's key covers ptxstatic's version and a stamp of its installed code, the configuration (its file's
content), the file's path, kind and content, and for CUDA the compile (nvcc's path, size and modification
time, its arguments and directory). The entry lists the files the result was made from with their content
hashes: the file itself, every header nvcc read (its ``-MD`` list) and the sources a PTX file's line
information points at (their lines and suppression comments enter the findings). A hit needs every one
unchanged, so an edited header or flag recompiles. Entries are JSON files under
``user_cache.cache_root()/check``; the :data:`~ptxstatic.limits.CHECK_CACHE_ENTRIES` most recently used
are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from ptxstatic import __version__
from ptxstatic.config import Config
from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.limits import CHECK_CACHE_ENTRIES
from ptxstatic.lint.compile_db import CompileSpec
from ptxstatic.toolchain.nvcc import nvcc_path
from ptxstatic.user_cache import cache_root

_FORMAT = 1  # of the entries; part of every key


class ResultCache:
    """Entries in ``directory`` (None: a cache that never hits and stores nothing)."""

    def __init__(self, directory: str | Path | None) -> None:
        self.directory = Path(directory) if directory is not None else None

    @classmethod
    def default(cls) -> ResultCache:
        """The user cache's ``check/`` directory, or a disabled cache when caching is off."""
        root = cache_root()
        return cls(root / "check" if root is not None else None)

    def key(self, *, path: str, kind: str, content: bytes, config: Config, compile: CompileSpec | None,
            extra: str = "") -> str:
        """The entry key of one analysis (``compile``: the compile spec, None for PTX; ``extra``: anything else
        the result depends on)."""
        parts = [str(_FORMAT), __version__, _code_stamp(), os.path.realpath(path), kind,
                 hashlib.sha256(content).hexdigest(), _config_stamp(config), repr(compile), _tool_stamp(compile),
                 extra]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result for ``key`` if every file it was made from is unchanged."""
        if self.directory is None:
            return None
        entry_path = self.directory / f"{key}.json"
        try:
            entry = json.loads(entry_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if any(file_digest(p) != digest for p, digest in entry["dependencies"].items()):
            return None
        with contextlib.suppress(OSError):
            os.utime(entry_path)  # most recently used
        return entry["result"]

    def put(self, key: str, dependencies: list[str], result: dict[str, Any]) -> None:
        """Store ``result`` with the content hashes of the files it was made from (those that cannot be
        read make it uncacheable)."""
        if self.directory is None:
            return
        digests = {p: file_digest(p) for p in dict.fromkeys(dependencies)}
        if None in digests.values():
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(self.directory / f"{key}.json", json.dumps({"dependencies": digests, "result": result}))
        except (OSError, PtxstaticError):  # a cache that cannot be written is no cache, not an error
            return

    def prune(self, keep: int = CHECK_CACHE_ENTRIES) -> None:
        """Remove all but the ``keep`` most recently used entries."""
        if self.directory is None or not self.directory.is_dir():
            return
        entries = list(os.scandir(self.directory))
        if len(entries) <= keep:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for entry in entries[:len(entries) - keep]:
            Path(entry.path).unlink(missing_ok=True)


def file_digest(path: str) -> str | None:
    """SHA-256 of a file's content (memoised by path, size and modification time), None if unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _digest(path, st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=16384)
def _digest(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


@lru_cache(maxsize=1)
def _code_stamp() -> str:
    """The installed code: path, size and modification time of every module and rule page of ptxstatic."""
    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".md", ".lark")):
                st = os.stat(os.path.join(root, name))
                h.update(f"{os.path.relpath(os.path.join(root, name), package)}:{st.st_size}:{st.st_mtime_ns}\n"
                         .encode())
    return h.hexdigest()


def _config_stamp(config: Config) -> str:
    if config.path is None:
        return "default"
    return f"{config.path}:{file_digest(str(config.path))}"


def _tool_stamp(compile: CompileSpec | None) -> str:
    """nvcc's identity for a CUDA compile: its path, size and modification time."""
    if compile is None:
        return ""
    nvcc = compile.nvcc or nvcc_path()
    try:
        st = os.stat(nvcc) if nvcc else None
    except OSError:
        st = None
    return f"{nvcc}:{st.st_size}:{st.st_mtime_ns}" if st else f"{nvcc}:missing"
