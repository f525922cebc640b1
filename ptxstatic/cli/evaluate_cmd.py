"""``ptxstatic evaluate``: trained models scored on a dataset (validation applications: every model side by
side, with per-sample errors and interval coverage), or a grouped cross-validation of freshly trained
models on a training set (``--cv K``, which trains and so needs the ``train`` extra)."""

from __future__ import annotations

from pathlib import Path

import click

from ptxstatic.cli import options

#: the models ``--cv`` retrains by default: every one whose cross-validation takes minutes, not hours
CV_MODELS = ("physical", "mean_surface", "group_forest", "wu_clusters")


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


def _saved_cv(models: tuple[str, ...], grouping: str) -> Path | None:
    """``DIR/cv/GROUPING.json`` of the one directory of models given with ``--cv``."""
    from ptxstatic.errors import PtxstaticError

    if not models:
        return None
    if len(models) > 1:
        raise PtxstaticError("with --cv, give at most one --model DIR (whose cv/ holds saved results)")
    saved = Path(models[0]) / "cv" / f"{grouping}.json"
    if not saved.is_file():
        raise PtxstaticError(f"{saved}: no saved cross-validation results grouped by {grouping}")
    return saved


@click.command()
@click.option("--model", "models", multiple=True, metavar="DIR",
              help="A model directory, or a directory of them (e.g. trained/gtxtitanx); repeatable. With --cv: "
                   "the directory whose cv/GROUPING.json gives saved rows for models not retrained.")
@click.option("--data", metavar="DB|FOLDER", type=click.Path(exists=True),
              help="Dataset file, or a folder in the gpuPTXModel layout (imported on the fly).")
@click.option("--fullpipe", metavar="FOLDER",
              help="Score the models through the whole pipeline instead: the applications of a full-pipeline "
                   "folder (manifest.json; their PTX and launches, predict per kernel, kernels combined) "
                   "against their measured surfaces (../realbenchmarks beside it).")
@click.option("--gpu", metavar="NAME", help="GPU to evaluate on (default: the model's, or the dataset's only GPU).")
@click.option("--cv", default=0, show_default=True, metavar="K",
              help="Cross-validate freshly trained models in K grouped folds of the data instead.")
@click.option("--cv-models", default=",".join(CV_MODELS), show_default=True, metavar="LIST",
              help="Models to cross-validate (with --cv): physical, lstm, lstm_paper, mean_surface, group_forest, "
                   "wu_clusters; 'forest' adds the nested CV of the absolute forests.")
@click.option("--grouping", type=click.Choice(["family", "benchmark"]), default="family", show_default=True,
              help="What cross-validation keeps on one side of a split: benchmark families or single benchmarks.")
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Folds trained at once (worker processes), with --cv.")
@click.option("--manifest", default="microbenchmarks/manifest.json", show_default=True, metavar="MANIFEST.json",
              help="With absolute time or board power models (trained/h200): the manifest the dataset's launches "
                   "come from.")
@click.option("--record", is_flag=True,
              help="Write each model's scores on the data into its card (evaluation.validation); not with --cv.")
@options.output_format("text", "json", "markdown")
def evaluate(models: tuple[str, ...], data: str | None, fullpipe: str | None, gpu: str | None, cv: int,
             cv_models: str, grouping: str, seed: int, jobs: int, manifest: str, record: bool, fmt: str) -> None:
    """Time, power and energy errors of the scaling factors over the clock configurations (MAPE, share of
    time within 10 %), the energy of the predicted minimum-energy configuration against F_max and against
    the true minimum, the coverage of the intervals, and per-sample errors; the training set's mean
    surface is always a row (with --data). With --fullpipe: the same figures for each application through the
    whole pipeline, kernels combined by launches x predicted time. Absolute time and board power models
    (trained/h200) are scored on a collect dataset of the manifest's launches: errors, and the share inside
    their 90 % interval."""
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.report.dvfs_evaluation import evaluation_markdown, evaluation_text
    from ptxstatic.report.json_doc import json_document

    if not models and cv <= 1:
        raise PtxstaticError("give --model (score trained models on the data) or --cv K (cross-validate)")
    if record and cv > 1:
        raise PtxstaticError("--record writes scores on held-out data into model cards: not with --cv")
    if (data is None) == (fullpipe is None):
        raise PtxstaticError("give one of --data (a dataset) and --fullpipe (a full-pipeline folder)")
    if fullpipe is not None:
        if cv > 1 or record:
            raise PtxstaticError("--fullpipe scores trained models: not with --cv or --record")
        results = _fullpipe(models, Path(fullpipe))
    else:
        results = _on_data(models, data, gpu, cv, cv_models, grouping, seed, jobs, record,  # type: ignore[arg-type]
                           Path(manifest))
    if fmt == "json":
        click.echo(json_document("evaluate", [], [], evaluation=results))
    elif fmt == "markdown":
        click.echo(evaluation_markdown(results))
    else:
        click.echo(evaluation_text(results))


def _loaded(models: tuple[str, ...]) -> list:
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.inference.loading import load_model

    loaded = [load_model(p) for p in _model_dirs(models)]
    if not loaded:
        raise PtxstaticError("no models found")
    gpus = {str(m.card.get("gpu")) for m in loaded}
    if len(gpus) > 1:
        raise PtxstaticError(f"the models are for different GPUs: {', '.join(sorted(gpus))}")
    return loaded


def _fullpipe(models: tuple[str, ...], folder: Path) -> dict:
    from ptxstatic.pipeline_evaluation import fullpipe_results
    from ptxstatic.report.progress import Progress

    loaded = [m for m in _loaded(models) if m.kind != "bottleneck"]
    with Progress() as bar:
        return fullpipe_results(folder, loaded, bar.step)


def _on_data(models: tuple[str, ...], data: str, gpu: str | None, cv: int, cv_models: str, grouping: str,
             seed: int, jobs: int, record: bool, manifest: Path) -> dict:
    from ptxstatic.dataset.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.evaluation.absolute import ABSOLUTE_KINDS, absolute_results
    from ptxstatic.models.inference.artifacts import read_card
    from ptxstatic.report.progress import Progress

    cards = [read_card(d)[1] for d in _model_dirs(models)]
    absolute = [c for c in cards if c.get("kind") in ABSOLUTE_KINDS]
    if absolute:
        if cv > 1 or record or len(absolute) < len(cards):
            raise PtxstaticError("absolute time and board power models are scored on their own: not with --cv, "
                                 "--record or DVFS models")
        with Progress() as bar:
            return absolute_results(absolute, Path(data), manifest, gpu, bar.say)
    with Progress() as bar:
        store = open_data(data, bar.importing)
        if cv > 1:
            from ptxstatic.models.training.cross_validation import cross_validation_results

            dataset = load_dataset(store, default_gpu(store, gpu))
            names = [n.strip() for n in cv_models.split(",") if n.strip()]
            results = cross_validation_results(dataset, names, cv, grouping, seed, jobs, bar.step,
                                               _saved_cv(models, grouping))
        else:
            from ptxstatic.models.evaluation.scoring import record_in_cards, shipped_results

            loaded = _loaded(models)
            dataset = load_dataset(store, default_gpu(store, gpu or str(loaded[0].card.get("gpu"))))
            results = shipped_results(dataset, loaded, bar.step)
            if record:
                for card in record_in_cards(results, loaded, dataset):
                    bar.say(f"recorded in {card}")
    return results
