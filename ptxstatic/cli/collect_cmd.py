"""``ptxstatic collect``: measure a benchmark manifest on a GPU into a SQLite dataset (docs/collect.md)."""

from __future__ import annotations

import click

from ptxstatic.cli import options
from ptxstatic.collect.measure import EXTRA_REPEATS, POWER_PRECISION, REPEATS
from ptxstatic.gpu.open import DEVICES
from ptxstatic.limits import DEVICE_CALL_TIMEOUT_S


@click.command()
@click.option("--manifest", default="microbenchmarks/manifest.json", show_default=True, metavar="MANIFEST.json",
              help="Benchmarks and launches to measure.")
@click.option("--db", required=True, metavar="DATASET.sqlite", help="Dataset file (created if missing, resumed).")
@click.option("--gpu", "gpu_name", required=True, metavar="NAME", help="The GPU's name in the dataset, e.g. h100.")
@click.option("--device", type=click.Choice(DEVICES), default="cuda", show_default=True,
              help="cuda: the real GPU. fake: a deterministic stand-in for tests, no hardware.")
@click.option("--device-index", default=0, show_default=True, help="CUDA device number.")
@click.option("--clocks", metavar="all|MEM:CORE,...",
              help="Sweep applications clocks (needs permission). Without it no GPU setting is ever changed.")
@click.option("--repeat-seconds", type=float, metavar="S",
              help="Least time of repeated launches per sample [default: the manifest's min_seconds].")
@click.option("--only", metavar="PATTERN[,PATTERN]", help="Only benchmarks whose names match (shell patterns).")
@click.option("--retry-failed", is_flag=True, help="Measure again the samples recorded as failed.")
@click.option("--arch", metavar="sm_XX", help="Compile for this architecture [default: the device's].")
@click.option("--timeout", "timeout_s", default=DEVICE_CALL_TIMEOUT_S, show_default=True,
              help="Seconds a single device call may take before the kernel is taken to hang.")
@click.option("--jobs", "-j", type=int, help="Parallel source preparations (nvcc, ptxas) [default: CPU count].")
@click.option("--budget", "budget_s", type=float, metavar="SECONDS",
              help="Finish within this many seconds: the most important samples first, each started only when it "
                   "is expected to end in time; rerun to continue.")
@click.option("--power-precision", type=float, default=POWER_PRECISION, show_default=True, metavar="FRACTION",
              help=f"Repeat a sample's loop until {REPEATS} repeats agree on power within this fraction (at most "
                   f"{REPEATS + EXTRA_REPEATS} repeats).")
@click.option("--counters", is_flag=True,
              help="Instead of time and power: run each launch once under Nsight Compute (ncu, clocks left as they "
                   "are) and keep its memory counters and duration in the dataset's collect_counters table.")
@click.option("--counters-budget", type=float, default=600.0, show_default=True, metavar="S",
              help="--counters: start no launch after this many seconds (the rest is measured by a rerun).")
@options.output_format("text", "json")
def collect(manifest: str, db: str, gpu_name: str, device: str, device_index: int, clocks: str | None,
            repeat_seconds: float | None, only: str | None, retry_failed: bool, arch: str | None, timeout_s: float,
            jobs: int | None, budget_s: float | None, power_precision: float, counters: bool, counters_budget: float,
            fmt: str) -> None:
    """Measure time, power and energy of every benchmark launch in MANIFEST on a GPU into DATASET.

    Once per run the board is probed: how often its energy counter updates and how long its power reading
    takes to follow a kernel. Per sample: one instrumented run for block counts and features (first time
    per launch), a timed warm-up, then repeats of launches timed with CUDA events (at least --repeat-seconds
    together) until their power agrees, the board traced throughout; the power comes from the energy counter
    between its updates. Every sample is committed on its own; rerunning the same command resumes where a
    run stopped. Prints what this run wrote and the statistics of the GPU's samples in the dataset.
    """
    import time

    started = time.monotonic()
    import signal
    from pathlib import Path

    from ptxstatic.collect.runner import CollectOptions
    from ptxstatic.collect.runner import collect as run_collect
    from ptxstatic.dataset.samples import dataset_stats
    from ptxstatic.dataset.store import DatasetStore
    from ptxstatic.gpu.device import LIMITING
    from ptxstatic.report.collect_text import collect_text
    from ptxstatic.report.json_doc import json_document
    from ptxstatic.report.progress import Progress

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    if counters:
        _counters(manifest, db, gpu_name, device, arch, only, counters_budget, jobs, fmt)
        return
    opts = CollectOptions(Path(manifest), Path(db), gpu_name, device, device_index, clocks, repeat_seconds, only,
                          retry_failed, arch, timeout_s, jobs, budget_s, power_precision, started)
    with Progress(prefix="collect: ") as ui:
        try:
            summary = run_collect(opts, ui)
        except KeyboardInterrupt:
            ui.say(f"interrupted; every finished sample is in {db}: run the same command again to resume")
            raise SystemExit(130) from None
    with DatasetStore(db) as store:
        stats = dataset_stats(store, gpu_name, LIMITING)
    if fmt == "json":
        click.echo(json_document("collect", [], [], run=summary.__dict__, dataset=stats))
        return
    click.echo(collect_text(summary, stats))


def _counters(manifest: str, db: str, gpu_name: str, device: str, arch: str | None, only: str | None,
              budget: float, jobs: int | None, fmt: str) -> None:
    from pathlib import Path

    from ptxstatic.collect.counters import CountersOptions, collect_counters
    from ptxstatic.gpu.open import open_device
    from ptxstatic.report.json_doc import json_document
    from ptxstatic.report.progress import Progress

    if arch is None:
        opened = open_device(device)
        try:
            arch = opened.gpu.info().arch
        finally:
            opened.close()
    opts = CountersOptions(Path(manifest), Path(db), gpu_name, arch, device, only, budget, jobs=jobs)
    with Progress(prefix="collect --counters: ") as ui:
        result = collect_counters(opts, ui.say)
    if fmt == "json":
        run = {"written": result["measured"], "already": result["already"], "failed": result["failed"],
               "tool": result["tool"], "metrics": result["metrics"], "counters": True}
        click.echo(json_document("collect", [], [], run=run, dataset={"counters": result["in_dataset"]}))
        return
    click.echo(f"{result['measured']} launches measured under {result['tool']} into {db}; "
               f"{len(result['failed'])} failed")
    for failure in result["failed"]:
        click.echo(f"  failed: {failure}")
