"""``ptxstatic predict``: time, power and energy scaling of each kernel over a GPU's clock configurations with
intervals, the minimum-energy configuration with its expected saving, the Pareto set, and the bottleneck
estimate of absolute time given a launch (numpy inference of shipped models; no torch)."""

from __future__ import annotations

import click

from ptxstatic.block_counts import BlockCounts
from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("file", metavar="FILE.ptx|FILE.cu")
@click.option("--gpu", metavar="NAME", help="GPU of the shipped models to use [default: gtxtitanx, or the model's].")
@click.option("--model", "model_path", metavar="DIR",
              help="A DVFS model directory (e.g. trained/gtxtitanx/wu_clusters), or a GPU's directory of models "
                   "(its physical/ is used), instead of the shipped default.")
@click.option("--kernel", "-k", metavar="NAME",
              help="Only this kernel, by C++ name (saxpy, 'reduce<float>') or PTX name [default: every kernel].")
@options.launch_options(required=False)
@click.option("--max-slowdown", metavar="PCT",
              help="Only consider configurations at most this much slower than F_max (e.g. 5%).")
@options.output_format("text", "json")
@options.max_seconds
@options.measured_profile
@options.nvcc_flags
def predict(file: str, gpu: str | None, model_path: str | None, kernel: str | None, launch: Launch | None,
            max_slowdown: str | None, fmt: str, max_seconds: float, profile: BlockCounts | None,
            nvcc_flags: str) -> None:
    """Predict how each kernel of FILE scales with the GPU's memory and core clocks (by default the physical
    DVFS model), with intervals and an out-of-distribution report, and which clocks use least energy.

    With a launch (--launch GRID/BLOCK, or --grid/--block) the executed sequence is estimated from static
    block counts (loops repeated), and absolute time is estimated from the launch's memory traffic and work
    (the bottleneck model over the GPU's published figures); without one, the kernel's program order is
    used, loop bodies weighted by depth.
    """
    from ptxstatic.cli.inputs import load
    from ptxstatic.decisions.clock_choice import parse_fraction
    from ptxstatic.predict import load_models, predict_module
    from ptxstatic.report.dvfs_prediction import prediction_text
    from ptxstatic.report.json_doc import json_document, kernel_entry

    models = load_models(gpu, model_path)
    slowdown = parse_fraction(max_slowdown) if max_slowdown is not None else None
    module = load(file, nvcc_flags, recover=False, kernel=kernel)
    results = predict_module(module, models, launch, kernel=kernel, max_slowdown=slowdown, max_seconds=max_seconds,
                             profile=profile)
    if fmt == "json":
        click.echo(json_document("predict", [kernel_entry(r["file"], r["kernel"], r) for r in results], []))
    else:
        click.echo("\n\n".join(prediction_text(r) for r in results))
