"""Training the LSTM DVFS model with torch (training only: inference runs on exported arrays in numpy).

Architecture (gpuPTXModel, with its defects fixed): each per-instruction field has its own embedding and
the embeddings are concatenated with log(1 + repeat count); a stacked LSTM encodes the sequence and its
final hidden state (at each sequence's own last step: no padding is ever run through) is joined with the
normalised (f_mem, f_core) of a configuration and fed to three MLP heads (time, power, energy).
Training is interleaved: every batch trains the shared encoder and one head, the head rotating per batch
and starting at a different head each epoch. Default hyper-parameters are the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator
from torch import nn
from torch.nn import functional as F

from ptxstatic.analysis.sequence import Run
from ptxstatic.dvfs import ClockTable
from ptxstatic.models.inference.encoding import DEFAULT_FIELDS, Vocabulary, to_steps
from ptxstatic.models.inference.lstm import LstmPredictor, count_inputs, pooling_weights
from ptxstatic.models.inference.targets import HEADS, TargetTransform

#: the paper's heads: hidden layer sizes, optimiser, learning rate (model_configs/*/config.txt)
PAPER_HEADS: dict[str, dict] = {
    "time": {"hidden": [50, 70], "optimizer": "sgd", "lr": 0.001},
    "power": {"hidden": [50, 70], "optimizer": "sgd", "lr": 0.005},
    "energy": {"hidden": [100, 70], "optimizer": "adam", "lr": 0.01},
}


class _Net(nn.Module):
    def __init__(self, sizes: list[int], embed_size: int, hidden: int, layers: int, dropout: float,
                 heads: dict[str, dict], pooling: str) -> None:
        super().__init__()
        self.pooling = pooling
        self.embeddings = nn.ModuleList(nn.Embedding(n, min(embed_size, n)) for n in sizes)
        width = sum(min(embed_size, n) for n in sizes) + 1
        self.lstm = nn.LSTM(width, hidden, layers, batch_first=True, dropout=dropout if layers > 1 else 0.0)
        self.heads = nn.ModuleDict()
        for name in HEADS:
            mods: list[nn.Module] = []
            fan_in = hidden * (2 if pooling == "last+mean" else 1) + 2
            for size in heads[name]["hidden"]:
                mods += [nn.Linear(fan_in, size), nn.ReLU()]
                fan_in = size
            mods.append(nn.Linear(fan_in, 1))
            self.heads[name] = nn.Sequential(*mods)

    def encode(
        self, ids: torch.Tensor, counts: torch.Tensor, weights: torch.Tensor, lengths: list[int],
    ) -> torch.Tensor:
        """Latent vectors of a batch whose rows are sorted by length, descending: the top layer's final
        hidden state at each row's own last step, then (``pooling == "last+mean"``) the mean of the top
        layer's outputs weighted by ``weights`` (each step's share of executed instructions; 0 on padding).

        Equivalent to running a PackedSequence (tested), but the recurrence runs over one segment per
        distinct length with the finished rows dropped, since torch's CPU backward through a
        PackedSequence of mixed lengths is quadratic in the length.
        """
        x = torch.cat([emb(ids[..., i]) for i, emb in enumerate(self.embeddings)] + [counts], dim=-1)
        last: list[torch.Tensor | None] = [None] * len(lengths)
        pooled = x.new_zeros(len(lengths), self.lstm.hidden_size)
        state = None
        start = 0
        for end in sorted(set(lengths)):
            active = sum(1 for n in lengths if n >= end)
            if state is not None:
                state = (state[0][:, :active].contiguous(), state[1][:, :active].contiguous())
            out, state = self.lstm(x[:active, start:end], state)
            if self.pooling == "last+mean":
                part = (weights[:active, start:end, None] * out).sum(1)
                pooled = pooled + F.pad(part, (0, 0, 0, len(lengths) - active))
            for b in range(active):
                if lengths[b] == end:
                    last[b] = state[0][-1, b]
            start = end
        latent = torch.stack(last)  # type: ignore[arg-type]
        return torch.cat([latent, pooled], dim=-1) if self.pooling == "last+mean" else latent

    def head(self, name: str, latent: torch.Tensor, clocks: torch.Tensor) -> torch.Tensor:
        n, c = latent.shape[0], clocks.shape[0]
        z = torch.cat([latent[:, None, :].expand(n, c, -1), clocks[None].expand(n, c, 2)], dim=-1)
        return self.heads[name](z)[..., 0]


def _optimizer(name: str, params: object, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)  # type: ignore[arg-type]
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)  # type: ignore[arg-type]
    raise ValueError(f"unknown optimizer {name!r} (adam or sgd)")


class LstmDvfs(BaseEstimator):
    """LSTM encoder + three heads predicting time/power/energy scaling at every clock configuration.

    ``fit(X, y, clocks)``: X is a list of sequences ((SeqItem, count) runs or SeqItems), y the
    (samples, 3, configs) scaling factors in ``HEADS`` order. ``members`` > 1 trains an ensemble of
    independently seeded networks whose outputs are averaged.
    """

    def __init__(
        self, fields: Sequence[str] = DEFAULT_FIELDS, embed_size: int = 15, hidden_size: int = 50,
        num_layers: int = 2, encoder_optimizer: str = "adam", encoder_lr: float = 0.005, batch_size: int = 8,
        epochs: int = 20, heads: dict[str, dict] | None = None, dropout: float = 0.0, target: str = "scaling",
        count_scale: float = 0.25, unknown_prob: float = 0.0, weight_decay: float = 0.0,
        lr_schedule: str = "constant", pooling: str = "last", members: int = 1, seed: int = 0,
    ) -> None:
        self.fields = fields
        self.embed_size = embed_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.encoder_optimizer = encoder_optimizer
        self.encoder_lr = encoder_lr
        self.batch_size = batch_size
        self.epochs = epochs
        self.heads = heads
        self.dropout = dropout
        self.target = target
        self.count_scale = count_scale
        self.unknown_prob = unknown_prob
        self.weight_decay = weight_decay
        self.lr_schedule = lr_schedule
        self.pooling = pooling
        self.members = members
        self.seed = seed

    # ------------------------------------------------------------------------------------------ fit
    def _head_config(self) -> dict[str, dict]:
        return self.heads if self.heads is not None else PAPER_HEADS

    def fit(
        self, X: Sequence[Sequence[Run]], y: np.ndarray, clocks: ClockTable,
        progress: Callable[[int], None] | None = None,
    ) -> LstmDvfs:
        """Train; ``progress`` is called with 1 after every batch (``n_batches_total(len(X))`` in all)."""
        steps = [to_steps(s, self.fields) for s in X]
        self.vocabulary_ = Vocabulary.build(steps, self.fields)
        self.clocks_ = clocks
        self.transform_ = TargetTransform(self.target, clocks.reference).fit(y)
        encoded = [self.vocabulary_.encode(s) for s in steps]
        z = self.transform_.forward(y)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the matrices are tiny: intra-op threads cost more than they save
        try:
            self.nets_ = [self._train_member(encoded, z, clocks, self.seed + m, progress) for m in range(self.members)]
        finally:
            torch.set_num_threads(threads)
        self.arrays_ = _export(self.nets_, self.fields, self.num_layers)
        self.predictor_ = LstmPredictor(self.arrays_, self.config())
        return self

    def n_batches_total(self, n_samples: int) -> int:
        return self.members * self.epochs * math.ceil(n_samples / self.batch_size)

    def _train_member(
        self, encoded: list[tuple[np.ndarray, np.ndarray]], z: np.ndarray, clocks: ClockTable, seed: int,
        progress: Callable[[int], None] | None,
    ) -> _Net:
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        heads = self._head_config()
        net = _Net(self.vocabulary_.sizes(), self.embed_size, self.hidden_size, self.num_layers, self.dropout,
                   heads, self.pooling)
        encoder_params = [*net.embeddings.parameters(), *net.lstm.parameters()]
        opts = {"encoder": _optimizer(self.encoder_optimizer, encoder_params, self.encoder_lr, self.weight_decay)}
        for name in HEADS:
            opts[name] = _optimizer(heads[name]["optimizer"], net.heads[name].parameters(), heads[name]["lr"],
                                    self.weight_decay)
        base_lr = {k: o.param_groups[0]["lr"] for k, o in opts.items()}
        clock_t = torch.tensor(clocks.normalised(), dtype=torch.float32)
        targets = torch.tensor(z, dtype=torch.float32)
        loss_fn = nn.SmoothL1Loss()
        n = len(encoded)
        n_batches = math.ceil(n / self.batch_size)
        total, done = self.epochs * n_batches, 0
        net.train()
        for epoch in range(self.epochs):
            order = rng.permutation(n)
            head = epoch % len(HEADS)
            for b in range(n_batches):
                if self.lr_schedule == "cosine":
                    factor = 0.5 * (1 + math.cos(math.pi * done / total))
                    for k, o in opts.items():
                        o.param_groups[0]["lr"] = base_lr[k] * factor
                idx = order[b * self.batch_size:(b + 1) * self.batch_size]
                ids, counts, weights, lengths, rows = self._batch(encoded, idx, rng)
                name = HEADS[head]
                pred = net.head(name, net.encode(ids, counts, weights, lengths), clock_t)
                loss = loss_fn(pred, targets[rows, HEADS.index(name)])
                opts["encoder"].zero_grad()
                opts[name].zero_grad()
                loss.backward()
                opts["encoder"].step()
                opts[name].step()
                head = (head + 1) % len(HEADS)
                done += 1
                if progress:
                    progress(1)
        net.eval()
        return net

    def _batch(
        self, encoded: list[tuple[np.ndarray, np.ndarray]], idx: np.ndarray, rng: np.random.Generator,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int], list[int]]:
        """Padded indices, log-count inputs and pooling weights of a batch, rows sorted by length (desc)."""
        rows = sorted((int(i) for i in idx), key=lambda i: -len(encoded[i][0]))
        lengths = [len(encoded[i][0]) for i in rows]
        ids = np.zeros((len(rows), lengths[0], len(self.fields)), dtype=np.int64)
        counts = np.zeros((len(rows), lengths[0], 1), dtype=np.float32)
        weights = np.zeros((len(rows), lengths[0]), dtype=np.float32)
        for r, i in enumerate(rows):
            ids[r, :lengths[r]] = encoded[i][0]
            counts[r, :lengths[r], 0] = count_inputs(encoded[i][1], self.count_scale)
            weights[r, :lengths[r]] = pooling_weights(encoded[i][1])
        if self.unknown_prob > 0:
            ids[rng.random(ids.shape) < self.unknown_prob] = 0
        return torch.from_numpy(ids), torch.from_numpy(counts), torch.from_numpy(weights), lengths, rows

    # ------------------------------------------------------------------------------ export, predict
    def config(self) -> dict:
        """What the numpy predictor needs besides the arrays (stored in the model card)."""
        return {
            "vocabulary": self.vocabulary_.to_dict(), "count_scale": self.count_scale,
            "clocks": self.clocks_.to_dict(), "transform": self.transform_.to_dict(),
            "num_layers": self.num_layers, "pooling": self.pooling,
            "head_layers": len(self._head_config()["time"]["hidden"]) + 1,
        }

    def export(self) -> tuple[dict[str, np.ndarray], dict]:
        return self.arrays_, self.config()

    def predict(self, X: Sequence[Sequence[Run]]) -> np.ndarray:
        """(samples, 3, configs) scaling factors, computed by the numpy predictor on the exported arrays."""
        return np.stack([self.predictor_.predict(s) for s in X])


def _export(nets: list[_Net], fields: Sequence[str], num_layers: int) -> dict[str, np.ndarray]:
    """Stack the members' weights into numpy arrays (float32), names as LstmPredictor reads them."""
    out: dict[str, list[np.ndarray]] = {}

    def put(name: str, t: torch.Tensor) -> None:
        out.setdefault(name, []).append(t.detach().cpu().numpy().astype(np.float32))

    for net in nets:
        for f, emb in zip(fields, net.embeddings):
            put(f"emb.{f}", emb.weight)
        for i in range(num_layers):
            put(f"lstm.{i}.w_ih", getattr(net.lstm, f"weight_ih_l{i}"))
            put(f"lstm.{i}.w_hh", getattr(net.lstm, f"weight_hh_l{i}"))
            put(f"lstm.{i}.b", getattr(net.lstm, f"bias_ih_l{i}") + getattr(net.lstm, f"bias_hh_l{i}"))
        for name in HEADS:
            linears = [m for m in net.heads[name] if isinstance(m, nn.Linear)]
            for k, lin in enumerate(linears):
                put(f"head.{name}.{k}.w", lin.weight)
                put(f"head.{name}.{k}.b", lin.bias)
    return {k: np.stack(v) for k, v in out.items()}
