"""How far a kernel lies outside what a model was trained on (numpy only).

Three shares in [0, 1]:

* ``unknown_share``: executed share of instructions whose ISA group, state space or vector width (per
  group) never occurs in the training sequences: what the features cannot describe;
* ``unseen_share``: the same with unseen opcodes added (an opcode of a known group, such as ``cos`` when
  training had ``sin``, is described by its group's features, but is still new);
* ``out_of_range_share``: share of the model's features whose value lies outside the training range
  (with a tolerance of ``tolerance`` × the range on each side).

The score is ``1 − (1 − unseen)(1 − out_of_range)``: 0 inside the training data, 1 for a kernel made only
of instructions the model never saw. Models shrink by at least ``unknown_share`` (``uncertainty.Shrinkage``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis.sequence import as_runs


def vocabulary_marks(item: object) -> tuple[str, str, str, str]:
    """The vocabulary an instruction contributes: its opcode, then its state space, its group, and its group
    at its vector width."""
    i = item
    return (f"opcode:{i.opcode}", f"space:{i.space or '-'}", f"group:{i.group}", f"vec:{i.group}.{i.vec}")  # type: ignore[attr-defined]


Profile = Counter  # vocabulary marks of an instruction -> executions


def profile(seq: Sequence) -> Profile:
    """How often each distinct (opcode, space, group-width) combination executes in a sequence."""
    out: Profile = Counter()
    for item, count in as_runs(seq):
        out[vocabulary_marks(item)] += count
    return out


@dataclass
class OodReport:
    score: float
    unknown_share: float
    unseen_share: float
    out_of_range_share: float
    unseen: list[str] = field(default_factory=list)  # e.g. "opcode:bra", "vec:mem.global.4"
    out_of_range: list[str] = field(default_factory=list)  # feature names

    def to_dict(self) -> dict:
        return {"score": round(self.score, 4), "unknown_share": round(self.unknown_share, 4),
                "unseen_share": round(self.unseen_share, 4),
                "out_of_range_share": round(self.out_of_range_share, 4), "unseen": self.unseen,
                "out_of_range": self.out_of_range}


class OodReference:
    """What the training data held: its instruction vocabulary and the range of each feature."""

    def __init__(self, vocabulary: Sequence[str], low: np.ndarray, high: np.ndarray, names: Sequence[str],
                 tolerance: float = 0.05) -> None:
        self.vocabulary = frozenset(vocabulary)
        self.low, self.high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        self.names = tuple(names)
        self.tolerance = float(tolerance)

    @classmethod
    def fit(cls, profiles: Sequence[Profile], features: np.ndarray, names: Sequence[str],
            tolerance: float = 0.05) -> OodReference:
        """From the training sequences' :func:`profile` and feature matrix."""
        vocab = {m for p in profiles for marks in p for m in marks}
        return cls(sorted(vocab), features.min(axis=0), features.max(axis=0), names, tolerance)

    def report(self, seq: Sequence | Profile, features: np.ndarray) -> OodReport:
        """For a sequence or its :func:`profile`, and its feature vector."""
        prof = seq if isinstance(seq, Counter) else profile(seq)
        total = sum(prof.values()) or 1
        unseen: set[str] = set()
        hit = unknown = 0.0
        for marks, count in prof.items():
            missing = [m for m in marks if m not in self.vocabulary]
            if missing:
                unseen.update(missing)
                hit += count
                unknown += count if any(m in missing for m in marks[1:]) else 0
        margin = self.tolerance * (self.high - self.low)
        outside = (features < self.low - margin) | (features > self.high + margin)
        u, r = hit / total, float(outside.mean()) if len(outside) else 0.0
        return OodReport(1.0 - (1.0 - u) * (1.0 - r), unknown / total, u, r, sorted(unseen),
                         [n for n, o in zip(self.names, outside) if o])

    def scores(self, seqs: Sequence[Sequence | Profile], features: np.ndarray) -> np.ndarray:
        return np.array([self.report(s, f).score for s, f in zip(seqs, features)])

    def to_config(self) -> dict:
        return {"vocabulary": sorted(self.vocabulary), "low": self.low.tolist(), "high": self.high.tolist(),
                "names": list(self.names), "tolerance": self.tolerance}

    @classmethod
    def from_config(cls, d: dict) -> OodReference:
        return cls(d["vocabulary"], np.asarray(d["low"]), np.asarray(d["high"]), d["names"], d["tolerance"])
