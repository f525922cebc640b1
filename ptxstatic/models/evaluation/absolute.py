"""Scores of a GPU's absolute time and board power models on its measured launches (``ptxstatic evaluate
--model trained/h200 --data DB``): each launch of the manifest that the dataset measured, as ``predict``
sees it (:mod:`ptxstatic.models.evaluation.measured_launches`), against its measured time (launches whose
block counts are exact) and board power (samples whose power is usable), at the GPU's default clocks.

Rows, in the ``absolute`` section of an evaluation: the errors (median and mean absolute percentage, the
shares within 10 % and 20 %), the launches scored and the share inside the model's 90 % interval; the
notes say where the dataset is one a model was fitted on (then the errors are in-sample, and its card has
the held-out ones).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.models.evaluation.measured_launches import measured_powers, observations, power_observations
from ptxstatic.models.evaluation.metrics import absolute_metrics
from ptxstatic.models.inference.board_power import PowerParameters, launch_power
from ptxstatic.models.inference.bottleneck import BottleneckParameters, launch_time
from ptxstatic.models.inference.loading import bottleneck_parameters

#: the model kinds scored here (the others are DVFS models and forests, :mod:`.scoring`)
ABSOLUTE_KINDS = ("bottleneck", "power")


def absolute_results(cards: list[dict], data: Path, manifest: Path, gpu: str | None = None,
                     progress: Callable[[str], None] = lambda s: None) -> dict:
    """An evaluation (as :func:`~ptxstatic.models.evaluation.scoring.shipped_results` writes one) of the
    bottleneck and power models whose ``cards`` are given, on the collect dataset ``data`` of launches of
    ``manifest``; a power model takes its times from the bottleneck card given with it, else from the
    GPU's shipped one."""
    gpus = {str(c.get("gpu")) for c in cards} | ({gpu} if gpu else set())
    if len(gpus) != 1:
        raise PtxstaticError(f"the models are for different GPUs: {', '.join(sorted(gpus))}")
    figures = gpu_figures(gpus.pop())
    by_kind = {c["kind"]: c for c in cards}
    time_params = (BottleneckParameters.from_dict(by_kind["bottleneck"]["config"]) if "bottleneck" in by_kind
                   else bottleneck_parameters(figures.name))
    obs = observations(manifest, [data], [], figures, progress=progress)
    if not obs:
        raise PtxstaticError(f"{data}: no measured launch of {figures.name} from {manifest}")
    clocks = figures.default_clocks or (figures.memory_mhz, figures.max_core_mhz)
    out: dict = {"title": f"absolute models of {figures.name} on {data.name} (default clocks)", "samples": len(obs),
                 "dvfs": {}, "absolute": {}, "notes": []}
    if "bottleneck" in by_kind:
        exact = [o for o in obs if o.exact]
        est = [launch_time(o.work, figures, *clocks, time_params) for o in exact]
        out["absolute"]["bottleneck (time)"] = _scores(np.array([o.time_ms for o in exact]),
                                                       np.array([e.time_ms for e in est]),
                                                       [(e.low_ms, e.high_ms) for e in est])
    if "power" in by_kind:
        params = PowerParameters.from_dict(by_kind["power"]["config"])
        pobs = power_observations(obs, measured_powers([data], figures.name))
        if pobs:
            est_w = [launch_power(p.observation.work, figures, *clocks, time_params, params) for p in pobs]
            out["absolute"]["power (board power)"] = _scores(np.array([p.power_w for p in pobs]),
                                                             np.array([e.power_w for e in est_w]),
                                                             [(e.low_w, e.high_w) for e in est_w])
        else:
            out["notes"].append(f"power: no sample of {data.name} has a usable board power (1 s or longer)")
    for kind, card in by_kind.items():
        if data.name in card.get("training_data", {}):
            out["notes"].append(f"{kind}: fitted on {data.name}, so these errors are in-sample; its card has the "
                                "leave-one-family-out ones (evaluation.leave_one_family_out)")
    return out


def _scores(measured: np.ndarray, predicted: np.ndarray, intervals: list[tuple[float, float]]) -> dict:
    held = [lo <= m <= hi for m, (lo, hi) in zip(measured, intervals, strict=True)]
    return {**absolute_metrics(measured, predicted), "launches": len(measured),
            "interval": float(100.0 * np.mean(held)) if held else 0.0}
