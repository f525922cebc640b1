"""Shipped models on disk: ``card.json`` (plain JSON: model card, configuration, array listing with the
sha256 of the array file) and ``weights.npz`` (numeric arrays only, read with ``allow_pickle=False``).

Loading never unpickles and never imports torch or scikit-learn. A modified, truncated or inconsistent
file is a :class:`PtxstaticError` naming the file, checked before any array is used; so are a card or array
file that is a symbolic link, and a model whose card lists an array of more than ``MODEL_ARRAY_BYTES`` or
arrays of more than ``MODEL_TOTAL_BYTES`` in all (read from the card before the array file is opened), or
whose array headers do not declare the listed shapes (read before any data is decompressed), so that a
tampered model cannot read elsewhere or exhaust memory.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import MODEL_ARRAY_BYTES, MODEL_CARD_BYTES, MODEL_TOTAL_BYTES

FORMAT = "ptxstatic-model"
FORMAT_VERSION = 1
CARD = "card.json"
WEIGHTS = "weights.npz"
_NUMERIC = ("b", "i", "u", "f")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_model(out_dir: str | Path, kind: str, arrays: dict[str, np.ndarray], config: dict, card: dict) -> Path:
    """Write a model directory; ``card`` holds the model card fields (data, split, metrics, versions...)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, a in arrays.items():
        if np.asarray(a).dtype.kind not in _NUMERIC:
            raise ValueError(f"array {name!r} is not numeric")
    weights = out / WEIGHTS
    np.savez_compressed(weights, **{k: np.asarray(v) for k, v in arrays.items()})
    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind, **card,
        "arrays": {
            "file": WEIGHTS, "sha256": sha256_file(weights),
            "listing": {k: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype)} for k, v in arrays.items()},
        },
        "config": config,
    }
    (out / CARD).write_text(json.dumps(doc, indent=1) + "\n")
    return out


def read_card(path: str | Path) -> tuple[Path, dict]:
    """The model directory and its parsed, format-checked card (``path``: the directory or its card)."""
    p = Path(path)
    directory = p.parent if p.name == CARD else p
    card_path = directory / CARD
    _refuse_link(card_path)
    try:
        if os.path.getsize(card_path) > MODEL_CARD_BYTES:
            raise PtxstaticError(f"{card_path}: model card is implausibly large")
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PtxstaticError(f"{directory}: not a ptxstatic model (no {CARD})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PtxstaticError(f"{card_path}: unreadable model card ({exc})") from None
    except RecursionError:
        raise PtxstaticError(f"{card_path}: unreadable model card (nested too deeply)") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise PtxstaticError(f"{card_path}: not a ptxstatic model card")
    if card.get("format_version") != FORMAT_VERSION:
        raise PtxstaticError(
            f"{card_path}: model format version {card.get('format_version')!r}, this ptxstatic reads {FORMAT_VERSION}"
        )
    for key, kind in (("kind", str), ("arrays", dict), ("config", dict)):
        if not isinstance(card.get(key), kind):
            raise PtxstaticError(f"{card_path}: model card lacks a valid {key!r}")
    return directory, card


def load_arrays(directory: Path, card: dict) -> dict[str, np.ndarray]:
    """The model's arrays, after checking the listing in the card (sizes and total), the file's sha256 and
    every array's header against the listing."""
    spec = card["arrays"]
    name = spec.get("file")
    if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
        raise PtxstaticError(f"{directory / CARD}: array file must be a plain file name in the model directory")
    listed = _listed_arrays(directory / CARD, spec.get("listing"))  # from the card alone, first
    path = directory / name
    _refuse_link(path)
    if not path.is_file():
        raise PtxstaticError(f"{path}: model array file is missing")
    if sha256_file(path) != spec.get("sha256"):
        raise PtxstaticError(f"{path}: sha256 does not match the model card: the file was modified or truncated")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if {m.filename for m in npz.zip.infolist()} != {f"{k}.npy" for k in listed}:
                raise PtxstaticError(f"{path}: arrays do not match the model card's listing")
            for member in npz.zip.infolist():  # every header checked before any data is decompressed
                header = _array_header(path, npz.zip, member)
                if header != listed[member.filename.removesuffix(".npy")]:
                    raise PtxstaticError(f"{path}: array {member.filename.removesuffix('.npy')!r} does not match "
                                         "the model card's listing")
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise PtxstaticError(f"{path}: unreadable model arrays ({exc})") from None
    for k, a in arrays.items():
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise PtxstaticError(f"{path}: array {k!r} holds non-finite values")
    return arrays


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise PtxstaticError(f"{path}: a model file must not be a symbolic link")


def _listed_arrays(card_path: Path, listing: object) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The card's array listing as name -> (shape, dtype), refused when an entry is malformed or not numeric,
    an array would exceed ``MODEL_ARRAY_BYTES`` or all of them ``MODEL_TOTAL_BYTES``: read from the card
    alone, before the array file is opened."""
    if not isinstance(listing, dict):
        raise PtxstaticError(f"{card_path}: model card lacks the array listing")
    out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    total = 0
    for name, want in listing.items():
        shape = want.get("shape") if isinstance(want, dict) else None
        try:
            dtype = np.dtype(want["dtype"])
        except (TypeError, KeyError, ValueError):
            dtype = None
        if (not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape) or dtype is None
                or dtype.kind not in _NUMERIC):
            raise PtxstaticError(f"{card_path}: array {name!r} has no valid numeric shape and dtype in the listing")
        size = math.prod(shape) * dtype.itemsize
        if size > MODEL_ARRAY_BYTES:
            raise PtxstaticError(f"{card_path}: array {name!r} exceeds the limit of a model array "
                                 f"({MODEL_ARRAY_BYTES:,} bytes)")
        total += size
        out[name] = (tuple(shape), dtype)
    if total > MODEL_TOTAL_BYTES:
        raise PtxstaticError(f"{card_path}: the model's arrays take {total:,} bytes, over the limit of a model "
                             f"({MODEL_TOTAL_BYTES:,} bytes)")
    return out


def _array_header(path: Path, archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype]:
    """A member's (shape, dtype) from its .npy header; an array whose stored size or declared shape exceeds
    ``MODEL_ARRAY_BYTES`` is refused from it (object arrays are left to ``np.load``, which refuses them
    without unpickling)."""
    too_big = f"{path}: array {member.filename!r} exceeds the limit of a model array ({MODEL_ARRAY_BYTES:,} bytes)"
    if member.file_size > MODEL_ARRAY_BYTES + 4096:
        raise PtxstaticError(too_big)
    with archive.open(member) as f:
        version = np.lib.format.read_magic(f)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in read_header:
            raise PtxstaticError(f"{path}: array {member.filename!r} has an unknown .npy format {version}")
        shape, _, dtype = read_header[version](f)
    if not dtype.hasobject and int(np.prod(shape, dtype=object)) * dtype.itemsize > MODEL_ARRAY_BYTES:
        raise PtxstaticError(too_big)
    return tuple(shape), dtype
