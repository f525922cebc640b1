"""Loading shipped models by kind, and finding the models shipped for a GPU (numpy only)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptxstatic.errors import PtxstaticError
from ptxstatic.models.artifacts import load_arrays, read_card
from ptxstatic.models.baseline_predictors import GroupForestPredictor, MeanSurfacePredictor, WuPredictor
from ptxstatic.models.forest_predictor import ForestPredictor
from ptxstatic.models.lstm_numpy import LstmPredictor
from ptxstatic.models.physical_predictor import PhysicalPredictor

PREDICTORS: dict[str, type] = {
    "lstm": LstmPredictor, "mean_surface": MeanSurfacePredictor, "group_forest": GroupForestPredictor,
    "wu_clusters": WuPredictor, "forest": ForestPredictor, "physical": PhysicalPredictor,
}
DVFS_KINDS = ("lstm", "mean_surface", "group_forest", "wu_clusters", "physical")
#: the models ``predict`` looks for in a GPU's directory
PREDICTION_MODELS = ("lstm", "forest_time", "forest_power")
#: environment variable naming a directory of shipped models (one sub-directory per GPU)
MODELS_ENV = "PTXSTATIC_MODELS"


@dataclass
class LoadedModel:
    directory: Path
    card: dict
    predictor: Any

    @property
    def kind(self) -> str:
        return str(self.card["kind"])

    @property
    def is_dvfs(self) -> bool:
        return self.kind in DVFS_KINDS


def load_model(path: str | Path) -> LoadedModel:
    """A model directory (or its card.json): card checked, arrays checked against their sha256."""
    directory, card = read_card(path)
    cls = PREDICTORS.get(card["kind"])
    if cls is None:
        raise PtxstaticError(f"{directory}: unknown model kind {card['kind']!r}")
    arrays = load_arrays(directory, card)
    try:
        predictor = cls(arrays, card["config"])
    except PtxstaticError as exc:
        raise PtxstaticError(f"{directory}: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PtxstaticError(f"{directory}: model configuration is malformed ({exc!r})") from None
    return LoadedModel(directory, card, predictor)


def models_root() -> Path:
    """Where shipped models live: ``$PTXSTATIC_MODELS``, else ``trained/`` of the source tree."""
    env = os.environ.get(MODELS_ENV)
    return Path(env) if env else Path(__file__).resolve().parents[2] / "trained"


def is_shipped(gpu: str, name: str) -> bool:
    return (models_root() / gpu / name / "card.json").is_file()


def _not_shipped(gpu: str, what: str) -> PtxstaticError:
    root = models_root()
    gpus = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return PtxstaticError(
        f"no shipped {what} for GPU {gpu!r} under {root} (GPUs with models: {', '.join(gpus) or 'none'})"
    )


def shipped(gpu: str, name: str) -> Path:
    """The directory of the shipped model ``name`` (e.g. ``lstm``, ``forest_time``) for ``gpu``."""
    if not is_shipped(gpu, name):
        raise _not_shipped(gpu, f"{name} model")
    return models_root() / gpu / name


def prediction_models(gpu: str | None, path: str | Path | None, default_gpu: str) -> tuple[LoadedModel | None,
                                                                                           list[LoadedModel]]:
    """The DVFS model and the absolute forests ``predict`` uses: those shipped for ``gpu``, or those at ``path``
    (a DVFS model, a forest, or a directory of models such as ``trained/NAME``). At least one is found, and all
    are for the same GPU (``gpu`` if given)."""
    if path is None:
        root = models_root() / (gpu or default_gpu)
        if not any(is_shipped(root.name, n) for n in PREDICTION_MODELS):
            raise _not_shipped(root.name, "models")
    else:
        root = Path(path)
    if (root / "card.json").is_file() or root.name == "card.json":
        models = [load_model(root)]
    else:
        names = [n for n in PREDICTION_MODELS if (root / n / "card.json").is_file()]
        if not names:
            raise PtxstaticError(f"{root}: no model (a card.json, or lstm/, forest_time/, forest_power/ under it)")
        models = [load_model(root / n) for n in names]
    gpus = {str(m.card.get("gpu")) for m in models}
    if len(gpus) > 1:
        raise PtxstaticError(f"{root}: the models are for different GPUs: {', '.join(sorted(gpus))}")
    if gpu is not None and gpus != {gpu}:
        raise PtxstaticError(f"{models[0].directory}: the model is for GPU {gpus.pop()!r}, not {gpu!r}")
    dvfs = [m for m in models if m.is_dvfs]
    return (dvfs[0] if dvfs else None), [m for m in models if m.kind == "forest"]
