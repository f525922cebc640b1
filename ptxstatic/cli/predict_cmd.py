"""``ptxstatic predict``: time, power and energy scaling of each kernel over a GPU's clock configurations,
the minimum-energy configuration and the Pareto set (numpy inference of shipped models; no torch)."""

from __future__ import annotations

import json

import click

from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("file", metavar="FILE.ptx|FILE.cu")
@click.option("--gpu", metavar="NAME", help="GPU of the shipped models to use [default: gtxtitanx, or the model's].")
@click.option("--model", "model_path", metavar="DIR",
              help="A model directory (DVFS model or absolute forest) or a directory of a GPU's models "
                   "(lstm/, forest_time/, forest_power/) instead of the shipped ones.")
@click.option("--kernel", "-k", metavar="NAME", help="Only this kernel (default: every kernel in FILE).")
@options.launch_options(required=False)
@click.option("--max-slowdown", metavar="PCT",
              help="Only consider configurations at most this much slower than F_max (e.g. 5%).")
@click.option("--energy-from", type=click.Choice(["model", "head", "time*power"]), default="model", show_default=True,
              help="Energy used for decisions: the energy head, predicted time × power, or what the model card chose.")
@options.output_format("text", "json")
@options.nvcc_flags
def predict(file: str, gpu: str | None, model_path: str | None, kernel: str | None, launch: Launch | None,
            max_slowdown: str | None, energy_from: str, fmt: str, nvcc_flags: str) -> None:
    """Predict how each kernel of FILE scales with the GPU's memory and core clocks (DVFS model), and its
    absolute time and power at the reference clocks (extra-trees forests, where the GPU has them).

    With a launch (--launch GRID/BLOCK, or --grid/--block) the executed sequence is estimated from static
    block counts (loops repeated); without one, the kernel's instructions are taken once, in program order.
    """
    from ptxstatic.cli.inputs import load
    from ptxstatic.decisions.clocks import parse_fraction
    from ptxstatic.predict import load_models, predict_module
    from ptxstatic.report.dvfs_prediction import prediction_text

    models = load_models(gpu, model_path)
    slowdown = parse_fraction(max_slowdown) if max_slowdown is not None else None
    module = load(file, nvcc_flags, recover=False)
    results = predict_module(module, models, launch, kernel=kernel, max_slowdown=slowdown, energy_from=energy_from)
    if fmt == "json":
        click.echo(json.dumps(results if len(results) > 1 else results[0], indent=1))
    else:
        click.echo("\n\n".join(prediction_text(r) for r in results))
