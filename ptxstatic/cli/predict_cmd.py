"""``ptxstatic predict``: time, power and energy scaling of each kernel over a GPU's clock configurations,
the minimum-energy configuration and the Pareto set (numpy inference of shipped models; no torch)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ptxstatic.cli import options

DEFAULT_GPU = "gtxtitanx"


def parse_launch(spec: str, params: tuple[str, ...]):
    """``GRID/BLOCK`` (each X[,Y[,Z]]), inline JSON, or a JSON file, as in ``Launch.from_dict``."""
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.launch import Launch, dim3, parse_arg

    text = spec.strip()
    if text.startswith("{") or text.endswith(".json"):
        try:
            raw = json.loads(text if text.startswith("{") else Path(text).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PtxstaticError(f"bad --launch {spec!r}: {exc}") from None
        if not isinstance(raw, dict):
            raise PtxstaticError(f"bad --launch {spec!r}: expected a JSON object")
        launch = Launch.from_dict(raw)
    else:
        grid, sep, block = text.partition("/")
        if not sep:
            raise PtxstaticError(f"bad --launch {spec!r}: expected GRID/BLOCK, e.g. 1024/256 or 64,64/16,16")
        launch = Launch(dim3(grid), dim3(block))
    launch.args.update(dict(parse_arg(p) for p in params))
    return launch


@click.command()
@click.argument("file", metavar="FILE.ptx|FILE.cu")
@click.option("--gpu", metavar="NAME",
              help=f"GPU of the shipped models to use [default: {DEFAULT_GPU}, or the model's].")
@click.option("--model", "model_path", metavar="DIR",
              help="A model directory (DVFS model or absolute forest) or a directory of a GPU's models "
                   "(lstm/, forest_time/, forest_power/) instead of the shipped ones.")
@click.option("--kernel", "-k", metavar="NAME", help="Only this kernel (default: every kernel in FILE).")
@click.option("--launch", metavar="GRID/BLOCK|JSON",
              help="Launch configuration: the executed sequence is then estimated from static block counts "
                   "(loops repeated); without it the kernel's instructions are taken once, in program order.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A scalar kernel argument (with --launch).")
@click.option("--max-slowdown", metavar="PCT",
              help="Only consider configurations at most this much slower than F_max (e.g. 5%).")
@click.option("--energy-from", type=click.Choice(["model", "head", "time*power"]), default="model", show_default=True,
              help="Energy used for decisions: the energy head, predicted time × power, or what the model card chose.")
@options.output_format("text", "json")
@options.nvcc_flags
def predict(file: str, gpu: str | None, model_path: str | None, kernel: str | None, launch: str | None,
            params: tuple[str, ...], max_slowdown: str | None, energy_from: str, fmt: str, nvcc_flags: str) -> None:
    """Predict how each kernel of FILE scales with the GPU's memory and core clocks (DVFS model), and its
    absolute time and power at the reference clocks (extra-trees forests, where the GPU has them)."""
    from ptxstatic.cli.inputs import load
    from ptxstatic.decisions.clocks import ScalingTable, parse_fraction
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.registry import prediction_models
    from ptxstatic.report.dvfs_prediction import prediction_dict, prediction_text

    model, absolute = prediction_models(gpu, model_path, DEFAULT_GPU)
    first = model or absolute[0]
    gpu_name = str(first.card.get("gpu"))
    source = (model.card.get("energy_source", "head") if model else "") if energy_from == "model" else energy_from
    slowdown = parse_fraction(max_slowdown) if max_slowdown is not None else None
    the_launch = parse_launch(launch, params) if launch else None

    module = load(file, nvcc_flags, recover=False)
    kernels = [k for k in module.kernels if kernel is None or k.name == kernel]
    if not kernels:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise PtxstaticError(f"{file}: no kernel {kernel!r} (kernels: {names})" if kernel else f"{file}: no kernels")
    results = []
    for fn in kernels:
        seq, notes = _sequence(module, fn, the_launch)
        table = None
        if model is not None:
            unknown = model.predictor.unknown(seq) if model.kind == "lstm" else {}
            notes += [f"not seen in training, encoded as unknown: {f} {', '.join(v)}" for f, v in unknown.items()]
            table = ScalingTable.from_prediction(model.predictor.clocks, model.predictor.predict(seq), source)
        ref_values = {}
        for m in absolute:
            p = m.predictor
            if p.needs_launch and the_launch is None:
                notes.append(f"absolute {p.target} needs --launch: not predicted")
                continue
            value = p.predict_sequence(seq, (the_launch.threads_per_block, the_launch.blocks) if the_launch else None)
            ref_values["time_ms" if p.target == "time" else "power_w"] = round(value, 6)
        if ref_values and not all(m.predictor.needs_launch for m in absolute):
            notes.append("absolute values assume the training data's launches (the model has no launch features)")
        desc = {"kind": first.kind, "path": str(first.directory), "name": first.card.get("name", first.kind)}
        results.append(prediction_dict(fn.name, file, gpu_name, desc, table, slowdown, ref_values, notes,
                                       first.card.get("target_at")))
    if fmt == "json":
        click.echo(json.dumps(results if len(results) > 1 else results[0], indent=1))
    else:
        click.echo("\n\n".join(prediction_text(r) for r in results))


def _sequence(module, fn, launch) -> tuple[list, list[str]]:
    """The kernel's executed sequence (with a launch) or its static program order (without)."""
    from ptxstatic.analysis.sequence import kernel_sequence

    if launch is None:
        return kernel_sequence(fn), ["no --launch: every instruction counted once, in program order"]
    from ptxstatic.analysis.executed import executed_sequence
    from ptxstatic.counts.static.estimate import estimate_counts

    est = estimate_counts(module, fn.name, launch)
    seq = executed_sequence(module, fn.name, est.counts.counts)
    notes = [f"executed sequence from static block counts ({est.method})"]
    if not est.exact:
        notes.append("some block counts are estimates")
    return seq.compact, notes
