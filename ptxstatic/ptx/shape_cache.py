"""A cache of compiled statement shapes on disk, so a new process skips the grammar for shapes it has seen.

The file holds plain JSON: the value regex and, per shape, which values are fixed and the template as
data (AST node names, slots, literals). Loading validates every node against the AST classes; nothing in
the file is executed. The file is keyed by a hash of the grammar, the builder and the AST, and is written
atomically. ``PTXSTATIC_CACHE_DIR`` moves it; ``PTXSTATIC_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from ptxstatic.ptx.grammar import grammar_path

MAX_ENTRIES = 100_000


@cache
def fingerprint() -> str:
    h = hashlib.sha256(grammar_path().read_bytes())
    here = Path(__file__).resolve().parent
    for name in ("builder.py", "ast.py", "parser.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:20]


def cache_file() -> Path | None:
    if os.environ.get("PTXSTATIC_NO_CACHE"):
        return None
    base = os.environ.get("PTXSTATIC_CACHE_DIR")
    root = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ptxstatic"
    return root / f"shapes-{fingerprint()}.json"


def load() -> tuple[str | None, list[list[Any]]]:
    """(value regex, shape entries) from the cache, or (None, []) when there is no usable cache."""
    path = cache_file()
    if path is None or not path.is_file():
        return None, []
    try:
        data = json.loads(path.read_text())
        if data.get("fingerprint") != fingerprint() or not isinstance(data.get("shapes"), list):
            return None, []
        return str(data["value_regex"]), [e for e in data["shapes"] if isinstance(e, list) and len(e) == 6]
    except (OSError, ValueError, KeyError, TypeError):
        return None, []


def save(value_regex: str, entries: list[list[Any]]) -> None:
    """Merge ``entries`` into the cache file (best effort: a cache that cannot be written is skipped)."""
    path = cache_file()
    if path is None or not entries:
        return
    _, old = load()
    seen = {json.dumps(e[:5]) for e in entries}
    merged = [e for e in old if json.dumps(e[:5]) not in seen] + entries
    data = {"fingerprint": fingerprint(), "value_regex": value_regex, "shapes": merged[-MAX_ENTRIES:]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".shapes-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        pass
