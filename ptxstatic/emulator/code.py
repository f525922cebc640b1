"""Compiling a PTX function for the emulator: basic blocks of closures, operand access, reconvergence points.

Each instruction becomes a closure ``op(frame, mask)`` that computes over the 32 lanes of a warp with numpy
and writes its results for the lanes in ``mask`` only. Control flow (branches, calls, returns, barriers) is
left to the interpreter as tagged steps. An instruction the emulator cannot run compiles into a step that
raises :class:`EmulationError` when some lane reaches it, so unsupported code on paths never taken is fine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ptxstatic.analysis import graphs
from ptxstatic.analysis.address_slice import TOUCHING
from ptxstatic.analysis.cfg import BlockGraph, build_cfg
from ptxstatic.emulator.faults import EmulationError
from ptxstatic.emulator.lanes import FULL, LANES
from ptxstatic.emulator.memory import Device, Symbol, decl_size
from ptxstatic.ptx.ast import (
    Addr,
    BinOp,
    BranchTargets,
    Function,
    Imm,
    Instruction,
    Label,
    Neg,
    Operand,
    Reg,
    Sym,
    Tup,
    Unary,
    VarDecl,
    constant_value,
)
from ptxstatic.ptx.dtypes import NP, UINT, Unsupported, const, is_signed, literal, np_type, resize
from ptxstatic.ptx.isa import OpInfo

Reader = Callable[..., object]  # frame -> array or scalar of the requested dtype
Writer = Callable[..., None]  # (frame, value, mask) -> None
Op = Callable[..., None]  # (frame, mask) -> None

OP, CALL, BARRIER = 0, 1, 2  # step kinds
BRA, BRX, RET, EXIT, TRAP = 0, 1, 2, 3, 4  # terminator kinds
EXIT_NODE = -1  # the virtual exit: reconvergence point of paths that never meet again
END = -2  # "block" after the last one: lanes reaching it leave the function


@dataclass
class CallSite:
    callee: str | None  # direct calls
    target: Reader | None  # indirect calls: the function address per lane
    args: tuple[Operand, ...]  # .param variables, or registers and constants for .reg parameters
    returns: tuple[Operand, ...]


@dataclass
class BarrierSpec:
    mode: str  # "sync", "arrive" or "red"
    ident: Reader
    count: Reader | None
    red: str = ""  # popc, and, or
    pred: Reader | None = None
    dest: Writer | None = None


@dataclass
class Block:
    """One basic block; its instructions are compiled when it first runs (:meth:`Code.compile_block`)."""

    id: int
    opcodes: list[str]
    steps: list[tuple] | None = None  # (kind, guard register, negated, payload, instruction); None: not compiled
    term: tuple | None = None  # (kind, guard, negated, payload, instruction), or None to fall through
    fall: int | None = None  # next block when not branching (END after the last block); None after a jump


@dataclass
class Code:
    function: Function
    blocks: list[Block]
    ipdom: list[int]
    regs: dict[str, np.dtype]
    local_size: int
    param_sizes: dict[str, int]
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, "param" or "reg") of a .func's parameters
    returns: list[tuple[str, str]] = field(default_factory=list)
    compiler: _BlockCompiler | None = field(default=None, repr=False)

    def compile_block(self, block: Block) -> None:
        """Compile ``block``'s instructions (once, when it first runs: most of a long kernel may never run)."""
        block.steps, block.term, block.fall = self.compiler.compile(block.id)

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def is_kernel(self) -> bool:
        return self.function.is_kernel


# ------------------------------------------------------------------------------------------ scope
_SREG_BITS = {"%clock64": 64, "%globaltimer": 64, "%gridid": 64}
_LANEMASKS = {
    "%lanemask_eq": 1 << LANES, "%lanemask_lt": (1 << LANES) - 1, "%lanemask_le": (2 << LANES) - 1,
    "%lanemask_gt": ((1 << 32) - 1) ^ ((2 << LANES) - 1), "%lanemask_ge": ((1 << 32) - 1) ^ ((1 << LANES) - 1),
}
_DIM = {"x": 0, "y": 1, "z": 2}


def _special(name: str) -> Reader | None:
    """Reader of a special register (uint32, or uint64 for the 64-bit ones), None if not special."""
    base, _, dim = name.partition(".")
    k = _DIM.get(dim, 0)
    if base == "%tid":
        return lambda f: f.warp.tid[k]
    fixed = {
        "%ntid": lambda f: f.cta.launch.block[k], "%nctaid": lambda f: f.cta.launch.grid[k],
        "%ctaid": lambda f: f.cta.ctaid[k], "%warpid": lambda f: f.warp.index,
        "%nwarpid": lambda f: f.cta.launch.warps_per_block,
        "%smid": lambda f: 0, "%nsmid": lambda f: 1, "%gridid": lambda f: 0,
        "%dynamic_smem_size": lambda f: f.cta.launch.shared_bytes, "%total_smem_size": lambda f: f.device.shared_size,
        "%clock": lambda f: f.device.steps & 0xFFFFFFFF, "%clock64": lambda f: f.device.steps,
        "%clock_hi": lambda f: f.device.steps >> 32, "%globaltimer": lambda f: f.device.steps,
        "%globaltimer_lo": lambda f: f.device.steps & 0xFFFFFFFF, "%globaltimer_hi": lambda f: f.device.steps >> 32,
        "%envreg": lambda f: 0,  # %envreg0..31: driver-defined environment, all zero here
        # every CTA is a cluster of one
        "%clusterid": lambda f: f.cta.ctaid[k], "%nclusterid": lambda f: f.cta.launch.grid[k],
        "%cluster_ctaid": lambda f: 0, "%cluster_nctaid": lambda f: 1, "%cluster_ctarank": lambda f: 0,
        "%cluster_nctarank": lambda f: 1, "%is_explicit_cluster": lambda f: 0,
        "%aggr_smem_size": lambda f: f.device.shared_size, "%reserved_smem_offset_begin": lambda f: 0,
        "%reserved_smem_offset_end": lambda f: 0, "%reserved_smem_offset_cap": lambda f: 0,
        "%reserved_smem_offset_0": lambda f: 0, "%reserved_smem_offset_1": lambda f: 0,
    }.get("%envreg" if base[:7] == "%envreg" and base[7:].isdigit() else base)
    if fixed is not None:
        dt = np.uint64 if _SREG_BITS.get(base) == 64 else np.uint32
        return lambda f: dt(fixed(f))
    if base == "%laneid":
        lanes = LANES.astype(np.uint32)
        return lambda f: lanes
    if base in _LANEMASKS:
        masks = _LANEMASKS[base].astype(np.uint32)
        return lambda f: masks
    return None


class Scope:
    """Names visible in one function: its registers, its .local/.shared/.param variables, module symbols."""

    def __init__(self, fn: Function, device: Device) -> None:
        self.device = device
        self.symbols: dict[str, Symbol] = dict(device.symbols)
        self.symbols.update(device.function_shared.get(fn.name, {}))
        self.regs: dict[str, np.dtype] = {}
        self.reg_prefixes: dict[str, np.dtype] = {}
        self.param_sizes: dict[str, int] = {}
        self.local_size = 0
        own = [*(fn.returns or ()), *(fn.params or ())]
        for decl in own:
            if not fn.is_kernel:  # kernel parameters live in global memory (Device symbols)
                self._declare(decl)
        for s in fn.statements:
            if isinstance(s, VarDecl):
                self._declare(s)

    def _declare(self, decl: VarDecl) -> None:
        for d in decl.names:
            if decl.space == "reg":
                storage = NP["pred"] if decl.dtype == "pred" else NP.get(decl.dtype)
                if storage is not None:
                    storage = storage if storage.kind == "b" else UINT[storage.itemsize]
                table = self.reg_prefixes if d.count is not None else self.regs
                table[d.name] = storage  # None: a type the emulator does not model
            elif decl.space == "local":
                a = decl.align or 1
                self.local_size = -(-self.local_size // a) * a
                self.symbols[d.name] = Symbol("local", self.local_size, decl_size(decl, d))
                self.local_size += decl_size(decl, d)
            elif decl.space == "param":
                size = max(decl_size(decl, d), self.param_sizes.get(d.name, 0))
                self.symbols[d.name] = Symbol("param", 0, size)
                self.param_sizes[d.name] = size

    def declared(self, name: str) -> bool:
        return name in self.regs or name.rstrip("0123456789") in self.reg_prefixes

    def reg_type(self, name: str) -> np.dtype:
        if name in self.regs:
            dt = self.regs[name]
        else:
            prefix = name.rstrip("0123456789")
            if prefix not in self.reg_prefixes:
                raise EmulationError(f"register {name} is not declared")
            dt = self.regs[name] = self.reg_prefixes[prefix]
        if dt is None:
            raise EmulationError(f"register {name} has a type the emulator does not support")
        return dt

    def symbol(self, name: str) -> Symbol:
        sym = self.symbols.get(name)
        if sym is None:
            raise EmulationError(f"symbol {name} is not declared")
        return sym


# --------------------------------------------------------------------------------------- operands
class Operands:
    """Readers and writers for the operands of one instruction."""

    def __init__(self, ins: Instruction, scope: Scope, address_only: bool = False) -> None:
        self.ins = ins
        self.scope = scope
        self.items = ins.operands
        self.address_only = address_only  # a load or store left out: it touches its addresses only

    def __len__(self) -> int:
        return len(self.items)

    def read(self, i: int, ty: str) -> Reader:
        return self.reader(self.items[i], ty)

    def write(self, i: int, ty: str) -> Writer:
        return self.writer(self.items[i], ty)

    def _register(self, op: Operand) -> Operand:
        """Registers declared without ``%`` (inline assembly: ``.reg .pred p;``) parse as symbols."""
        if isinstance(op, Sym) and op.name in self.scope.regs:
            return Reg(op.name)
        return op

    def reader(self, op: Operand, ty: str) -> Reader:
        """A function of the frame giving the operand's value as ``ty`` (array over lanes, or a scalar)."""
        dt = np_type(ty)
        op = self._register(op)
        if isinstance(op, Neg):
            inner = self.reader(op.reg, "pred")
            return lambda f: ~inner(f)
        if isinstance(op, Imm):
            value = literal(op.text, op.value, dt)
            return lambda f: value
        if isinstance(op, (BinOp, Unary)):
            value = const(constant_value(op), dt)
            return lambda f: value
        if isinstance(op, Sym):
            return self._symbol_value(op.name, dt)
        if isinstance(op, Reg):
            sreg = None if self.scope.declared(op.name) else _special(op.name)
            if sreg is not None:
                return lambda f: resize(np.asarray(sreg(f)), dt)
            return _reg_reader(op.name, self.scope.reg_type(op.name), dt, is_signed(ty))
        raise EmulationError(f"operand {op} cannot be read as a .{ty} value")

    def writer(self, op: Operand, ty: str) -> Writer:
        """A function ``(frame, value, mask)`` storing a ``ty`` value into the operand for the masked lanes."""
        op = self._register(op)
        if isinstance(op, Sym) and op.name == "_":
            return lambda f, v, m: None
        if not isinstance(op, Reg) or not self.scope.declared(op.name):
            raise EmulationError(f"operand {op} is not a writable register")
        name, storage, vt = op.name, self.scope.reg_type(op.name), np_type(ty)
        if vt == storage:
            def write(f, v, m):
                if type(v) is not np.ndarray or v.dtype != vt:
                    v = np.asarray(v).astype(vt)
                regs = f.regs
                regs[name] = v if m is FULL and v.base is None and v.shape == FULL.shape else np.where(m, v, regs[name])
        else:
            signed = is_signed(ty)

            def write(f, v, m):
                if type(v) is not np.ndarray or v.dtype != vt:
                    v = np.asarray(v).astype(vt)
                fresh = v.base is None and v.shape == FULL.shape
                v = resize(v, storage, signed)
                regs = f.regs
                regs[name] = v if m is FULL and fresh else np.where(m, v, regs[name])

        return write

    def pred(self, i: int) -> Reader:
        return self.reader(self.items[i], "pred")

    def address(self, i: int) -> tuple[Symbol | None, Reader]:
        """The symbol an ``[addr]`` operand is based on (if any) and a reader of its uint64 address."""
        op = self.items[i]
        if not isinstance(op, Addr):
            raise EmulationError(f"operand {i + 1} is not an address")
        off = np.uint64(op.offset % (1 << 64))
        if op.base is None:
            return None, lambda f: off
        if isinstance(op.base, Sym):
            sym = self.scope.symbol(op.base.name)
            if sym.kind == "param":
                return sym, lambda f: off
            base = self._symbol_value(op.base.name, np.dtype(np.uint64))
            return sym, lambda f: base(f) + off
        base = self.reader(op.base, "u64")
        return None, lambda f: base(f) + off

    def _symbol_value(self, name: str, dt: np.dtype) -> Reader:
        sym = self.scope.symbol(name)
        if sym.kind == "local":
            offset = sym.address
            return lambda f: resize(np.asarray(np.uint64(f.local_base + offset)), dt)
        if sym.kind == "param":
            raise EmulationError(f"the address of .param variable {name} is not supported")
        value = const(sym.address, dt)
        return lambda f: value


def _reg_reader(name: str, storage: np.dtype, want: np.dtype, signed: bool) -> Reader:
    if storage == want:
        return lambda f: f.regs[name]
    if storage.itemsize == want.itemsize and storage.kind != "b" and want.kind != "b":
        return lambda f: f.regs[name].view(want)
    return lambda f: resize(f.regs[name], want, signed)


# ------------------------------------------------------------------------------------ compilation
def _ipdom(cfg: BlockGraph, n: int) -> list[int]:
    """Immediate post-dominator of every block (:data:`EXIT_NODE` when paths only meet at the exit)."""
    exits = list(dict.fromkeys(cfg.exits))
    succ = {**cfg.pred, EXIT_NODE: exits}  # the reversed graph, entered at the exit
    pred = {b: [*ss, EXIT_NODE] if b in exits else ss for b, ss in cfg.succ.items()}
    idom = graphs.immediate_dominators(succ, pred, EXIT_NODE)
    return [idom.get(b, EXIT_NODE) for b in range(n)]


def _raising(message: str) -> Op:
    def op(f, m):
        raise EmulationError(message)

    return op


def compile_function(fn: Function, device: Device, builders: dict[str, Callable[[Operands, OpInfo], Op]],
                     leave_out: frozenset[int] = frozenset()) -> Code:
    """Compile ``fn`` (which must have a body) for ``device``: its blocks, each compiled into closures when it
    first runs. The instructions of ``fn.instructions`` indexed in ``leave_out`` are compiled (an instruction
    the emulator cannot run still stops it there) but not run: they count as executed, their results are not
    written; a load or store among them only touches its addresses (observed, checked for faults), reading
    or writing nothing."""
    cfg = build_cfg(fn)
    scope = Scope(fn, device)
    for b in cfg.blocks:
        for ins in b.instructions:
            if ins.guard is not None:
                scope.reg_type(ins.guard.name)  # an undeclared guard is an error of the whole function
    blocks = [Block(b.id, [i.opcode for i in b.instructions]) for b in cfg.blocks]
    code = Code(fn, blocks, _ipdom(cfg, len(blocks)), scope.regs, scope.local_size,
                scope.param_sizes, compiler=_BlockCompiler(cfg, scope, _branch_tables(fn), builders,
                                                           {id(fn.instructions[i]) for i in leave_out}))
    if not fn.is_kernel:
        code.params = [(d.name, decl.space) for decl in fn.params or () for d in decl.names]
        code.returns = [(d.name, decl.space) for decl in fn.returns or () for d in decl.names]
    return code


class _BlockCompiler:
    """Compiles the blocks of one function into closures, one block at a time."""

    def __init__(self, cfg: BlockGraph, scope: Scope, tables: dict[str, tuple[str, ...]],
                 builders: dict[str, Callable[[Operands, OpInfo], Op]], leave_out: set[int]) -> None:
        self.cfg, self.scope, self.tables, self.builders = cfg, scope, tables, builders
        self.leave_out = leave_out  # ids of the instructions not run
        self.labels = {lab: b.id for b in cfg.blocks for lab in b.labels}

    def compile(self, index: int) -> tuple[list[tuple], tuple | None, int | None]:
        """(steps, terminator, fall-through block) of block ``index``."""
        steps: list[tuple] = []
        term = None
        for ins in self.cfg.blocks[index].instructions:
            guard = ins.guard.name if ins.guard is not None else None
            left = id(ins) in self.leave_out
            address_only = left and ins.info.opcode in TOUCHING
            try:
                ops = Operands(ins, self.scope, address_only)
                kind, payload = _compile(ins, ops, self.labels, self.tables, self.builders)
                if kind == OP and left and not address_only:
                    continue
            except (EmulationError, Unsupported) as exc:
                kind, payload = OP, _raising(str(exc))
            if kind == "term":
                term = (payload[0], guard, ins.guard_negated, payload[1], ins)
            else:
                steps.append((kind, guard, ins.guard_negated, payload, ins))
        ends = term is not None and term[1] is None
        fall = None if ends else index + 1 if index + 1 < len(self.cfg.blocks) else END
        return steps, term, fall


def _branch_tables(fn: Function) -> dict[str, tuple[str, ...]]:
    tables, pending = {}, None
    for s in fn.statements:
        if isinstance(s, Label):
            pending = s.name
        elif isinstance(s, BranchTargets) and pending:
            tables[pending] = s.targets
    return tables


def _compile(ins: Instruction, ops: Operands, labels: dict[str, int], tables: dict[str, tuple[str, ...]],
             builders: dict[str, Callable[[Operands, OpInfo], Op]]) -> tuple[object, object]:
    info = ins.info
    name = info.opcode
    if name == "bra":
        target = next((o.name for o in ins.operands if isinstance(o, Sym)), "")
        if target not in labels:
            raise EmulationError(f"branch target {target} is not a label of the function")
        return "term", (BRA, labels[target])
    if name == "brx.idx":
        table = tables.get(ins.operands[1].name, ()) if isinstance(ins.operands[1], Sym) else ()
        if not table or any(t not in labels for t in table):
            raise EmulationError("brx.idx needs a .branchtargets table of labels")
        return "term", (BRX, (ops.read(0, "u32"), [labels[t] for t in table]))
    if name in ("ret", "exit", "trap"):
        return "term", ({"ret": RET, "exit": EXIT, "trap": TRAP}[name], None)
    if name == "call":
        return CALL, _call_site(ins, ops)
    if name in ("bar", "barrier") and "warp" not in info.other:
        return BARRIER, _barrier(info, ops)
    build = builders.get(name)
    if build is None:
        raise EmulationError(f"opcode {name} is not supported")
    return OP, build(ops, info)


def _call_site(ins: Instruction, ops: Operands) -> CallSite:
    tuples = [o for o in ins.operands if isinstance(o, Tup)]
    callee = next(o for o in ins.operands if not isinstance(o, Tup))
    returns: tuple[Operand, ...] = ()
    if ins.operands[0] is not callee:
        returns = tuples[0].items
        tuples = tuples[1:]
    args = tuples[0].items if tuples else ()
    for o in (*args, *returns):
        if isinstance(o, Reg):
            ops.scope.reg_type(o.name)
    if isinstance(callee, Sym):
        return CallSite(callee.name, None, args, returns)
    return CallSite(None, ops.reader(callee, "u64"), args, returns)


def _barrier(info: OpInfo, ops: Operands) -> BarrierSpec:
    if "red" in info.other:
        red = next(o for o in info.other if o in ("popc", "and", "or"))
        ty = "pred" if red != "popc" else "u32"
        count = ops.read(2, "u32") if len(ops) == 4 else None
        return BarrierSpec("red", ops.read(1, "u32"), count, red, ops.pred(len(ops) - 1), ops.write(0, ty))
    mode = "arrive" if "arrive" in info.other else "sync"
    ident = ops.read(0, "u32") if len(ops) else (lambda f: np.uint32(0))
    return BarrierSpec(mode, ident, ops.read(1, "u32") if len(ops) > 1 else None)

