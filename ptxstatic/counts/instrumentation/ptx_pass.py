"""CUDA-Flux-style basic-block counters, inserted into a parsed PTX module.

Every basic block (``build_cfg``) of every function with a body, kernels and device functions alike, gets a
counter. At the block's start (after its labels, before its first instruction) a nested ``{ }`` scope lets
the lowest active lane of each warp add the warp's active-lane count (``activemask`` + ``popc``) to the
block's 64-bit counter with one ``red.global.add.u64``, so a counter ends as the number of threads that
entered the block, summed over all threads, like CUDA Flux. Counters are banked by ``%smid`` to spread the
atomics. The device-side pieces are the PTX templates under ``instrumentation/``; they are parsed with the
project's own parser and the result is printed with :mod:`ptxstatic.ptx.printer`.

Modes: ``all`` (every CTA), ``sample`` (CTAs whose linear id is a multiple of ``stride``; counts are then
extrapolated by the grid ratio on read-out) and ``warp`` (only the first warp of CTA 0: per-warp counts).
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache, cached_property
from pathlib import Path

import networkx as nx

from ptxstatic.analysis.cfg import BasicBlock, build_cfg, call_graph
from ptxstatic.counts.instrumentation.counter_map import MODES, Counter, CounterMap
from ptxstatic.errors import PtxstaticError
from ptxstatic.package_data import data_path
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_text
from ptxstatic.ptx.printer import module as print_module
from ptxstatic.toolchain.ptxas import target_arch

SYMBOL = "__ptxstatic_counters"
MIN_SM = 70  # activemask
MIN_VERSION = (6, 2)  # activemask


@dataclass(frozen=True)
class InstrumentOptions:
    mode: str = "all"  # one of MODES
    stride: int = 1  # sample mode: count only CTAs whose linear id is a multiple of this
    banks: int = 16  # counter banks (a power of two); a warp uses bank %smid % banks
    symbol: str = SYMBOL  # name of the module-scope counter array
    kernels: tuple[str, ...] = ()  # PTX names of the kernels to count (and the functions they reach); () all

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise PtxstaticError(f"bad instrumentation mode {self.mode!r}: one of {', '.join(MODES)}")
        if self.banks < 1 or self.banks > 1024 or self.banks & (self.banks - 1):
            raise PtxstaticError(f"bad bank count {self.banks}: a power of two from 1 to 1024")
        if self.stride < 1:
            raise PtxstaticError(f"bad sample stride {self.stride}: a positive integer")
        if self.mode != "sample" and self.stride != 1:
            raise PtxstaticError("a sample stride needs --mode sample")
        if not re.fullmatch(r"[A-Za-z_][\w$]*", self.symbol):
            raise PtxstaticError(f"bad counter symbol {self.symbol!r}")


@dataclass
class Instrumented:
    """The instrumented module and the map from counter index to block."""

    module: A.Module
    counters: CounterMap

    @cached_property
    def text(self) -> str:
        return print_module(self.module)


# ------------------------------------------------------------------------------------------ templates
def template_path(name: str) -> Path:
    """A template file of ``instrumentation/`` (shipped in the package)."""
    return data_path("instrumentation", name)


@cache
def _template(name: str) -> string.Template:
    return string.Template(template_path(name).read_text())


def render(name: str, **values: object) -> str:
    """The PTX text of template ``name`` with its ``${placeholders}`` filled."""
    try:
        return _template(name).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:  # pragma: no cover - a template and this module out of step
        raise PtxstaticError(f"instrumentation template {name}: no value for {exc}") from None


def _statements(text: str) -> tuple[A.Statement, ...]:
    """Function-body statements from PTX text, parsed by the project's parser."""
    body = parse_text(f".func __ptxstatic_template\n{{\n{text}\n}}\n", "<instrumentation>").functions[0].body
    return body or ()


def _values(options: InstrumentOptions, n_counters: int, address_bits: int) -> dict[str, object]:
    return {
        "symbol": options.symbol, "banks": options.banks, "bank_mask": options.banks - 1, "mode": options.mode,
        "bank_bytes": 8 * max(1, n_counters), "addr_bits": address_bits, "stride": options.stride,
    }


def prologue(options: InstrumentOptions, n_counters: int, address_bits: int) -> tuple[A.Statement, ...]:
    """Function-scope register declarations and the block that fills them (``prologue.ptx.in``)."""
    values = _values(options, n_counters, address_bits)
    gate = render(f"gate_{options.mode}.ptx.in", **values)
    return _statements(render("prologue.ptx.in", gate=gate, **values))


def block_counter(index: int) -> A.Block:
    """The per-block counting scope for counter ``index`` (``block.ptx.in``)."""
    (block,) = _statements(render("block.ptx.in", index=index, offset=8 * index))
    assert isinstance(block, A.Block)
    return block


def counter_declaration(options: InstrumentOptions, n_counters: int) -> A.VarDecl:
    size = max(1, n_counters) * options.banks
    text = render("counters.ptx.in", symbol=options.symbol, banks=options.banks, blocks=max(1, n_counters), size=size)
    module = parse_text(text, "<instrumentation>")
    (decl,) = module.items
    assert isinstance(decl, A.VarDecl)
    return decl


# -------------------------------------------------------------------------------------------- checks
def _check(module: A.Module, symbol: str) -> str:
    if module.errors:
        raise PtxstaticError(f"{module.filename}: the module has parse errors; fix them before instrumenting")
    if module.address_size not in (32, 64):
        raise PtxstaticError(f"{module.filename}: .address_size {module.address_size or 'unreadable'}: "
                             "the address size is 32 or 64")
    arch = target_arch(module)
    if int(re.sub(r"\D", "", arch)) < MIN_SM:
        raise PtxstaticError(
            f"{module.filename}: .target {module.sm} is below sm_{MIN_SM}; warp-aggregated counters need "
            f"activemask (sm_{MIN_SM} or later). Recompile the PTX for sm_{MIN_SM}+"
        )
    names = {d.name for v in module.globals for d in v.names}
    if symbol in names:
        raise PtxstaticError(f"{module.filename}: the module is already instrumented (it declares {symbol})")
    return arch


def _version(module: A.Module) -> tuple[int, int]:
    major, _, minor = module.version.partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        raise PtxstaticError(f"{module.filename}: bad .version {module.version!r}") from None


# ------------------------------------------------------------------------------------- reachability
def _address_taken(module: A.Module) -> set[str]:
    """Functions whose address is taken (operands other than a call target, global initialisers)."""
    funcs = {f.name for f in module.functions}
    taken: set[str] = set()

    def visit(x: object) -> None:
        if isinstance(x, (A.Sym, A.Generic)) and x.name in funcs:
            taken.add(x.name)
        elif isinstance(x, (A.InitList, A.Vec, A.Tup)):
            for i in x.items:
                visit(i)
        elif isinstance(x, A.BinOp):
            visit(x.left)
            visit(x.right)

    for v in module.globals:
        visit(v.init)
    for f in module.functions:
        if f.body is None:
            continue
        for ins in f.instructions:
            if not ins.opcode.startswith("call"):
                for op in ins.operands:
                    visit(op)
    return taken


def reaching_kernels(module: A.Module) -> dict[str, list[str]]:
    """Function name (those with a body) -> kernels whose launch can execute it (indirect calls reach every
    address-taken function)."""
    g = call_graph(module.functions)
    taken = _address_taken(module)
    defined = {f.name for f in module.functions if f.body is not None}
    out: dict[str, list[str]] = {}
    for k in module.kernels:
        reached = nx.descendants(g, k.name) | {k.name}
        if "<indirect>" in reached:
            for f in taken:
                reached |= nx.descendants(g, f) | {f}
        for f in reached & defined:
            out.setdefault(f, []).append(k.name)
    return out


# ----------------------------------------------------------------------------------------- rewriting
def _label_lines(fn: A.Function) -> dict[str, int]:
    return {s.name: s.line for s in fn.statements if isinstance(s, A.Label)}


def _counter(index: int, fn: A.Function, b: BasicBlock, kernels: list[str], label_lines: dict[str, int]) -> Counter:
    lines = [label_lines[lab] for lab in b.labels if lab in label_lines]
    lines += [i.line for i in b.instructions]
    first_loc = next((i.loc for i in b.instructions if i.loc is not None), None)
    source = None
    if first_loc is not None:
        source = {"file": first_loc.file, "line": first_loc.line, "column": first_loc.column}
    return Counter(index, fn.name, b.id, b.name, sorted(kernels), (min(lines), max(lines)) if lines else (0, 0),
                   source, len(b.instructions))


def _rewrite(body: tuple[A.Statement, ...], before: dict[int, list[A.Statement]],
             after_label: dict[str, list[A.Statement]], count: list[int]) -> tuple[A.Statement, ...]:
    """``body`` with statements inserted before instruction number N (in program order) or after a label."""
    stack: list[tuple[Iterator[A.Statement], list[A.Statement], int]] = [(iter(body), [], 0)]  # the open blocks
    while True:
        items, out, line = stack[-1]
        for s in items:
            t = type(s)
            if t is A.Instruction:
                out.extend(before.get(count[0], ()))
                count[0] += 1
                out.append(s)
            elif t is A.Block:
                stack.append((iter(s.body), [], s.line))  # type: ignore[union-attr]
                break
            else:
                out.append(s)
                if t is A.Label:
                    out.extend(after_label.get(s.name, ()))  # type: ignore[union-attr]
        else:
            stack.pop()
            if not stack:
                return tuple(out)
            stack[-1][1].append(A.Block(tuple(out), line))


def _instrument_function(fn: A.Function, blocks: list[BasicBlock], first_index: int,
                         head: tuple[A.Statement, ...]) -> A.Function:
    decls = tuple(s for s in head if isinstance(s, A.VarDecl))
    setup = [s for s in head if not isinstance(s, A.VarDecl)]
    before: dict[int, list[A.Statement]] = {}
    after_label: dict[str, list[A.Statement]] = {}
    for b in blocks:
        scope: list[A.Statement] = [*setup, block_counter(first_index + b.id)] if b.id == 0 else [
            block_counter(first_index + b.id)]
        if b.instructions:
            before[b.start] = scope
        else:  # an empty block: targeted labels after the last instruction
            after_label[b.labels[-1]] = scope
    body = _rewrite(fn.body or (), before, after_label, [0])
    return replace(fn, body=decls + body)


def instrument(module: A.Module, options: InstrumentOptions | None = None,
               source_text: str | None = None) -> Instrumented:
    """Insert a counter into every basic block of every function with a body (with ``options.kernels``, of
    those kernels and the functions they reach).

    ``source_text`` (the PTX the module was parsed from) is hashed into the map; without it the printed
    module is hashed.
    """
    options = options or InstrumentOptions()
    _check(module, options.symbol)
    reach = reaching_kernels(module)
    if options.kernels:
        reach = {f: ks for f, ks in ((f, [k for k in ks if k in options.kernels]) for f, ks in reach.items()) if ks}
    graphs = [(f, build_cfg(f).blocks) for f in module.functions
              if f.body is not None and (not options.kernels or f.name in reach)]
    counters: list[Counter] = []
    firsts: dict[int, int] = {}
    for fn, blocks in graphs:
        first = firsts[id(fn)] = len(counters)
        lines = _label_lines(fn)
        counters += [_counter(first + b.id, fn, b, reach.get(fn.name, []), lines) for b in blocks]

    head = prologue(options, len(counters), module.address_size)
    items: list[A.TopItem] = []
    notes: list[str] = []
    for item in module.items:
        if isinstance(item, A.Function) and item.body is not None and id(item) in firsts:
            blocks = next(b for f, b in graphs if f is item)
            items.append(_instrument_function(item, blocks, firsts[id(item)], head) if blocks else item)
        elif isinstance(item, A.Directive) and item.name == "version" and _version(module) < MIN_VERSION:
            items.append(A.Directive("version", (f"{MIN_VERSION[0]}.{MIN_VERSION[1]}",), item.line))
            notes.append(f".version raised from {module.version} to {MIN_VERSION[0]}.{MIN_VERSION[1]} for activemask")
        else:
            items.append(item)
    first_fn = next((i for i, x in enumerate(items) if isinstance(x, A.Function)), len(items))
    items.insert(first_fn, counter_declaration(options, len(counters)))

    text = source_text if source_text is not None else print_module(module)
    cmap = CounterMap(counters, options.mode, options.banks, options.stride, options.symbol,
                      hashlib.sha256(text.encode()).hexdigest(), module.filename, notes)
    return Instrumented(A.Module(module.filename, items), cmap)
