"""Scoring trained models on a dataset (numpy only): DVFS metrics of what ``predict`` would report
(calibrated surfaces, with their intervals' coverage), per-sample errors, and absolute-forest metrics."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable

import numpy as np

from ptxstatic.dataset.dataset import DvfsDataset
from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.models.evaluation.metrics import absolute_metrics, dvfs_entry
from ptxstatic.models.inference.artifacts import CARD
from ptxstatic.models.inference.loading import LoadedModel

#: the name of the row added from a calibrated model's training mean when no mean_surface model is scored
TRAINING_MEAN = "mean_surface (training mean)"


def _check(m: LoadedModel, data: DvfsDataset) -> None:
    clocks = getattr(m.predictor, "clocks", None)
    if clocks is not None and clocks != data.clocks:
        raise PtxstaticError(f"{m.directory}: the model's clock table differs from {data.gpu}'s in the data")


def _dvfs_entry(m: LoadedModel, data: DvfsDataset, progress: Callable[[str, int, int], None] | None) -> dict:
    y, runs = data.scaling_surfaces(), data.runs
    pred, lo, hi = (np.empty_like(y) for _ in range(3))
    for i, seq in enumerate(runs):
        if m.calibration is not None:
            d = m.details([seq])[0]
            pred[i], lo[i], hi[i] = d.surfaces, d.lower, d.upper
        else:
            pred[i] = m.raw([seq])[0]
            if m.card.get("energy_source") == "time*power":  # the energy its decisions would use
                pred[i, 2] = pred[i, 0] * pred[i, 1]
        if progress:
            progress(f"evaluating {m.name}", i + 1, len(runs))
    entry = dvfs_entry(y, pred, data.clocks.reference, (lo, hi) if m.calibration else None, data.names)
    entry["calibrated"] = m.calibration is not None
    entry["energy_source"] = m.calibration.energy_from if m.calibration else m.card.get("energy_source", "head")
    return entry


def shipped_results(
    data: DvfsDataset, models: list[LoadedModel], progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Metrics of each model on every sample of ``data``, with per-sample errors; a row for the training
    mean surface when no mean_surface model is among them; notes say which samples a model was trained on."""
    y = data.scaling_surfaces()
    ref = data.clocks.reference
    out: dict = {"title": f"evaluation on {data.gpu} ({data.source or 'dataset'})", "samples": len(data),
                 "dvfs": {}, "absolute": {}, "notes": []}
    for m in models:
        _check(m, data)
        seen = set(m.card.get("training_data", {}).get("benchmarks", []))
        overlap = sum(n in seen for n in data.names)
        if overlap:
            out["notes"].append(f"{m.name}: {overlap} of {len(data)} samples were in its training set (in-sample)")
        if m.is_dvfs:
            out["dvfs"][m.name] = _dvfs_entry(m, data, progress)
        else:
            p = m.predictor
            out["absolute"][m.name] = absolute_metrics(data.values(p.target)[:, ref],
                                                       p.predict(data.feature_matrix(p.features)))
    calibrated = [m for m in models if m.is_dvfs and m.calibration is not None]
    if calibrated and not any(m.kind == "mean_surface" for m in models):
        mean = np.repeat(calibrated[0].calibration.mean_surface[None], len(data), axis=0)  # type: ignore[union-attr]
        out["dvfs"][TRAINING_MEAN] = dvfs_entry(y, mean, ref, None, data.names)
        out["notes"].append(f"{TRAINING_MEAN}: the mean surface of {calibrated[0].name}'s training set")
    return out


def record_in_cards(results: dict, models: list[LoadedModel], data: DvfsDataset) -> list[str]:
    """Write each DVFS model's scores on ``data`` into its card (``evaluation.validation``), with the training
    mean surface's scores beside them; returns the cards written. The weights are untouched."""
    for m in models:
        if set(m.card.get("training_data", {}).get("benchmarks", [])) & set(data.names):
            raise PtxstaticError(f"{m.directory}: trained on samples of this data; only held-out scores are recorded")
    written = []
    mean = results["dvfs"].get(TRAINING_MEAN) or next(
        (results["dvfs"][m.name] for m in models if m.kind == "mean_surface"), None)
    for m in models:
        entry = results["dvfs"].get(m.name)
        if entry is None:
            continue
        card = json.loads((m.directory / CARD).read_text())
        record = {"data": data.source or data.gpu, "samples": len(data), "date": datetime.date.today().isoformat(),
                  **entry}
        if mean is not None and m.kind != "mean_surface":
            record["mean_surface"] = {k: mean[k] for k in ("scaling", "energy_choice")}
        card["evaluation"] = {**(card.get("evaluation") or {}), "validation": record}
        write_atomic(m.directory / CARD, json.dumps(card, indent=1) + "\n")
        written.append(str(m.directory / CARD))
    return written
