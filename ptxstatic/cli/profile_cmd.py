"""``ptxstatic profile``: run a kernel and its instrumented copy on the GPU and write per-block counts."""

from __future__ import annotations

import json

import click

from ptxstatic.cli import options
from ptxstatic.launch import Launch


@click.command()
@click.argument("source", metavar="MODULE")
@click.option("--kernel", "-k", required=True, metavar="NAME",
              help="The kernel: its C++ name (saxpy, 'reduce<float>') or PTX name.")
@options.launch_options(required=True, runs_kernels=True)
@options.instrument_options
@click.option("-o", "--output", metavar="OUT.json", help="Write the JSON here instead of stdout.")
@click.option("--cpu", metavar="SM", help="LLVM IR input: target CPU for lowering.")
@click.option("--emulate", is_flag=True,
              help="Run on the PTX emulator (the fake device) instead of a GPU: the same instrumented run, every "
                   "CTA, slower than a GPU by orders of magnitude, so for small launches.")
@options.nvcc_flags
def profile(source: str, kernel: str, launch: Launch, mode: str, stride: int, banks: int, output: str | None,
            cpu: str | None, emulate: bool, nvcc_flags: str) -> None:
    """Count basic-block executions of one launch of a kernel of MODULE (.ptx, .cu, or NVPTX LLVM IR .ll).

    Runs the original and the instrumented kernel on identical inputs, checks that they write the same
    buffers, and writes per-block counts, dynamic instruction counts per ISA group and the launch
    configuration as JSON. Exits 2 when no GPU is found, 1 when the outputs differ. `blocks`, `features`
    and `predict` take the counts as --profile, to split data-dependent branches as they went here.
    """

    from ptxstatic.cli.inputs import load, read_llvm_ir
    from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions
    from ptxstatic.counts.measured import profile as run_profile
    from ptxstatic.files import write_atomic
    from ptxstatic.gpu.open import open_device
    from ptxstatic.ptx.launch_binding import bind
    from ptxstatic.ptx.parser import parse_text

    opts = InstrumentOptions(mode, stride, banks)
    if source.endswith(".ll"):
        from ptxstatic.toolchain.llvm import DEFAULT_CPU, lower

        text = read_llvm_ir(source)
        module = parse_text(lower(text, source, cpu or DEFAULT_CPU), source)
    else:
        module = load(source, nvcc_flags, recover=False)
    bound = bind(module, kernel, launch)
    device = open_device("fake" if emulate else "cuda")
    try:
        result = run_profile(bound, device, opts)
    finally:
        device.close()
    text = json.dumps(result.to_dict(), indent=1) + "\n"
    if output:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
    if not result.outputs_match:
        click.echo(f"error: the instrumented kernel wrote different bytes to {', '.join(result.mismatches)}",
                   err=True)
        raise SystemExit(1)
