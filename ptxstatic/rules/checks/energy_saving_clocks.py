"""PS501 energy-saving-clocks: lower clocks are predicted to save much energy for little time."""

from __future__ import annotations

from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.energy import model_words, prediction
from ptxstatic.rules.registry import Option, rule


@rule("PS501", "energy-saving-clocks", Severity.NOTE,
      "the predicted minimum-energy clocks save much energy for a small slowdown",
      options={"min-saving": Option(0.10, "report from this predicted energy saving against F_max"),
               "max-slowdown": Option(0.05, "at most this much slower than F_max (the clocks to choose from)")},
      opt_in=True)
def energy_saving_clocks(ctx: RuleContext) -> Iterator[Finding]:
    pred = prediction(ctx, ctx.option("max-slowdown"))
    if pred is None or not ctx.instructions:
        return
    best, ref = pred["min_energy"], pred["reference"]
    if best is None or best["saving"] < ctx.option("min-saving"):
        return
    span = ""
    if "saving_low" in best:
        span = f" (range {best['saving_low']:.1%} to {best['saving_high']:.1%})"
    message = (f"predicted minimum-energy clocks on {pred['gpu']}: memory {best['f_mem_mhz']} MHz, core "
               f"{best['f_core_mhz']} MHz save {best['saving']:.1%} energy{span} for {best['time_scaling'] - 1:+.1%} "
               f"time against F_max (memory {ref['f_mem_mhz']} MHz, core {ref['f_core_mhz']} MHz); "
               f"{model_words(pred)}")
    yield ctx.finding(0, message, properties={
        "gpu": pred["gpu"], "model": pred["model"]["name"], "f_mem_mhz": best["f_mem_mhz"],
        "f_core_mhz": best["f_core_mhz"], "saving": best["saving"], "time_scaling": best["time_scaling"],
        "energy_scaling": best["energy_scaling"], "reference": ref})
