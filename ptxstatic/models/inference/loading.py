"""Loading shipped models by kind with their calibration, and finding the models shipped for a GPU (numpy
only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.models.inference.artifacts import load_arrays, read_card
from ptxstatic.models.inference.baselines import GroupForestPredictor, MeanSurfacePredictor, WuPredictor
from ptxstatic.models.inference.board_power import PowerParameters
from ptxstatic.models.inference.bottleneck import DEFAULT_PARAMETERS, BottleneckParameters
from ptxstatic.models.inference.calibration import Calibration, DvfsPrediction
from ptxstatic.models.inference.forest import ForestPredictor
from ptxstatic.models.inference.lstm import LstmPredictor
from ptxstatic.models.inference.physical import PhysicalPredictor
from ptxstatic.package_data import data_path

PREDICTORS: dict[str, type] = {
    "lstm": LstmPredictor, "mean_surface": MeanSurfacePredictor, "group_forest": GroupForestPredictor,
    "wu_clusters": WuPredictor, "forest": ForestPredictor, "physical": PhysicalPredictor,
}
DVFS_KINDS = ("lstm", "mean_surface", "group_forest", "wu_clusters", "physical")
#: the DVFS model ``predict`` uses when none is named (its directory under a GPU's), and why (docs/models.md
#: has the numbers)
DEFAULT_DVFS = "physical"
#: the directory name of a GPU's fitted absolute time model
BOTTLENECK = "bottleneck"
#: the directory name of a GPU's fitted board power model
POWER = "power"
DEFAULT_WHY = (
    "the only model whose surfaces are physically consistent (time never rises with a clock, energy = time x power, "
    "so the printed table, the minimum-energy clocks and the Pareto set agree), with calibrated intervals and "
    "shrinkage toward the training mean surface for code unlike its training data; how it compares with the other "
    "models on the validation applications and in cross-validation, including where others do better, is in each "
    "card's evaluation and in docs/models.md")
#: environment variable naming a directory of shipped models (one sub-directory per GPU)


@dataclass
class LoadedModel:
    directory: Path
    card: dict
    predictor: Any
    calibration: Calibration | None = None

    @property
    def kind(self) -> str:
        return str(self.card["kind"])

    @property
    def name(self) -> str:
        return str(self.card.get("name", self.kind))

    @property
    def is_dvfs(self) -> bool:
        return self.kind in DVFS_KINDS

    @property
    def takes_memory_share(self) -> bool:
        """Whether the model's surfaces follow a memory-bound share computed from a launch's traffic."""
        return self.kind == "physical"

    def raw(self, seqs: Sequence[Sequence], memory_share: Sequence[float | None] | None = None) -> np.ndarray:
        """(sequences, 3, configs) the model's own surfaces, before calibration; ``memory_share``: per sequence,
        the memory-bound share of its time from the launch's traffic, for models that take it."""
        many = getattr(self.predictor, "predict_many", None)
        if many is not None:
            return many(seqs, memory_share) if self.takes_memory_share and memory_share else many(seqs)
        return np.stack([self.predictor.predict(s) for s in seqs])

    def require_calibration(self) -> Calibration:
        """The model's calibration; a model without one cannot give intervals."""
        if self.calibration is None:
            raise PtxstaticError(
                f"{self.directory}: the {self.name} model has no calibrated intervals (retrain it with "
                "`ptxstatic train`, which calibrates every model); `ptxstatic evaluate` still scores it")
        return self.calibration

    def details(self, seqs: Sequence[Sequence], memory_share: Sequence[float | None] | None = None
                ) -> list[DvfsPrediction]:
        """Calibrated predictions: surfaces shrunk toward the training mean out of distribution, with their
        intervals and the out-of-distribution report (a model without a calibration has none to give).
        ``memory_share``: as for :meth:`raw`."""
        out = self.require_calibration().apply(self.raw(seqs, memory_share), seqs)
        quantities = getattr(self.predictor, "quantities", None)
        if quantities is not None:
            given = memory_share if self.takes_memory_share and memory_share else None
            for d, q in zip(out, quantities(seqs, given) if given else quantities(seqs), strict=True):
                d.quantities = q
        return out

    def predict_many(self, seqs: Sequence[Sequence]) -> np.ndarray:
        """(sequences, 3, configs) the surfaces ``predict`` reports: calibrated where the model is."""
        if self.calibration is None:
            return self.raw(seqs)
        return np.stack([d.surfaces for d in self.calibration.apply(self.raw(seqs), seqs)])


def load_model(path: str | Path) -> LoadedModel:
    """A model directory (or its card.json): card checked, arrays checked against their sha256."""
    directory, card = read_card(path)
    cls = PREDICTORS.get(card["kind"])
    if cls is None:
        raise PtxstaticError(f"{directory}: unknown model kind {card['kind']!r}")
    arrays = load_arrays(directory, card)
    try:
        predictor = cls(arrays, card["config"])
        calibration = Calibration.from_artifact(arrays, card["config"])
    except PtxstaticError as exc:
        raise PtxstaticError(f"{directory}: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PtxstaticError(f"{directory}: model configuration is malformed ({exc!r})") from None
    if calibration is not None and calibration.mean_surface.shape != (3, len(predictor.clocks)):
        raise PtxstaticError(f"{directory}: the calibration does not match the model's clock table")
    return LoadedModel(directory, card, predictor, calibration)


def models_root() -> Path:
    """Where shipped models live: ``$PTXSTATIC_MODELS``, else the shipped ``trained/``."""
    return data_path("trained")


def is_shipped(gpu: str, name: str) -> bool:
    return (models_root() / gpu / name / "card.json").is_file()


def not_shipped(gpu: str, what: str) -> PtxstaticError:
    """The error for a GPU without shipped ``what``, naming the GPUs that have models."""
    root = models_root()
    gpus = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return PtxstaticError(
        f"no shipped {what} for GPU {gpu!r} under {root} (GPUs with models: {', '.join(gpus) or 'none'})"
    )


def prediction_model(gpu: str | None, path: str | Path | None, default_gpu: str) -> LoadedModel | None:
    """The DVFS model ``predict`` uses: the default one shipped for ``gpu`` (None if the GPU has none), or the
    one at ``path`` (a DVFS model directory, or a GPU's directory of models holding the default one)."""
    if path is None:
        name = gpu or default_gpu
        return load_model(models_root() / name / DEFAULT_DVFS) if is_shipped(name, DEFAULT_DVFS) else None
    root = Path(path)
    if not ((root / "card.json").is_file() or root.name == "card.json"):
        if not (root / DEFAULT_DVFS / "card.json").is_file():
            raise PtxstaticError(f"{root}: no model (a card.json, or {DEFAULT_DVFS}/ under it)")
        root = root / DEFAULT_DVFS
    model = load_model(root)
    if not model.is_dvfs:
        raise PtxstaticError(f"{model.directory}: a {model.kind} model; predict uses DVFS models "
                             f"({', '.join(DVFS_KINDS)}) and estimates absolute time from the launch itself")
    if gpu is not None and model.card.get("gpu") != gpu:
        raise PtxstaticError(f"{model.directory}: the model is for GPU {model.card.get('gpu')!r}, not {gpu!r}")
    return model


#: the GPU whose fitted bottleneck parameters stand in for a GPU without its own
BOTTLENECK_REFERENCE_GPU = "h200"


def bottleneck_parameters(gpu: str) -> BottleneckParameters:
    """The absolute time model's parameters fitted on ``gpu`` (``trained/<gpu>/bottleneck``), else those
    fitted on :data:`BOTTLENECK_REFERENCE_GPU` (saying so), else the model's defaults."""
    for name in dict.fromkeys((gpu, BOTTLENECK_REFERENCE_GPU)):
        if is_shipped(name, BOTTLENECK):
            directory, card = read_card(models_root() / name / BOTTLENECK)
            load_arrays(directory, card)  # its integrity
            params = BottleneckParameters.from_dict(card["config"])
            fitted = card["config"].get("fitted_on", name)
            if name != gpu:
                fitted = f"{fitted}; fitted on {name}, not on {gpu}"
            return replace(params, fitted_on=fitted)
    return DEFAULT_PARAMETERS


def power_parameters(gpu: str) -> PowerParameters | None:
    """The board power model fitted on ``gpu`` (``trained/<gpu>/power``); None without one (a board's power
    is its own: no other GPU's fit stands in)."""
    if not is_shipped(gpu, POWER):
        return None
    directory, card = read_card(models_root() / gpu / POWER)
    load_arrays(directory, card)  # its integrity
    try:
        return PowerParameters.from_dict(card["config"])
    except (KeyError, TypeError, ValueError) as exc:
        raise PtxstaticError(f"{directory}: model configuration is malformed ({exc!r})") from None
