"""The DVFS prediction the energy rules (PS5xx) read: the default model of the target GPU on a kernel's
loop-weighted program order (no launch needed), computed once per kernel and slowdown limit.

The target is the configured ``gpu`` (by its occupancy-table or model name), else the GPU whose models
ptxstatic ships (:data:`ptxstatic.predict.DEFAULT_GPU`). A GPU without a DVFS model gives no prediction.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ptxstatic.errors import PtxstaticError
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.target import is_debug

if TYPE_CHECKING:  # the prediction pipeline is imported when an energy rule runs
    from ptxstatic.predict import Models

#: the GPU whose models are shipped (:data:`ptxstatic.predict.DEFAULT_GPU`, kept equal by a test)
DEFAULT_GPU = "gtxtitanx"


@lru_cache(maxsize=8)
def _models(gpu: str) -> Models | None:
    from ptxstatic.predict import load_models

    try:
        models = load_models(gpu)
    except PtxstaticError:
        return None
    return models if models.dvfs is not None else None


def energy_gpu(ctx: RuleContext) -> str:
    """The GPU whose model the energy rules use (its model name)."""
    from ptxstatic.hardware.figures import ALIASES

    name = (ctx.config.gpu or DEFAULT_GPU).lower()
    return ALIASES.get(name, name)


def prediction(ctx: RuleContext, max_slowdown: float | None) -> dict | None:
    """:func:`ptxstatic.predict.predict_kernel` for the current kernel, None for a device function, a debug
    build or a GPU without a DVFS model."""
    fn = ctx.function
    if not fn.is_kernel or is_debug(ctx.module):
        return None
    models = _models(energy_gpu(ctx))
    if models is None:
        return None
    from ptxstatic.predict import predict_kernel

    return ctx.mc.memo(f"PS5.{fn.name}.{max_slowdown}",
                       lambda: predict_kernel(ctx.module, fn, models, None, max_slowdown=max_slowdown))


def model_words(pred: dict) -> str:
    """``the physical model of gtxtitanx`` and, when the kernel lies outside the training data, how much its
    prediction was shrunk toward the training mean."""
    words = f"the {pred['model']['name']} model of {pred['gpu']}"
    shrink = (pred.get("ood") or {}).get("shrinkage") or 0.0
    if shrink >= 0.05:
        words += f", shrunk {shrink:.0%} toward the training mean as the kernel is unlike its training data"
    return words
