"""Model files: round trip, and tampered, truncated or hostile files give a clear error, never code execution."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.inference.artifacts import CARD, WEIGHTS, save_model
from ptxstatic.models.inference.loading import load_model

CLOCKS = ClockTable((1000, 2000), (500, 500))


def _model(tmp_path: Path) -> Path:
    surface = np.array([[2.0, 1.0], [0.5, 1.0], [1.0, 1.0]])
    return save_model(tmp_path / "m", "mean_surface", {"surface": surface}, {"clocks": CLOCKS.to_dict()},
                      {"name": "mean_surface", "gpu": "toy"})


def test_round_trip(tmp_path: Path) -> None:
    m = load_model(_model(tmp_path))
    assert m.kind == "mean_surface" and m.card["gpu"] == "toy"
    assert m.predictor.predict([]).tolist() == [[2.0, 1.0], [0.5, 1.0], [1.0, 1.0]]
    assert load_model(m.directory / CARD).kind == "mean_surface"


def test_tampered_and_truncated_weights(tmp_path: Path) -> None:
    d = _model(tmp_path)
    weights = d / WEIGHTS
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(PtxstaticError, match="modified or truncated"):
        load_model(d)
    weights.write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(PtxstaticError, match="modified or truncated"):
        load_model(d)


class Boom:
    """Unpickling this creates the file ``target``."""

    target = Path()

    def __reduce__(self):
        return (Path.touch, (self.target,))


def _rewrite_card(d: Path, **changes: object) -> None:
    card = json.loads((d / CARD).read_text())
    card.update(changes)
    (d / CARD).write_text(json.dumps(card))


def test_pickled_arrays_are_never_loaded(tmp_path: Path) -> None:
    """Even with a card whose checksum matches, an object array is refused instead of unpickled."""
    from ptxstatic.models.inference.artifacts import sha256_file

    d = _model(tmp_path)
    weights = d / WEIGHTS
    Boom.target = tmp_path / "executed"
    with zipfile.ZipFile(weights, "w") as z, z.open("surface.npy", "w") as f:
        np.lib.format.write_array(f, np.array([Boom()], dtype=object), allow_pickle=True)
    card = json.loads((d / CARD).read_text())
    card["arrays"]["sha256"] = sha256_file(weights)
    (d / CARD).write_text(json.dumps(card))
    with pytest.raises(PtxstaticError, match="array 'surface' does not match the model card's listing"):
        load_model(d)  # its header (an object array) is refused before np.load reads the data
    assert not Boom.target.exists()
    np.load(weights, allow_pickle=True)["surface"]  # what a pickle-trusting loader would do
    assert Boom.target.exists()


def test_hostile_or_broken_cards(tmp_path: Path) -> None:
    d = _model(tmp_path)
    _rewrite_card(d, arrays={"file": "../../etc/passwd", "sha256": "0", "listing": {}})
    with pytest.raises(PtxstaticError, match="plain file name"):
        load_model(d)
    _rewrite_card(_model(tmp_path / "b"), kind="shell")
    with pytest.raises(PtxstaticError, match="unknown model kind"):
        load_model(tmp_path / "b" / "m")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / CARD).write_text("{ not json")
    with pytest.raises(PtxstaticError, match="unreadable model card"):
        load_model(tmp_path / "c")
    with pytest.raises(PtxstaticError, match=r"no card\.json"):
        load_model(tmp_path / "nowhere")
    d = _model(tmp_path / "e")
    card = json.loads((d / CARD).read_text())
    card["arrays"]["listing"]["surface"]["shape"] = [3, 3]
    (d / CARD).write_text(json.dumps(card))
    with pytest.raises(PtxstaticError, match="does not match the model card's listing"):
        load_model(d)


def _with_checksum(d: Path) -> None:
    """Make the card's sha256 match the array file again, as a tamperer who edits both would."""
    from ptxstatic.models.inference.artifacts import sha256_file

    card = json.loads((d / CARD).read_text())
    card["arrays"]["sha256"] = sha256_file(d / WEIGHTS)
    (d / CARD).write_text(json.dumps(card))


def test_an_array_header_declaring_a_huge_shape_is_refused_before_allocating(tmp_path: Path) -> None:
    """A 200-byte member whose .npy header declares 2^40 float64 values (8 TiB) is refused from its header."""
    from ptxstatic.limits import MODEL_ARRAY_BYTES

    d = _model(tmp_path)
    header = {"descr": "<f8", "fortran_order": False, "shape": (1 << 40,)}
    with zipfile.ZipFile(d / WEIGHTS, "w") as z, z.open("surface.npy", "w") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.write(b"\0" * 64)
    _with_checksum(d)
    with pytest.raises(PtxstaticError, match=rf"exceeds the limit of a model array \({MODEL_ARRAY_BYTES:,} bytes\)"):
        load_model(d)


def test_a_large_stored_array_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An array over the cap (lowered here to 1 KiB) is refused; the same model loads under the real cap."""
    import ptxstatic.models.inference.artifacts as artifacts

    d = save_model(tmp_path / "m", "mean_surface", {"surface": np.ones((3, 200))}, {"clocks": CLOCKS.to_dict()},
                   {"name": "mean_surface", "gpu": "toy"})
    from ptxstatic.models.inference.artifacts import load_arrays, read_card

    assert load_arrays(*read_card(d))["surface"].shape == (3, 200)
    monkeypatch.setattr(artifacts, "MODEL_ARRAY_BYTES", 1024)
    with pytest.raises(PtxstaticError, match=r"exceeds the limit of a model array \(1,024 bytes\)"):
        load_arrays(*read_card(d))


def test_a_model_listing_more_than_the_total_is_refused_from_its_card(tmp_path: Path) -> None:
    """Eleven arrays of 240 MB each (within the per-array cap, 2.6 GB together: what an 11 MB file of zeros
    decompresses to) are refused from the card's listing, before the array file is opened: here it is not
    even an archive, and its checksum is wrong."""
    from ptxstatic.limits import MODEL_TOTAL_BYTES

    d = _model(tmp_path)
    listing = {f"a{i}": {"shape": [30_000_000], "dtype": "float64"} for i in range(11)}
    _rewrite_card(d, arrays={"file": WEIGHTS, "sha256": "0" * 64, "listing": listing})
    (d / WEIGHTS).write_bytes(b"not an archive")
    with pytest.raises(PtxstaticError, match=rf"arrays take 2,640,000,000 bytes, over the limit of a model "
                                             rf"\({MODEL_TOTAL_BYTES:,} bytes\)"):
        load_model(d)


@pytest.mark.parametrize("entry", [{"shape": [-1], "dtype": "float64"}, {"shape": [3, 200], "dtype": "object"},
                                   {"shape": "3x200", "dtype": "float64"}, {"shape": [3, 200]}, "float64"])
def test_a_malformed_listing_entry_is_refused(tmp_path: Path, entry: object) -> None:
    d = _model(tmp_path)
    card = json.loads((d / CARD).read_text())
    card["arrays"]["listing"]["surface"] = entry
    (d / CARD).write_text(json.dumps(card))
    with pytest.raises(PtxstaticError, match="array 'surface' has no valid numeric shape and dtype in the listing"):
        load_model(d)


def test_an_archive_member_the_card_does_not_list_is_refused(tmp_path: Path) -> None:
    d = _model(tmp_path)
    with zipfile.ZipFile(d / WEIGHTS, "a") as z, z.open("extra.npy", "w") as f:
        np.lib.format.write_array(f, np.zeros(4))
    _with_checksum(d)
    with pytest.raises(PtxstaticError, match="arrays do not match the model card's listing"):
        load_model(d)


def test_symbolic_links_in_a_model_directory_are_refused(tmp_path: Path) -> None:
    d = _model(tmp_path)
    outside = tmp_path / "elsewhere.npz"
    (d / WEIGHTS).rename(outside)
    (d / WEIGHTS).symlink_to(outside)
    with pytest.raises(PtxstaticError, match="must not be a symbolic link"):
        load_model(d)
    e = _model(tmp_path / "e")
    (e / CARD).rename(tmp_path / "card.json")
    (e / CARD).symlink_to(tmp_path / "card.json")
    with pytest.raises(PtxstaticError, match="must not be a symbolic link"):
        load_model(e)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
CARD_KEYS = ("format", "format_version", "kind", "arrays", "config", "gpu", "name", "training_data", "evaluation")


@settings(max_examples=int(os.environ.get("PTXSTATIC_FUZZ_EXAMPLES", "60")) * 3, deadline=None,
          derandomize=not os.environ.get("PTXSTATIC_FUZZ_RANDOM"), database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(CARD_KEYS), JSON, max_size=len(CARD_KEYS)), st.integers(0, 3))
@example({}, 3)
def test_any_card_loads_or_is_refused_in_one_line(tmp_path: Path, changes: dict, depth_kind: int) -> None:
    """A card whose fields hold any JSON value, or nested 100,000 deep (a ``RecursionError`` before): a model
    or a one-line :class:`PtxstaticError`, never another exception."""
    d = _model(tmp_path / f"h{abs(hash(json.dumps(changes, default=str))) % 10 ** 9}{depth_kind}")
    card = json.loads((d / CARD).read_text())
    card.update(changes)
    text = json.dumps(card) if depth_kind < 3 else '{"a":' * 100_000 + "1" + "}" * 100_000
    (d / CARD).write_text(text)
    try:
        load_model(d)
    except PtxstaticError as exc:
        assert str(exc).strip() and "\n" not in str(exc)
