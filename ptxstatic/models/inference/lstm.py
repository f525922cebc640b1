"""Inference of the LSTM DVFS model with numpy only, from exported arrays (members stacked on axis 0)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.analysis.sequence import SeqItem
from ptxstatic.dvfs import ClockTable
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.inference.encoding import Vocabulary, to_steps
from ptxstatic.models.inference.targets import HEADS, TargetTransform

POOLINGS = ("last", "last+mean")


def count_inputs(counts: np.ndarray, scale: float) -> np.ndarray:
    """The numeric input of each step: scaled log(1 + repeat count)."""
    return np.log1p(counts) * scale


def pooling_weights(counts: np.ndarray) -> np.ndarray:
    """Each step's share of the executed instructions."""
    return counts / counts.sum()


class LstmPredictor:
    """Time, power and energy scaling factors of a sequence at every clock configuration of one GPU.

    ``config``: fields, count_scale, vocabulary, num_layers, head_layers, transform, clocks (as written by
    the trainer). ``arrays``: ``emb.<field>`` (M, V, d); ``lstm.<l>.w_ih`` (M, 4H, D), ``.w_hh`` (M, 4H, H),
    ``.b`` (M, 4H); ``head.<name>.<k>.w`` (M, out, in), ``.b`` (M, out).
    """

    kind = "lstm"

    def __init__(self, arrays: dict[str, np.ndarray], config: dict) -> None:
        try:
            self.vocab = Vocabulary.from_dict(config["vocabulary"])
            self.count_scale = float(config["count_scale"])
            self.clocks = ClockTable.from_dict(config["clocks"])
            self.transform = TargetTransform.from_dict(config["transform"])
            n_layers, head_layers = int(config["num_layers"]), int(config["head_layers"])
            self.pooling = str(config["pooling"])
            f64 = {k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()}
            self.emb = [f64[f"emb.{f}"] for f in self.vocab.fields]
            self.layers = [
                (f64[f"lstm.{i}.w_ih"], f64[f"lstm.{i}.w_hh"].transpose(0, 2, 1), f64[f"lstm.{i}.b"])
                for i in range(n_layers)
            ]
            self.heads = [
                [(f64[f"head.{h}.{k}.w"].transpose(0, 2, 1), f64[f"head.{h}.{k}.b"]) for k in range(head_layers)]
                for h in HEADS
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"LSTM model is incomplete or malformed: {exc}") from None
        if self.pooling not in POOLINGS:
            raise PtxstaticError(f"LSTM model: unknown pooling {self.pooling!r}")
        self._check_shapes()
        self._clock_inputs = self.clocks.normalised()

    def _check_shapes(self) -> None:
        members = self.emb[0].shape[0]
        sizes = self.vocab.sizes()
        width = sum(e.shape[2] for e in self.emb) + 1
        for e, n in zip(self.emb, sizes):
            if e.ndim != 3 or e.shape[:2] != (members, n):
                raise PtxstaticError(f"LSTM model: an embedding has shape {e.shape}, expected ({members}, {n}, d)")
        for w_ih, w_hh_t, b in self.layers:
            hidden = w_hh_t.shape[1]
            if w_ih.shape != (members, 4 * hidden, width) or w_hh_t.shape[2] != 4 * hidden or b.shape != (
                members, 4 * hidden,
            ):
                raise PtxstaticError("LSTM model: recurrent weights have inconsistent shapes")
            width = hidden
        for head in self.heads:
            fan_in = width * (2 if self.pooling == "last+mean" else 1) + 2
            for w_t, b in head:
                if w_t.shape[:2] != (members, fan_in) or b.shape != (members, w_t.shape[2]):
                    raise PtxstaticError("LSTM model: head weights have inconsistent shapes")
                fan_in = w_t.shape[2]
            if fan_in != 1:
                raise PtxstaticError("LSTM model: a head does not end in one output")

    @property
    def members(self) -> int:
        return self.emb[0].shape[0]

    def latent(self, ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(members, latent) encoding of one sequence: the top layer's final hidden state, then for
        ``last+mean`` pooling its outputs averaged with each step's share of executed instructions."""
        m, steps = self.members, ids.shape[0]
        x = np.concatenate(
            [e[:, ids[:, i]] for i, e in enumerate(self.emb)]
            + [np.broadcast_to(count_inputs(counts, self.count_scale)[:, None], (m, steps, 1))], axis=-1,
        )
        for w_ih, w_hh_t, b in self.layers:
            hidden = w_hh_t.shape[1]
            # gates i, f, g, o from one tanh: sigmoid(z) = 0.5 tanh(z / 2) + 0.5, so the i, f, o
            # pre-activations are halved and the tanh mapped back by one multiply-add
            half = np.full(4 * hidden, 0.5)
            half[2 * hidden:3 * hidden] = 1.0
            offset = np.where(half == 0.5, 0.5, 0.0)
            pre = (np.matmul(x, w_ih.transpose(0, 2, 1)) + b[:, None, :]) * half
            w_rec = w_hh_t * half
            h = np.zeros((m, 1, hidden))
            c = np.zeros((m, 1, hidden))
            out = np.empty((m, steps, hidden))
            for t in range(steps):
                a = np.tanh(pre[:, t:t + 1] + np.matmul(h, w_rec)) * half + offset
                c = a[..., hidden:2 * hidden] * c + a[..., :hidden] * a[..., 2 * hidden:3 * hidden]
                h = a[..., 3 * hidden:] * np.tanh(c)
                out[:, t:t + 1] = h
            x = out
        if self.pooling == "last+mean":
            return np.concatenate([x[:, -1], np.einsum("t,mth->mh", pooling_weights(counts), x)], axis=-1)
        return x[:, -1]

    def raw_outputs(self, latent: np.ndarray) -> np.ndarray:
        """(members, 3, configs) head outputs before the target transform is undone."""
        m = latent.shape[0]
        n_cfg = len(self._clock_inputs)
        inputs = np.concatenate(
            [np.broadcast_to(latent[:, None, :], (m, n_cfg, latent.shape[1])),
             np.broadcast_to(self._clock_inputs, (m, n_cfg, 2))], axis=-1,
        )
        outs = []
        for head in self.heads:
            z = inputs
            for k, (w_t, b) in enumerate(head):
                z = np.matmul(z, w_t) + b[:, None, :]
                if k < len(head) - 1:
                    z = np.maximum(z, 0.0)
            outs.append(z[..., 0])
        return np.stack(outs, axis=1)

    def encode(self, seq: Sequence[SeqItem] | Sequence[tuple[SeqItem, int]]) -> tuple[np.ndarray, np.ndarray]:
        steps = to_steps(seq, self.vocab.fields)
        if not steps:
            raise PtxstaticError("cannot predict for an empty instruction sequence")
        return self.vocab.encode(steps)

    def unknown(self, seq: Sequence[SeqItem] | Sequence[tuple[SeqItem, int]]) -> dict[str, list[str]]:
        """Field values of the sequence that training never saw (they are encoded as unknown)."""
        return self.vocab.unknown(to_steps(seq, self.vocab.fields))

    def predict_encoded(self, ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(3, configs) scaling factors for an encoded sequence (members averaged before the inverse)."""
        return self.transform.inverse(self.raw_outputs(self.latent(ids, counts)).mean(axis=0))

    def predict(self, seq: Sequence[SeqItem] | Sequence[tuple[SeqItem, int]]) -> np.ndarray:
        """(3, configs) time, power and energy scaling factors."""
        return self.predict_encoded(*self.encode(seq))
