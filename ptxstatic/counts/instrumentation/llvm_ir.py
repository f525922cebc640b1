"""The LLVM IR route: block counters inserted into NVPTX LLVM IR, lowered to PTX with llvmlite.

llvmlite parses and lowers IR but cannot change it, so the counters go into the IR text: after the phi nodes
of every block (named ``%loop`` or numbered ``%5``, the implicit entry block included) an inline-asm call
holds a self-contained copy of the PTX counter (the prologue and block templates of ``instrumentation/``
in one scope). Each copy adds to its own counter index, so after lowering the counters found in each PTX
basic block tell which IR blocks it came from: an IR block whose counter sits in several PTX blocks was
duplicated by the back end, a PTX block holding several counters merges IR blocks, and a PTX block holding
none was made by the back end (a loop preheader, a split edge). Nothing is matched by name.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.instrumentation.counter_map import Counter, CounterMap
from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, prologue, reaching_kernels, render
from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx import ast as A
from ptxstatic.ptx.parser import parse_text
from ptxstatic.ptx.printer import statement
from ptxstatic.toolchain.llvm import DEFAULT_CPU, DEFAULT_FEATURES, lower, parse_ir

IR_PREFIX = "%__psir_"  # register-name prefix of the IR route's counter scopes

_DEFINE = re.compile(r'^define\b[^@]*@("(?:[^"\\]|\\.)*"|[-\w$.]+)\s*\(', re.M)
_LABEL = re.compile(r'^(?:"((?:[^"\\]|\\.)*)"|([-\w$.]+)):')
_OLD_UNNAMED = re.compile(r"^; <label>:(\d+)")
_SKIP = re.compile(r"^\s*(?:$|;|%[-\w$.\"]+\s*=\s*phi\b)")
_TRIPLE = re.compile(r'^target\s+triple\s*=\s*"([^"]*)"', re.M)
_CPU_ATTR = re.compile(r'"target-cpu"="(sm_\d+[a-z]?)"')


@dataclass
class IrBlock:
    """One IR basic block: its function, position, name as LLVM prints it, and lines in the IR text."""

    function: str
    position: int
    name: str  # "%entry", "%5"
    label_line: int  # 1-based line of the label, or of the function's "{" for an implicit entry label
    insert_line: int  # 1-based line before which the counter goes (after the phi nodes)


@dataclass
class IrInstrumented:
    """The PTX lowered from the instrumented IR, its parsed module and the counter map (route ``llvm-ir``)."""

    text: str
    module: A.Module
    counters: CounterMap
    uncovered: dict[str, list[int]] = field(default_factory=dict)  # PTX blocks holding no IR counter

    @cached_property
    def ptx_blocks(self) -> dict[str, dict[int, list[int]]]:
        """Function -> PTX block id -> indices of the IR counters found in that block."""
        return counters_in_blocks(self.module)


def ir_blocks(text: str, llvm_module: Any, filename: str = "<ir>") -> list[IrBlock]:
    """Every basic block of every defined function, found in the text and checked against llvmlite's count."""
    lines = text.splitlines()
    functions = {f.name: f for f in llvm_module.functions if not f.is_declaration}
    out: list[IrBlock] = []
    for m in _DEFINE.finditer(text):
        name = m.group(1).strip('"')
        start = text.count("\n", 0, m.start())  # 0-based line of "define"
        open_line = next((i for i in range(start, len(lines)) if lines[i].rstrip().endswith("{")), None)
        if open_line is None or name not in functions:
            continue
        unnamed_args = sum(1 for a in functions[name].arguments if not a.name)
        blocks: list[tuple[str, int]] = []
        i = open_line + 1
        first = True
        while i < len(lines) and lines[i].rstrip() != "}":
            s = lines[i]
            lab, old = _LABEL.match(s), _OLD_UNNAMED.match(s)
            if lab or old:
                label = ("%" + (old.group(1) if old else lab.group(1) or lab.group(2)))  # type: ignore[union-attr]
                if lab and lab.group(1) is not None:
                    label = f'%"{lab.group(1)}"'
                blocks.append((label, i))
                first = False
            elif first and not _SKIP.match(s):
                blocks.append((f"%{unnamed_args}", open_line))
                first = False
                continue
            i += 1
        expected = len(list(functions[name].blocks))
        if len(blocks) != expected:
            raise PtxstaticError(f"{filename}: found {len(blocks)} blocks in @{name}, llvmlite counts {expected}")
        for pos, (label, line) in enumerate(blocks):
            j = line + 1
            while j < len(lines) and _SKIP.match(lines[j]) and not _LABEL.match(lines[j]):
                j += 1
            out.append(IrBlock(name, pos, label, line + 1, j + 1))
    return out


def _asm_string(ptx: str) -> str:
    """PTX text as an LLVM inline-asm string literal body (``$`` doubled, specials as ``\\XX``)."""
    out = []
    for ch in ptx.replace("$", "$$"):
        out.append(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else f"\\{ord(ch):02X}")
    return "".join(out)


def counter_asm(index: int, options: InstrumentOptions, n_counters: int) -> str:
    """A self-contained PTX scope for counter ``index``: the prologue and the block counter together.

    Its registers are renamed from ``%__ps_`` to ``%__psir_`` so that the PTX route can instrument the
    lowered PTX again without any name being declared in two nested scopes.
    """
    body = [*prologue(options, n_counters, 64), *parse_text(
        f".func __t\n{{\n{render('block.ptx.in', index=index, offset=8 * index)}\n}}\n").functions[0].body]
    lines = ["{"]
    for s in body:
        lines += statement(s)
    return "\n".join([*lines, "}"]).replace("%__ps_", IR_PREFIX) + "\n"


def counters_in_blocks(module: A.Module, base: str = IR_PREFIX + "base") -> dict[str, dict[int, list[int]]]:
    """Function -> PTX block id -> the counter indices whose ``red`` (addressed from register ``base``) sits
    in that block."""
    out: dict[str, dict[int, list[int]]] = {}
    for fn in module.functions:
        if fn.body is None:
            continue
        cfg = build_cfg(fn)
        per = out.setdefault(fn.name, {b.id: [] for b in cfg.blocks})
        for i, ins in enumerate(fn.instructions):
            op = ins.operands[0] if ins.operands else None
            if (ins.opcode.startswith("red.global.add.u64") and isinstance(op, A.Addr)
                    and isinstance(op.base, A.Reg) and op.base.name == base):
                per[cfg.block_of(i)].append(op.offset // 8)
    return out


def _target(text: str, cpu: str | None) -> str:
    if cpu:
        return cpu
    m = _CPU_ATTR.search(text)
    return m.group(1) if m else DEFAULT_CPU


def instrument_ir(text: str, filename: str = "<ir>", options: InstrumentOptions | None = None,
                  cpu: str | None = None, features: str = DEFAULT_FEATURES) -> IrInstrumented:
    """Insert a counter into every IR block, lower to PTX, and map every IR block to its PTX blocks."""
    options = options or InstrumentOptions()
    mod = parse_ir(text, filename)
    triple = _TRIPLE.search(text)
    if triple is None or not triple.group(1).startswith("nvptx"):
        raise PtxstaticError(f"{filename}: not NVPTX IR (target triple {triple.group(1) if triple else 'missing'})")
    if options.symbol in text:
        raise PtxstaticError(f"{filename}: the IR is already instrumented (it names {options.symbol})")
    blocks = ir_blocks(text, mod, filename)
    n = len(blocks)
    lines = text.splitlines()
    inserts: dict[int, list[str]] = {}
    for index, b in enumerate(blocks):
        asm = _asm_string(counter_asm(index, options, n))
        inserts.setdefault(b.insert_line, []).append(f'  call void asm sideeffect "{asm}", ""()')
    out = []
    for i, line in enumerate(lines, 1):
        out += inserts.get(i, [])
        out.append(line)
    out.append(f"@{options.symbol} = addrspace(1) global [{max(1, n) * options.banks} x i64] zeroinitializer, align 8")
    arch = _target(text, cpu)
    ptx = lower("\n".join(out) + "\n", filename, arch, features)
    module = parse_text(ptx, f"{filename} (lowered)")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return IrInstrumented(ptx, module, *_map(blocks, module, options, filename, digest))


def _map(blocks: list[IrBlock], module: A.Module, options: InstrumentOptions, filename: str,
         module_hash: str) -> tuple[CounterMap, dict[str, list[int]]]:
    found = counters_in_blocks(module)
    where: dict[int, list[tuple[str, int]]] = {}
    uncovered: dict[str, list[int]] = {}
    for fn, per in found.items():
        for pb, indices in per.items():
            for i in indices:
                where.setdefault(i, []).append((fn, pb))
            if not indices:
                uncovered.setdefault(fn, []).append(pb)
    reach = reaching_kernels(module)
    counters, notes = [], []
    for index, b in enumerate(blocks):
        ptx = where.get(index, [])
        if not ptx:
            notes.append(f"IR block {b.name} of @{b.function}: its counter was removed by the back end")
        elif len(ptx) > 1:
            notes.append(f"IR block {b.name} of @{b.function} was duplicated into PTX blocks "
                         + ", ".join(str(p) for _, p in ptx))
        counters.append(Counter(index, b.function, b.position, b.name, sorted(reach.get(b.function, [])),
                                (b.label_line, b.insert_line), {"file": filename, "line": b.label_line},
                                ptx_blocks=[p for _, p in ptx]))
    for fn, per in found.items():
        for pb, indices in per.items():
            if len(indices) > 1:
                names = ", ".join(blocks[i].name for i in indices)
                notes.append(f"PTX block {pb} of {fn} merges IR blocks {names}")
    for fn, pbs in uncovered.items():
        notes.append(f"PTX blocks of {fn} made by the back end (no IR counter): {', '.join(map(str, pbs))}")
    cmap = CounterMap(counters, options.mode, options.banks, options.stride, options.symbol, module_hash,
                      filename, notes, route="llvm-ir")
    return cmap, uncovered
