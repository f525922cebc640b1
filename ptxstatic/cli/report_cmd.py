"""``ptxstatic report``: one self-contained HTML page of a file's kernels: clock-scaling plots, the
basic-block graph with estimated counts, findings with their rule pages and the model card."""

from __future__ import annotations

import click

from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("file", metavar="FILE.cu|FILE.ptx", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Directory to write FILE's page to (DIR/<file stem>.html).")
@click.option("--kernel", "-k", metavar="NAME", help="Only this kernel, by C++ or PTX name [default: every kernel].")
@click.option("--gpu", metavar="NAME", help="GPU of the shipped models to use [default: gtxtitanx].")
@click.option("--model", "model_path", metavar="DIR", help="A DVFS model directory instead of the shipped default.")
@options.launch_options(required=False)
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Use this ptxstatic.toml / pyproject.toml instead of the one found from FILE.")
@click.option("--nvcc-flags", metavar="FLAGS",
              help="nvcc flags when compile_commands.json does not list FILE [default: the configuration's "
                   "nvcc-flags, else -arch=sm_80 -lineinfo].")
def report(file: str, out_dir: str, kernel: str | None, gpu: str | None, model_path: str | None,
           launch: Launch | None, config_file: str | None, nvcc_flags: str | None) -> None:
    """Write an HTML report of every kernel of FILE to DIR: predicted speed-up against energy over every
    clock configuration (Pareto set, minimum-energy and default clocks marked), time, power and energy
    heatmaps, the basic-block graph coloured by estimated executions with loops and links to the .cu lines,
    the findings of `ptxstatic check` with their rule pages, and the model's card. The page needs no network.

    With a launch (--launch GRID/BLOCK, or --grid/--block) blocks are coloured by static block counts and the
    prediction uses the executed sequence; without one, by loop depth (see `ptxstatic predict`).
    """
    from ptxstatic.config import config_for, load_config
    from ptxstatic.predict import load_models
    from ptxstatic.report.file_report import file_report
    from ptxstatic.report.html_page import require_libraries, write_report

    require_libraries()
    config = load_config(config_file) if config_file else config_for(file)
    data = file_report(file, config, load_models(gpu, model_path), launch, kernel=kernel, nvcc_flags=nvcc_flags)
    click.echo(write_report(data, out_dir))
