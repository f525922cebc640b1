"""``ptxstatic instrument``: insert basic-block counters into PTX (or NVPTX LLVM IR) and write the counter map."""

from __future__ import annotations

import click

from ptxstatic.cli import options


@click.command()
@click.argument("source", metavar="INPUT")
@click.option("-o", "--output", required=True, metavar="OUT.ptx", help="Instrumented PTX.")
@click.option("--map", "map_path", metavar="OUT.json", help="Counter map [default: OUT.ptx with .json].")
@options.instrument_options
@click.option("--cpu", metavar="SM", help="LLVM IR input: target CPU [default: the IR's target-cpu, else sm_80].")
@click.option("--check", is_flag=True, help="Assemble the result with ptxas for its .target; exit 2 if it fails.")
@options.nvcc_flags
def instrument(source: str, output: str, map_path: str | None, mode: str, stride: int, banks: int,
               cpu: str | None, check: bool, nvcc_flags: str) -> None:
    """Count basic-block executions: rewrite INPUT (.ptx, .cu, or NVPTX LLVM IR .ll) so that every block of
    every kernel and device function adds the threads entering it to its own 64-bit counter.
    """
    from pathlib import Path

    from ptxstatic.cli.inputs import load, read_llvm_ir
    from ptxstatic.counts.instrumentation.llvm_ir import instrument_ir
    from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
    from ptxstatic.files import write_atomic
    from ptxstatic.ptx.parser import parse_text
    from ptxstatic.toolchain.ptxas import assemble, target_arch

    opts = InstrumentOptions(mode, stride, banks)
    if source.endswith((".ll", ".bc")):
        text = read_llvm_ir(source)
        result = instrument_ir(text, source, opts, cpu)
        ptx, cmap = result.text, result.counters
    else:
        done = instrument(load(source, nvcc_flags, recover=False), opts)
        ptx, cmap = done.text, done.counters
    if check:
        assemble(ptx, target_arch(parse_text(ptx, output)))
    map_out = map_path or str(Path(output).with_suffix(".json"))
    write_atomic(output, ptx)
    cmap.save(map_out)
    functions = {c.function for c in cmap.counters}
    click.echo(f"{source}: {len(cmap.counters)} block counters in {len(functions)} functions "
               f"({cmap.route} route, mode {cmap.mode}); wrote {output} and {map_out}", err=True)
