"""``ptxstatic profile``: run a kernel and its instrumented copy on the GPU and write per-block counts."""

from __future__ import annotations

import json

import click

from ptxstatic.cli import options
from ptxstatic.cli.instrument_cmd import instrument_options


@click.command()
@click.argument("source", metavar="MODULE")
@click.option("--kernel", "-k", required=True, metavar="NAME", help="The kernel (.entry) to launch.")
@click.option("--grid", default="1", show_default=True, metavar="X[,Y,Z]", help="CTAs per grid dimension.")
@click.option("--block", default="1", show_default=True, metavar="X[,Y,Z]", help="Threads per CTA dimension.")
@click.option("--shared", "shared_bytes", default=0, show_default=True, help="Dynamic shared memory (bytes).")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="A parameter by name or index: n=4096, alpha=1.5, x=buf:f32:4096[:FILL[:V]][:out].")
@click.option("--launch", "launch_file", metavar="SPEC.json", help="A launch spec (Launch.to_dict form).")
@instrument_options
@click.option("-o", "--output", metavar="OUT.json", help="Write the JSON here instead of stdout.")
@click.option("--cpu", metavar="SM", help="LLVM IR input: target CPU for lowering.")
@options.nvcc_flags
def profile(source: str, kernel: str, grid: str, block: str, shared_bytes: int, args: tuple[str, ...],
            launch_file: str | None, mode: str, stride: int, banks: int, output: str | None, cpu: str | None,
            nvcc_flags: str) -> None:
    """Count basic-block executions of one launch of a kernel of MODULE (.ptx, .cu, or NVPTX LLVM IR .ll).

    Runs the original and the instrumented kernel on identical inputs, checks that they write the same
    buffers, and writes per-block counts, dynamic instruction counts per ISA group and the launch
    configuration as JSON. Exits 2 when no GPU is found, 1 when the outputs differ.
    """
    from pathlib import Path

    from ptxstatic.cli.inputs import load
    from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions
    from ptxstatic.counts.measured import profile as run_profile
    from ptxstatic.errors import PtxstaticError
    from ptxstatic.files import write_atomic
    from ptxstatic.launch import Launch, dim3, parse_arg
    from ptxstatic.ptx.parser import parse_text

    launch = Launch(dim3(grid), dim3(block), shared_bytes)
    if launch_file:
        try:
            launch = Launch.from_dict(json.loads(Path(launch_file).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise PtxstaticError(f"{launch_file}: cannot read the launch spec: {exc}") from None
    launch.args.update(dict(parse_arg(a) for a in args))
    opts = InstrumentOptions(mode, stride, banks)
    if source.endswith(".ll"):
        from ptxstatic.toolchain.llvm import DEFAULT_CPU, lower

        try:
            text = Path(source).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise PtxstaticError(f"{source}: cannot read LLVM IR text: {exc}") from None
        module = parse_text(lower(text, source, cpu or DEFAULT_CPU), source)
    else:
        module = load(source, nvcc_flags, recover=False)
    result = run_profile(module, kernel, launch, opts)
    text = json.dumps(result.to_dict(), indent=1) + "\n"
    if output:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
    if not result.outputs_match:
        click.echo(f"error: the instrumented kernel wrote different bytes to {', '.join(result.mismatches)}",
                   err=True)
        raise SystemExit(1)
