"""Turning instruction sequences into model inputs: per-field vocabularies and block run-length steps.

A sequence arrives as SeqItems (static order) or (SeqItem, repeat count) runs (executed order). Encoding:

1. dependency distances become what gpuPTXModel measured: register-writing instructions back to the
   producer, 0 beyond a window of 9 (the importer stores exact instruction distances, as the front end does;
   this step maps both onto the same scale);
2. each step keeps only the model's fields, and consecutive equal steps merge (counts add);
3. consecutive repeats of a block of up to ``MAX_BLOCK`` steps are folded into one copy of the block with
   its counts multiplied (a loop body executed N times becomes its instructions with count × N), repeated
   until nothing folds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ptxstatic.analysis.sequence import SeqItem, as_runs

FIELDS = (
    "opcode", "group", "space", "dtype", "vec", "n_src", "n_dst", "guarded", "dep_distance", "dep_kind",
)
#: fields a model uses unless told otherwise: ``guarded`` is left out because the training data cannot
#: contain guarded instructions (the tool that recorded it dropped them)
DEFAULT_FIELDS = tuple(f for f in FIELDS if f != "guarded")
DEPENDENCY_WINDOW = 9
MAX_BLOCK = 16

Step = tuple[tuple[str, ...], int]  # (field values as strings, repeat count)


def writer_distances(runs: Sequence[tuple[SeqItem, int]], window: int = DEPENDENCY_WINDOW) -> list[int]:
    """Per run: register-writing instructions back to the producer of its first instance (0 if none or
    beyond ``window`` writers)."""
    out = []
    for r, (item, _) in enumerate(runs):
        remaining, writers, j = item.dep_distance, 0, r - 1
        while remaining > 0 and j >= 0:
            prev, count = runs[j]
            take = min(remaining, count)
            writers += take if prev.n_dst > 0 else 0
            remaining -= take
            j -= 1
        out.append(writers if item.dep_distance > 0 and remaining == 0 and writers <= window else 0)
    return out


def fold_blocks(steps: list[Step], max_block: int = MAX_BLOCK) -> list[Step]:
    """One left-to-right pass folding consecutive repeats of a block into one copy with multiplied counts."""
    out: list[Step] = []
    i, n = 0, len(steps)
    while i < n:
        best_p, best_k = 1, 1
        for p in range(1, min(max_block, (n - i) // 2) + 1):
            block = steps[i:i + p]
            k = 1
            while steps[i + k * p:i + (k + 1) * p] == block:
                k += 1
            if k > 1 and p * k > best_p * best_k:
                best_p, best_k = p, k
        out.extend((key, count * best_k) for key, count in steps[i:i + best_p])
        i += best_p * best_k
    return out


def to_steps(
    seq: Sequence[SeqItem] | Sequence[tuple[SeqItem, int]], fields: Sequence[str] = DEFAULT_FIELDS,
) -> list[Step]:
    """A sequence as folded steps of the given fields."""
    runs = as_runs(seq)
    distances = writer_distances(runs)
    steps: list[Step] = []
    for (item, count), dist in zip(runs, distances):
        key = tuple(str(dist) if f == "dep_distance" else str(getattr(item, f)) for f in fields)
        if steps and steps[-1][0] == key:
            steps[-1] = (key, steps[-1][1] + count)
        else:
            steps.append((key, count))
    while True:
        folded = fold_blocks(steps)
        if folded == steps:
            return steps
        steps = folded


class Vocabulary:
    """Per-field value lists; index 0 of every field is reserved for values not seen in training."""

    def __init__(self, fields: Sequence[str], values: dict[str, list[str]]) -> None:
        self.fields = tuple(fields)
        self.values = {f: list(values[f]) for f in self.fields}
        self._index = {f: {v: i + 1 for i, v in enumerate(vs)} for f, vs in self.values.items()}

    @classmethod
    def build(cls, sequences: Sequence[list[Step]], fields: Sequence[str]) -> Vocabulary:
        seen: dict[str, set[str]] = {f: set() for f in fields}
        for steps in sequences:
            for key, _ in steps:
                for f, v in zip(fields, key):
                    seen[f].add(v)
        return cls(fields, {f: sorted(seen[f]) for f in fields})

    def sizes(self) -> list[int]:
        """Embedding rows per field (values + the unknown slot)."""
        return [len(self.values[f]) + 1 for f in self.fields]

    def encode(self, steps: list[Step]) -> tuple[np.ndarray, np.ndarray]:
        """(steps, fields) int64 indices and (steps,) float64 repeat counts."""
        ids = np.array(
            [[self._index[f].get(v, 0) for f, v in zip(self.fields, key)] for key, _ in steps], dtype=np.int64,
        ).reshape(len(steps), len(self.fields))
        return ids, np.array([c for _, c in steps], dtype=np.float64)

    def unknown(self, steps: list[Step]) -> dict[str, list[str]]:
        """Values in ``steps`` that training never saw, per field."""
        out: dict[str, set[str]] = {}
        for key, _ in steps:
            for f, v in zip(self.fields, key):
                if v not in self._index[f]:
                    out.setdefault(f, set()).add(v)
        return {f: sorted(v) for f, v in out.items()}

    def to_dict(self) -> dict:
        return {"fields": list(self.fields), "values": self.values}

    @classmethod
    def from_dict(cls, d: dict) -> Vocabulary:
        return cls(d["fields"], d["values"])
