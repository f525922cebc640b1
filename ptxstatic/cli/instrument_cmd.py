"""``ptxstatic instrument``: insert basic-block counters into PTX (or NVPTX LLVM IR) and write the counter map."""

from __future__ import annotations

import click

from ptxstatic.cli import options


@click.command()
@click.argument("source", metavar="INPUT")
@click.option("-o", "--output", required=True, metavar="OUT.ptx", help="Instrumented PTX.")
@click.option("--kernel", "-k", "kernels", multiple=True, metavar="NAME",
              help="Only this kernel and the functions it calls, by C++ or PTX name (repeatable) [default: all].")
@click.option("--map", "map_path", metavar="OUT.json", help="Counter map [default: OUT.ptx with .json].")
@options.instrument_options
@click.option("--cpu", metavar="SM", help="LLVM IR input: target CPU [default: the IR's target-cpu, else sm_80].")
@click.option("--check", is_flag=True, help="Assemble the result with ptxas for its .target; exit 2 if it fails, "
                                           "naming the input's lines when the input itself does not assemble.")
@options.nvcc_flags
def instrument(source: str, output: str, kernels: tuple[str, ...], map_path: str | None, mode: str, stride: int,
               banks: int, cpu: str | None, check: bool, nvcc_flags: str) -> None:
    """Count basic-block executions: rewrite INPUT (.ptx, .cu, or NVPTX LLVM IR .ll) so that every block of
    every kernel and device function adds the threads entering it to its own 64-bit counter.
    """
    from pathlib import Path

    from ptxstatic.cli.inputs import load, read_llvm_ir
    from ptxstatic.counts.instrumentation.assembles import check_assembles
    from ptxstatic.counts.instrumentation.llvm_ir import instrument_ir
    from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
    from ptxstatic.files import write_atomic
    from ptxstatic.ptx.kernels import find_kernels
    from ptxstatic.ptx.parser import parse_text
    from ptxstatic.ptx.printer import module as print_module
    from ptxstatic.report.words import counted
    from ptxstatic.toolchain.ptxas import assemble, target_arch

    original = None  # (PTX text, the name its lines are reported under)
    if source.endswith((".ll", ".bc")):
        if kernels:
            raise click.UsageError("--kernel selects kernels of PTX or .cu input; LLVM IR is instrumented whole")
        result = instrument_ir(read_llvm_ir(source), source, InstrumentOptions(mode, stride, banks), cpu)
        ptx, cmap = result.text, result.counters
    else:
        module = load(source, nvcc_flags, recover=False)
        selected = tuple(dict.fromkeys(k.name for name in kernels for k in find_kernels(module, name)))
        done = instrument(module, InstrumentOptions(mode, stride, banks, kernels=selected))
        ptx, cmap = done.text, done.counters
        original = ((Path(source).read_text(), source) if source.endswith(".ptx")
                    else (print_module(module), f"{source} (PTX from nvcc)"))
    map_out = map_path or str(Path(output).with_suffix(".json"))
    write_atomic(output, ptx)
    cmap.save(map_out)
    if check:
        arch = target_arch(parse_text(ptx, output))
        if original is None:
            assemble(ptx, arch, name=output)
        else:
            check_assembles(*original, ptx, output, arch)
    functions = {c.function for c in cmap.counters}
    click.echo(f"{source}: {counted(len(cmap.counters), 'block counter')} in {counted(len(functions), 'function')} "
               f"({cmap.route} route, mode {cmap.mode}); wrote {output} and {map_out}", err=True)
