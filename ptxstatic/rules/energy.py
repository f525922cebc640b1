"""What the energy rules (PS5xx) read: the DVFS prediction of the default model of the target GPU on a
kernel's loop-weighted program order (no launch needed), computed once per kernel and slowdown limit; and,
with a launch in the configuration, the bottleneck estimate of its time from its traffic (once per kernel).

The target is the configured ``gpu`` (by its occupancy-table or model name), else the GPU whose models
ptxstatic ships (:data:`ptxstatic.predict.DEFAULT_GPU`). A GPU without a DVFS model gives no prediction.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind, bind_present
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.target import is_debug

if TYPE_CHECKING:  # the prediction pipeline is imported when an energy rule runs
    from ptxstatic.predict import Models, Timing

#: the GPU whose models are shipped (:data:`ptxstatic.predict.DEFAULT_GPU`, kept equal by a test)
DEFAULT_GPU = "gtxtitanx"


@lru_cache(maxsize=8)
def _loaded(gpu: str) -> Models | None:
    from ptxstatic.predict import load_models

    try:
        return load_models(gpu)
    except PtxstaticError:
        return None


def _models(gpu: str) -> Models | None:
    models = _loaded(gpu)
    return models if models is not None and models.dvfs is not None else None


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


def launch_timing(ctx: RuleContext) -> Timing | None:
    """The bottleneck estimate of the current kernel at the configured launch (arguments by C++ name, index or
    PTX name; those it does not give made up by the traffic model, saying so), from its traffic and static
    block counts, at the clocks ``predict`` gives absolute time at; None without a launch, for a device
    function or a debug build, on a GPU without published figures, or where the launch does not fit the
    kernel."""
    fn, launch = ctx.function, ctx.config.launch
    models = _loaded(energy_gpu(ctx))
    if launch is None or not fn.is_kernel or is_debug(ctx.module) or models is None:
        return None

    def compute() -> Timing | None:
        from ptxstatic.predict import executed_estimate
        from ptxstatic.predict import launch_timing as timing

        try:
            given = bind_present(ctx.module, fn, launch.args)[0]
            bound = bind(ctx.module, fn, Launch(launch.grid, launch.block, launch.shared_bytes, given))
        except PtxstaticError:
            return None
        est = executed_estimate(fn, bound)[2]
        return timing(models, bound, est.counts if est is not None else None, [])

    return ctx.mc.memo(f"PS502.{fn.name}", compute)


def model_words(pred: dict) -> str:
    """``the physical model of gtxtitanx`` and, when the kernel lies outside the training data, how much its
    prediction was shrunk toward the training mean."""
    words = f"the {pred['model']['name']} model of {pred['gpu']}"
    shrink = (pred.get("ood") or {}).get("shrinkage") or 0.0
    if shrink >= 0.05:
        words += f", shrunk {shrink:.0%} toward the training mean as the kernel is unlike its training data"
    return words
