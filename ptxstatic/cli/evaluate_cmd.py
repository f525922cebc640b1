"""``ptxstatic evaluate``: the paper's metrics for shipped models on a dataset, or a grouped
cross-validation of every model side by side (``--cv K``, which trains and so needs torch/scikit-learn)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ptxstatic.cli import options

CV_MODELS = ("lstm", "lstm_paper", "mean_surface", "group_forest", "wu_clusters")


def _model_dirs(paths: tuple[str, ...]) -> list[Path]:
    """Model directories named directly, or every model directory under a directory of models."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "card.json").is_file() or p.name == "card.json":
            out.append(p)
        elif p.is_dir():
            out += sorted(d for d in p.iterdir() if (d / "card.json").is_file())
        else:
            from ptxstatic.errors import PtxstaticError

            raise PtxstaticError(f"{p}: not a model directory")
    return out


@click.command()
@click.option("--model", "models", multiple=True, metavar="DIR",
              help="A shipped model directory, or a directory of them (e.g. trained/gtxtitanx); repeatable.")
@click.option("--data", required=True, metavar="DB|FOLDER",
              help="Dataset file, or a folder in the gpuPTXModel layout (imported on the fly).")
@click.option("--gpu", metavar="NAME", help="GPU to evaluate on (default: the model's, or the dataset's only GPU).")
@click.option("--cv", default=0, show_default=True, metavar="K",
              help="Instead of shipped models, cross-validate freshly trained models in K grouped folds.")
@click.option("--cv-models", default=",".join(CV_MODELS), show_default=True, metavar="LIST",
              help="Models to cross-validate (with --cv); 'forest' adds the nested CV of the absolute forests.")
@click.option("--grouping", type=click.Choice(["benchmark", "family"]), default="benchmark", show_default=True,
              help="What cross-validation groups keep on one side of a split.")
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Folds trained at once (worker processes), with --cv.")
@options.output_format("text", "json", "markdown")
def evaluate(models: tuple[str, ...], data: str, gpu: str | None, cv: int, cv_models: str, grouping: str,
             seed: int, jobs: int, fmt: str) -> None:
    """Mean absolute error of scaling factors (in % and in points), share within 10 %, and the energy of the
    predicted minimum-energy configuration against F_max and against the true minimum."""
    from ptxstatic.dataset.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.report.dvfs_evaluation import evaluation_markdown, evaluation_text
    from ptxstatic.report.progress import Progress

    if bool(models) == (cv > 1):
        raise PtxstaticError("give either --model (evaluate shipped models) or --cv K (cross-validate), not both")
    with Progress() as bar:
        store = open_data(data, bar.importing)
        if cv > 1:
            from ptxstatic.models.training import cross_validation_results

            dataset = load_dataset(store, default_gpu(store, gpu))
            names = [n.strip() for n in cv_models.split(",") if n.strip()]
            results = cross_validation_results(dataset, names, cv, grouping, seed, jobs, bar.step)
        else:
            from ptxstatic.models.evaluation import shipped_results
            from ptxstatic.models.registry import load_model

            loaded = [load_model(p) for p in _model_dirs(models)]
            if not loaded:
                raise PtxstaticError("no models found")
            gpus = {str(m.card.get("gpu")) for m in loaded}
            if len(gpus) > 1:
                raise PtxstaticError(f"the models are for different GPUs: {', '.join(sorted(gpus))}")
            dataset = load_dataset(store, default_gpu(store, gpu or gpus.pop()))
            results = shipped_results(dataset, loaded, bar.step)
    if fmt == "json":
        click.echo(json.dumps(results, indent=1))
    elif fmt == "markdown":
        click.echo(evaluation_markdown(results))
    else:
        click.echo(evaluation_text(results))
