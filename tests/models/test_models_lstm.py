"""The LSTM DVFS model: numpy inference equals torch, packed-sequence semantics, interleaved heads,
seeded reproducibility, and learning on a subset of the real data."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ptxstatic.models.inference.lstm import count_inputs, pooling_weights  # noqa: E402
from ptxstatic.models.inference.targets import HEADS  # noqa: E402
from ptxstatic.models.training.lstm import LstmDvfs  # noqa: E402

SMALL = {"embed_size": 6, "hidden_size": 12, "heads": {h: {"hidden": [16, 8], "optimizer": "adam", "lr": 0.01}
                                                        for h in HEADS}}


@pytest.fixture(scope="module")
def data(titanx):
    return titanx


def _subset(data, n: int = 24):
    return data.subset(np.linspace(0, len(data) - 1, n).round().astype(int))


def _torch_raw(model: LstmDvfs, seq) -> np.ndarray:
    """Head outputs of every member computed by the torch networks themselves."""
    ids, counts = model.predictor_.encode(seq)
    clocks = torch.tensor(model.clocks_.normalised(), dtype=torch.float32)
    out = []
    with torch.no_grad():
        for net in model.nets_:
            latent = net.encode(
                torch.from_numpy(ids)[None],
                torch.tensor(count_inputs(counts, model.count_scale), dtype=torch.float32)[None, :, None],
                torch.tensor(pooling_weights(counts), dtype=torch.float32)[None], [len(ids)],
            )
            out.append(torch.stack([net.head(h, latent, clocks)[0] for h in HEADS]).numpy())
    return np.stack(out)


@pytest.mark.parametrize("pooling", ["last", "last+mean"])
def test_numpy_inference_reproduces_torch(data, pooling: str) -> None:
    sub = _subset(data)
    model = LstmDvfs(epochs=2, members=2, pooling=pooling, target="log_residual", **SMALL).fit(
        sub.runs, sub.scaling_surfaces(), sub.clocks)
    for seq in sub.runs[:6]:
        ids, counts = model.predictor_.encode(seq)
        raw = model.predictor_.raw_outputs(model.predictor_.latent(ids, counts))
        assert np.abs(raw - _torch_raw(model, seq)).max() < 1e-5


def test_segments_equal_a_packed_sequence(data) -> None:
    sub = _subset(data, 8)
    model = LstmDvfs(epochs=1, **SMALL).fit(sub.runs, sub.scaling_surfaces(), sub.clocks)
    net = model.nets_[0]
    enc = [model.predictor_.encode(s) for s in sub.runs]
    order = sorted(range(len(enc)), key=lambda i: -len(enc[i][0]))
    lengths = [len(enc[i][0]) for i in order]
    ids = torch.zeros(len(order), lengths[0], len(model.fields), dtype=torch.long)
    counts = torch.zeros(len(order), lengths[0], 1)
    for r, i in enumerate(order):
        ids[r, :lengths[r]] = torch.from_numpy(enc[i][0])
        counts[r, :lengths[r], 0] = torch.tensor(count_inputs(enc[i][1], model.count_scale))
    with torch.no_grad():
        ours = net.encode(ids, counts, torch.zeros(len(order), lengths[0]), lengths)
        x = torch.cat([e(ids[..., f]) for f, e in enumerate(net.embeddings)] + [counts], dim=-1)
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=True)
        _, (h, _) = net.lstm(packed)
    assert len(set(lengths)) > 1
    assert torch.allclose(ours, h[-1], atol=1e-6)


def test_each_batch_trains_one_head_rotating(data) -> None:
    """One epoch of two batches: heads 0 and 1 are trained, head 2 keeps its initial weights."""
    sub = _subset(data, 16)
    params = {**SMALL, "batch_size": 8, "epochs": 1}
    torch.manual_seed(0)
    model = LstmDvfs(**params).fit(sub.runs, sub.scaling_surfaces(), sub.clocks)
    fresh = LstmDvfs(**{**params, "epochs": 0}).fit(sub.runs, sub.scaling_surfaces(), sub.clocks)
    changed = {h: not np.array_equal(model.arrays_[f"head.{h}.0.w"], fresh.arrays_[f"head.{h}.0.w"]) for h in HEADS}
    assert changed == {"time": True, "power": True, "energy": False}
    assert not np.array_equal(model.arrays_["lstm.0.w_hh"], fresh.arrays_["lstm.0.w_hh"])


def test_seeded_training_is_reproducible(data) -> None:
    sub = _subset(data, 12)
    a = LstmDvfs(epochs=2, seed=3, unknown_prob=0.1, **SMALL).fit(sub.runs, sub.scaling_surfaces(), sub.clocks)
    b = LstmDvfs(epochs=2, seed=3, unknown_prob=0.1, **SMALL).fit(sub.runs, sub.scaling_surfaces(), sub.clocks)
    assert all(np.array_equal(a.arrays_[k], b.arrays_[k]) for k in a.arrays_)


def test_learns_to_beat_the_mean_surface_on_training_data(data) -> None:
    sub = _subset(data, 32)
    y = sub.scaling_surfaces()
    model = LstmDvfs(epochs=25, target="log_residual", pooling="last+mean", **SMALL).fit(sub.runs, y, sub.clocks)
    pred = model.predict(sub.runs)
    assert pred.shape == y.shape and np.all(pred[:, :, sub.clocks.reference] == pytest.approx(1.0))
    err = np.abs(pred[:, 0] - y[:, 0]).mean()
    assert err < 0.75 * np.abs(y[:, 0].mean(axis=0) - y[:, 0]).mean()
