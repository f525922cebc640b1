"""A cache of compiled statement shapes on disk, so a new process skips the grammar for shapes it has seen.

The file is plain JSON text, one line per entry after a header line (fingerprint, value regex): the shape's
key ``[rule, text around the values, value kinds]`` as JSON, a tab, then ``[fixed value positions, their
values, template as data]`` as JSON. Loading reads only the keys; an entry's template is decoded and
validated against the AST classes when a statement of its shape first appears, so a large cache costs
little to open. Nothing in the file is executed. The file is keyed by a hash of the grammar, the builder and
the AST, written atomically, and holds at most ``limits.SHAPE_CACHE_DISK_ENTRIES`` entries (the most recently added);
files of other fingerprints are removed when it is written. ``PTXSTATIC_CACHE_DIR`` moves it;
``PTXSTATIC_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from ptxstatic.limits import SHAPE_CACHE_DISK_ENTRIES
from ptxstatic.ptx.grammar import grammar_path
from ptxstatic.user_cache import cache_root


@cache
def fingerprint() -> str:
    h = hashlib.sha256(grammar_path().read_bytes())
    here = Path(__file__).resolve().parent
    for name in ("builder.py", "templates.py", "ast.py", "parser.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:20]


def cache_file() -> Path | None:
    root = cache_root()
    return None if root is None else root / f"shapes-{fingerprint()}.jsonl"


def shape_key(rule: str, text_shape: str, sig: str) -> str:
    """The text that stands for a shape in the file (and in the dict ``load`` returns)."""
    return json.dumps([rule, text_shape, sig], separators=(",", ":"))


def load() -> tuple[str | None, dict[str, list[str]]]:
    """(value regex, {shape key: [undecoded entry, ...]}) from the cache, or (None, {}) without a usable one.
    Decode an entry with :func:`decode_entry`."""
    path = cache_file()
    if path is None or not path.is_file():
        return None, {}
    try:
        head, _, rest = path.read_text().partition("\n")
        header = json.loads(head)
        if header.get("fingerprint") != fingerprint():
            return None, {}
        regex = str(header["value_regex"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, {}
    entries: dict[str, list[str]] = {}
    for line in rest.splitlines():
        key, tab, entry = line.partition("\t")
        if tab:
            entries.setdefault(key, []).append(entry)
    return regex, entries


def decode_entry(entry: str) -> tuple[tuple[int, ...], tuple[str, ...], Any]:
    """(fixed positions, fixed values, template data) of one entry; ValueError if it is malformed."""
    try:
        fixed, values, data = json.loads(entry)
        return tuple(int(i) for i in fixed), tuple(str(v) for v in values), data
    except (TypeError, ValueError) as exc:
        raise ValueError(f"malformed shape cache entry: {exc}") from None


def save(value_regex: str, entries: list[list[Any]]) -> None:
    """Merge ``entries`` (``[rule, text_shape, sig, fixed, fixed_values, template data]``) into the cache file
    (best effort: a cache that cannot be written is skipped)."""
    path = cache_file()
    if path is None or not entries:
        return
    lines = {}
    old_regex, old = load()
    if old_regex == value_regex:
        lines = {f"{key}\t{e}": None for key, es in old.items() for e in es}
    for rule, text_shape, sig, fixed, fixed_values, data in entries:
        line = f"{shape_key(rule, text_shape, sig)}\t{json.dumps([fixed, fixed_values, data], separators=(',', ':'))}"
        lines.pop(line, None)
        lines[line] = None  # newest last
    kept = list(lines)[-SHAPE_CACHE_DISK_ENTRIES:]
    header = json.dumps({"fingerprint": fingerprint(), "value_regex": value_regex})
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".shapes-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join([header, *kept]) + "\n")
        os.replace(tmp, path)
        _remove_stale(path)
    except OSError:
        pass


def _remove_stale(current: Path) -> None:
    """Cache files of other fingerprints, and temporary files abandoned more than an hour ago."""
    import time

    now = time.time()
    for p in current.parent.iterdir():
        stale_tmp = p.name.startswith(".shapes-") and p.suffix == ".tmp" and now - p.stat().st_mtime > 3600
        if (p.name.startswith("shapes-") and p != current) or stale_tmp:
            p.unlink(missing_ok=True)
