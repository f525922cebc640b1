"""What the DVFS models learn: time, power and energy scaling factors relative to the reference
(highest-clock) configuration, optionally as normalised log residuals from the training mean surface."""

from __future__ import annotations

import numpy as np

from ptxstatic.dvfs import TARGETS

HEADS = TARGETS

TRANSFORMS = ("scaling", "log_residual")


class TargetTransform:
    """``scaling``: the factors themselves (gpuPTXModel). ``log_residual``: (log s − mean log s per
    configuration) / scale per head; the inverse renormalises so that the reference configuration is
    exactly 1."""

    def __init__(self, kind: str, reference: int, offset: np.ndarray | None = None,
                 scale: np.ndarray | None = None) -> None:
        if kind not in TRANSFORMS:
            raise ValueError(f"unknown target transform {kind!r}")
        self.kind, self.reference = kind, int(reference)
        self.offset, self.scale = offset, scale

    def fit(self, y: np.ndarray) -> TargetTransform:
        """``y``: (samples, 3, configs) scaling factors."""
        if self.kind == "log_residual":
            logs = np.log(y)
            self.offset = logs.mean(axis=0)
            self.scale = np.maximum((logs - self.offset).std(axis=(0, 2)), 1e-3)
        return self

    def forward(self, y: np.ndarray) -> np.ndarray:
        if self.kind == "scaling":
            return y.astype(np.float32)
        return ((np.log(y) - self.offset) / self.scale[:, None]).astype(np.float32)

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """(…, 3, configs) model outputs -> scaling factors."""
        if self.kind == "scaling":
            return np.maximum(z, 1e-3)
        logs = z * self.scale[:, None] + self.offset
        return np.exp(logs - logs[..., [self.reference]])

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "reference": self.reference,
            "offset": None if self.offset is None else np.asarray(self.offset).tolist(),
            "scale": None if self.scale is None else np.asarray(self.scale).tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> TargetTransform:
        offset = None if d.get("offset") is None else np.asarray(d["offset"], dtype=np.float64)
        scale = None if d.get("scale") is None else np.asarray(d["scale"], dtype=np.float64)
        return cls(d["kind"], d["reference"], offset, scale)
