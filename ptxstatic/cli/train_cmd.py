"""``ptxstatic train``: train a DVFS model or an absolute time/power forest on a dataset and write it,
with its model card, to a directory (torch / scikit-learn are needed here only)."""

from __future__ import annotations

import click

MODELS = ("lstm", "lstm_paper", "mean_surface", "group_forest", "wu_clusters", "forest")


@click.command()
@click.argument("model", type=click.Choice(MODELS))
@click.option("--data", required=True, metavar="DB|FOLDER",
              help="Dataset file, or a folder in the gpuPTXModel layout (imported on the fly).")
@click.option("--gpu", metavar="NAME", help="GPU whose measurements to train on (default: the dataset's only GPU).")
@click.option("--out", "out", required=True, metavar="DIR",
              help="Model directory to write (for forest: a directory that receives forest_time/ and forest_power/).")
@click.option("--cv", default=0, show_default=True, metavar="K",
              help="First run a grouped K-fold cross-validation and record its metrics in the model card.")
@click.option("--grouping", type=click.Choice(["benchmark", "family"]), default="benchmark", show_default=True,
              help="What cross-validation groups keep on one side of a split.")
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Cross-validation folds trained at once (processes).")
def train(model: str, data: str, gpu: str | None, out: str, cv: int, grouping: str, seed: int, jobs: int) -> None:
    """Train MODEL: lstm (tuned), lstm_paper (the paper's hyper-parameters), the mean_surface, group_forest
    and wu_clusters DVFS baselines, or forest (absolute time and power at the reference clocks)."""
    from pathlib import Path

    from ptxstatic.data.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.models.training import train_dvfs, train_forest
    from ptxstatic.report.progress import Progress

    with Progress() as bar:
        store = open_data(data, bar.importing)
        dataset = load_dataset(store, default_gpu(store, gpu))
        bar.say(f"{len(dataset)} benchmarks measured on {dataset.gpu} at {len(dataset.clocks)} clock configurations")
        if model == "forest":
            written = [train_forest(t, dataset, Path(out) / f"forest_{t}", cv=cv, grouping=grouping, seed=seed,
                                    progress=bar.step) for t in ("time", "power")]
        else:
            written = [train_dvfs(model, dataset, out, cv=cv, grouping=grouping, seed=seed, n_jobs=jobs,
                                  progress=bar.step)]
    for path in written:
        click.echo(str(path))
