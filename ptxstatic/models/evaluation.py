"""Scoring shipped models on a dataset (numpy only): DVFS metrics and absolute-forest metrics."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.errors import PtxstaticError
from ptxstatic.models.metrics import absolute_metrics, dvfs_report
from ptxstatic.models.registry import LoadedModel


def shipped_results(
    data: DvfsDataset, models: list[LoadedModel], progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Metrics of each model on every sample of ``data``; notes say how many samples each was trained on."""
    y = data.scaling_surfaces()
    ref = data.clocks.reference
    out: dict = {"title": f"evaluation on {data.gpu} ({data.source or 'dataset'})", "samples": len(data),
                 "dvfs": {}, "absolute": {}, "notes": []}
    for m in models:
        name = str(m.card.get("name", m.kind))
        clocks = getattr(m.predictor, "clocks", None)
        if clocks is not None and clocks != data.clocks:
            raise PtxstaticError(f"{m.directory}: the model's clock table differs from {data.gpu}'s in the data")
        seen = set(m.card.get("training_data", {}).get("benchmarks", []))
        overlap = sum(n in seen for n in data.names)
        if overlap:
            out["notes"].append(f"{name}: {overlap} of {len(data)} samples were in its training set (in-sample)")
        if m.is_dvfs:
            pred = np.empty_like(y)
            for i, seq in enumerate(data.runs):
                pred[i] = m.predictor.predict(seq)
                if progress:
                    progress(f"evaluating {name}", i + 1, len(data))
            out["dvfs"][name] = dvfs_report(y, pred, ref)
        else:
            p = m.predictor
            true = data.values(p.target)[:, ref]
            pred_abs = p.predict(data.feature_matrix(p.features))
            out["absolute"][name] = absolute_metrics(true, pred_abs)
    return out
