"""``ptxstatic train``: train a DVFS model (calibrated: intervals, out-of-distribution report, shrinkage)
or an absolute time/power forest on a dataset and write it, with its model card, to a directory (torch,
scikit-learn and scipy are needed here only)."""

from __future__ import annotations

import click

MODELS = ("physical", "lstm", "lstm_paper", "mean_surface", "group_forest", "wu_clusters", "forest", "bottleneck",
          "power")


def _read_results(paths: tuple[str, ...]) -> list[dict]:
    import json
    from pathlib import Path

    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.training.cross_validation import evaluation_results

    out = []
    for p in paths:
        try:
            out.append(evaluation_results(json.loads(Path(p).read_text())))
        except (OSError, json.JSONDecodeError, PtxstaticError) as exc:
            raise PtxstaticError(f"{p}: cannot read cross-validation results ({exc})") from None
    return out


@click.command()
@click.argument("model", type=click.Choice(MODELS))
@click.option("--data", "data_paths", required=True, multiple=True, metavar="DB|FOLDER", type=click.Path(exists=True),
              help="Dataset file, or a folder in the gpuPTXModel layout (imported on the fly); bottleneck and "
                   "power take several collect datasets (repeat the option).")
@click.option("--counters", multiple=True, metavar="DB", type=click.Path(exists=True, dir_okay=False),
              help="bottleneck: datasets of hardware counters (`collect --counters`), whose durations add the "
                   "launches the collect datasets lack.")
@click.option("--manifest", default="microbenchmarks/manifest.json", show_default=True, metavar="MANIFEST.json",
              help="bottleneck, power: the manifest the measured launches come from.")
@click.option("--gpu", metavar="NAME", help="GPU whose measurements to train on (default: the dataset's only GPU).")
@click.option("--out", "out", required=True, metavar="DIR",
              help="Model directory to write (for forest: a directory that receives forest_time/ and forest_power/).")
@click.option("--cv", default=0, show_default=True, metavar="K",
              help="First cross-validate in K grouped folds and record the metrics in the model card.")
@click.option("--cv-from", "cv_from", multiple=True, metavar="RESULTS.json",
              help="Take the card's cross-validation metrics from `ptxstatic evaluate --cv K --format json` output "
                   "(repeatable: one file per grouping).")
@click.option("--grouping", type=click.Choice(["family", "benchmark"]), default="family", show_default=True,
              help="What cross-validation (--cv) keeps on one side of a split.")
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Cross-validation folds trained at once (processes).")
def train(model: str, data_paths: tuple[str, ...], counters: tuple[str, ...], manifest: str, gpu: str | None,
          out: str, cv: int, cv_from: tuple[str, ...], grouping: str, seed: int, jobs: int) -> None:
    """Train MODEL: physical (the default of predict), lstm (tuned), lstm_paper (the paper's
    hyper-parameters), the mean_surface, group_forest and wu_clusters DVFS baselines, forest (absolute
    time and power at the reference clocks, from per-launch features where the data has launches),
    bottleneck (the absolute time model's parameters, fitted on a GPU's measured launches of a manifest), or
    power (the board power model's weights, fitted on the same launches' measured power at default clocks,
    with the GPU's shipped bottleneck parameters giving the times)."""
    from pathlib import Path

    if model in ("bottleneck", "power"):
        _train_absolute(model, data_paths, counters, manifest, gpu, out)
        return
    if len(data_paths) != 1:
        raise click.BadParameter(f"{model} trains on one dataset", param_hint="--data")
    data = data_paths[0]

    from ptxstatic.dataset.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.models.training.cross_validation import cross_validation_results
    from ptxstatic.models.training.train import cv_metrics_from, train_dvfs, train_forest
    from ptxstatic.report.progress import Progress

    if cv > 1 and cv_from:
        raise PtxstaticError("give --cv or --cv-from, not both")
    with Progress() as bar:
        store = open_data(data, bar.importing)
        dataset = load_dataset(store, default_gpu(store, gpu))
        bar.say(f"{len(dataset)} benchmarks measured on {dataset.gpu} at {len(dataset.clocks)} clock configurations")
        results = _read_results(cv_from)
        if cv > 1:
            results = [cross_validation_results(dataset, [model], cv, grouping, seed, jobs, bar.step)]
        if model == "forest":
            written = [
                train_forest(t, dataset, Path(out) / f"forest_{t}", seed=seed, progress=bar.step,
                             cv_metrics=cv_metrics_from(results[0], f"forest_{t}", dataset) if results else None)
                for t in ("time", "power")
            ]
        else:
            evaluation = {f"{r.get('grouping')}_cv": cv_metrics_from(r, model, dataset) for r in results}
            written = [train_dvfs(model, dataset, out, evaluation=evaluation, seed=seed, progress=bar.step)]
    for path in written:
        click.echo(str(path))


def _train_absolute(model: str, data: tuple[str, ...], counters: tuple[str, ...], manifest: str, gpu: str | None,
                    out: str) -> None:
    """bottleneck or power: both fitted on the measured launches of a manifest, as ``predict`` sees them."""
    from pathlib import Path

    from ptxstatic.hardware.figures import gpu_figures
    from ptxstatic.models.evaluation.measured_launches import measured_powers, observations, power_observations
    from ptxstatic.models.inference.loading import bottleneck_parameters
    from ptxstatic.models.training.board_power import train_power
    from ptxstatic.models.training.bottleneck import train_bottleneck
    from ptxstatic.report.progress import Progress

    if gpu is None:
        raise click.BadParameter(f"{model} needs the GPU the measurements are of", param_hint="--gpu")
    figures = gpu_figures(gpu)
    if model == "power":
        counters = ()  # counters' launches have no board power
    sources = {Path(p).name: "collect" for p in data} | {Path(p).name: "counters" for p in counters}
    with Progress() as bar:
        obs = observations(Path(manifest), [Path(p) for p in data], [Path(p) for p in counters], figures,
                           progress=bar.say)
        bar.say(f"{len(obs)} measured launches of {figures.name}")
        if model == "bottleneck":
            written = train_bottleneck(obs, figures, Path(out), sources, progress=bar.say)
        else:
            pobs = power_observations(obs, measured_powers([Path(p) for p in data], figures.name))
            bar.say(f"{len(pobs)} of them with usable board power")
            written = train_power(pobs, figures, bottleneck_parameters(figures.name), Path(out), sources,
                                  progress=bar.say)
    click.echo(str(written))
