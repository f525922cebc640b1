"""Memory of the emulated device: address windows, module-variable layout, launch arguments, byte access.

Global memory is one flat ``uint8`` array starting at :data:`GLOBAL_BASE`; it holds module ``.global`` and
``.const`` variables (with their initialisers), the kernel's parameter block and every buffer argument.
A generic address is either a global address (generic and global addresses coincide, as on the hardware)
or lies in the shared or local window, which :func:`split_generic` maps back to state-space addresses.
Shared memory is a ``uint8`` array per CTA; local memory is a ``(32, size)`` array per warp, one row a lane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ptxstatic.emulator.faults import EmulationError
from ptxstatic.emulator.lanes import WARP
from ptxstatic.emulator.observe import Observer
from ptxstatic.emulator.paged import PagedMemory
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import EMULATOR_GLOBAL_BYTES
from ptxstatic.ptx.ast import (
    BinOp,
    Declarator,
    Function,
    Generic,
    Imm,
    Init,
    InitList,
    Module,
    Sym,
    Unary,
    VarDecl,
    constant_value,
)
from ptxstatic.ptx.dtypes import const, f32_to_bf16, np_type, size_of

GLOBAL_BASE = 1 << 40
SHARED_WINDOW = 1 << 32
LOCAL_WINDOW = 2 << 32
FUNCTION_BASE = 3 << 32
WINDOW_SIZE = 1 << 24
_ALIGN = 256  # alignment of buffers, as cudaMalloc gives


@dataclass(frozen=True, slots=True)
class Symbol:
    """What a name in an operand stands for.

    ``kind``: ``global`` (global or const variable, kernel parameter: ``address`` is a global address),
    ``shared`` (``address`` is a shared-space address), ``local`` (``address`` is an offset in the frame),
    ``param`` (per-lane parameter storage of a ``.func`` or a call; ``size`` bytes), ``func`` (a function
    address) or ``value`` (a constant such as ``WARP_SZ``).
    """

    kind: str
    address: int = 0
    size: int = 0


def decl_size(decl: VarDecl, d: Declarator) -> int:
    """Bytes of one declared variable (0 for an unsized ``[]`` array)."""
    elem = size_of(decl.dtype) * next((int(a[1]) for a in decl.attrs if a in ("v2", "v4", "v8")), 1)
    return elem * math.prod(n or 0 for n in d.dims)


def _align(offset: int, decl: VarDecl) -> int:
    a = decl.align or size_of(decl.dtype)
    return -(-offset // a) * a


class Device:
    """Global memory, module symbols and shared-memory layout for one launch of one kernel."""

    def __init__(self, module: Module, kernel: Function, launch: Launch,
                 symbol_values: dict[str, np.ndarray] | None = None,
                 inputs: dict[str, np.ndarray] | None = None) -> None:
        self.module = module
        self.steps = 0  # warp instructions executed so far; also the value of %clock
        self.observer: Observer | None = None  # called with every memory access (emulator.observe)
        self.symbols: dict[str, Symbol] = {"WARP_SZ": Symbol("value", WARP)}
        self.function_shared: dict[str, dict[str, Symbol]] = {}
        self.globals: dict[str, tuple[VarDecl, Declarator]] = {}
        self.buffers: dict[str, tuple[int, Buffer]] = {}
        for i, f in enumerate(module.functions):
            self.symbols.setdefault(f.name, Symbol("func", FUNCTION_BASE + 16 * i))
        top = self._layout_globals()
        top, params = self._layout_params(kernel, top)
        top = self._layout_buffers(kernel, launch, top)
        if top - GLOBAL_BASE > EMULATOR_GLOBAL_BYTES:
            raise EmulationError(
                f"the launch needs {top - GLOBAL_BASE} bytes of global memory (limit {EMULATOR_GLOBAL_BYTES})")
        self.memory = PagedMemory(top - GLOBAL_BASE, self._fill_page)
        self._layout_shared(launch.shared_bytes)
        if self.shared_size > WINDOW_SIZE:
            raise EmulationError(f"{self.shared_size} bytes of shared memory per CTA (limit {WINDOW_SIZE})")
        self._initialise(symbol_values or {}, inputs or {}, param_names(kernel))
        self._write_params(kernel, launch, params)

    # ------------------------------------------------------------------------------------ layout
    def _layout_globals(self) -> int:
        top = GLOBAL_BASE
        for decl in self.module.globals:
            if decl.space not in ("global", "const"):
                continue
            for d in decl.names:
                top = _align(top, decl)
                size = max(decl_size(decl, d), 1)
                self.symbols[d.name] = Symbol("global", top, size)
                self.globals[d.name] = (decl, d)
                top += size
        return top

    def _layout_params(self, kernel: Function, top: int) -> tuple[int, list[tuple[VarDecl, Declarator, int]]]:
        """Kernel parameters, each 16-byte aligned so that any vector load of a parameter is aligned."""
        top = -(-top // _ALIGN) * _ALIGN
        placed = []
        for decl in kernel.params or ():
            for d in decl.names:
                top = -(-top // 16) * 16
                size = decl_size(decl, d)
                self.symbols[d.name] = Symbol("global", top, size)
                placed.append((decl, d, top))
                top += size
        return top, placed

    def _layout_buffers(self, kernel: Function, launch: Launch, top: int) -> int:
        for i, name in enumerate(param_names(kernel)):
            arg = launch.args.get(name, launch.args.get(str(i)))
            if isinstance(arg, Buffer):
                top = -(-top // _ALIGN) * _ALIGN
                self.buffers[name] = (top, arg)
                top += max(arg.count * size_of(arg.dtype), 1)
        return -(-top // _ALIGN) * _ALIGN

    def _layout_shared(self, dynamic: int) -> None:
        top = 0
        decls = [(None, d) for d in self.module.globals if d.space == "shared"]
        for f in self.module.functions:
            decls += [(f.name, s) for s in f.statements if isinstance(s, VarDecl) and s.space == "shared"]
        extern = []
        for owner, decl in decls:
            table = self.symbols if owner is None else self.function_shared.setdefault(owner, {})
            for d in decl.names:
                if "extern" in decl.linkage or (d.dims and d.dims[-1] is None):
                    extern.append((table, d.name))
                    continue
                top = _align(top, decl)
                table[d.name] = Symbol("shared", top, decl_size(decl, d))
                top += decl_size(decl, d)
        top = -(-top // 16) * 16
        for table, name in extern:
            table[name] = Symbol("shared", top, dynamic)
        self.shared_size = top + dynamic

    # ------------------------------------------------------------------------------- initial values
    def _initialise(self, values: dict[str, np.ndarray], inputs: dict[str, np.ndarray], params: list[str]) -> None:
        for name, (decl, d) in self.globals.items():
            sym = self.symbols[name]
            if name in values:
                data = np.ascontiguousarray(values[name]).view(np.uint8).reshape(-1)[: sym.size]
            elif decl.init is not None:
                data = self._encode_init(decl, d, sym.size)
            else:
                continue
            self.write_bytes(sym.address, data)
        for name, (address, buf) in self.buffers.items():
            given = inputs.get(name, inputs.get(str(params.index(name))))
            if given is not None:
                self.write_bytes(address, _encoded(buf, _given(name, buf, given)))
        unknown = set(values) - set(self.globals)
        if unknown:
            raise EmulationError(f"no module variable named {', '.join(sorted(unknown))}")
        named = {*self.buffers, *(str(params.index(n)) for n in self.buffers)}
        if set(inputs) - named:
            raise EmulationError(f"inputs given for {', '.join(sorted(set(inputs) - named))}, which are not buffers")

    def _encode_init(self, decl: VarDecl, d: Declarator, size: int) -> np.ndarray:
        items: list[Init] = []
        _flatten_init(decl.init, items)
        dtype = np_type(decl.dtype)
        values = [constant_value(self._addresses(e)) for e in items]
        arr = np.array([const(v, dtype) for v in values], dtype=dtype)
        return arr.view(np.uint8)[:size]

    def _addresses(self, e: Init) -> Init:
        """``e`` with every symbol replaced by its address, ready for :func:`constant_value`."""
        if isinstance(e, (Sym, Generic)):
            sym = self.symbols.get(e.name)
            if sym is None or sym.kind not in ("global", "func"):
                raise EmulationError(f"initialiser names {e.name}, which is not a global variable or function")
            return Imm(str(sym.address))
        if isinstance(e, BinOp):
            return BinOp(self._addresses(e.left), e.op, self._addresses(e.right))
        if isinstance(e, Unary):
            return Unary(e.op, self._addresses(e.operand))
        return e

    def _write_params(self, kernel: Function, launch: Launch, placed: list) -> None:
        for i, (decl, d, addr) in enumerate(placed):
            arg = launch.args.get(d.name, launch.args.get(str(i)))
            size = decl_size(decl, d)
            if arg is None:
                raise EmulationError(f"kernel parameter {d.name} (#{i}) has no value in the launch")
            if isinstance(arg, Buffer):
                if size != 8:
                    raise EmulationError(f"buffer given for {d.name}, a {size}-byte parameter (pointers are 8 bytes)")
                value: int | float = self.buffers[d.name][0]
            else:
                value = arg
            if isinstance(value, float) and decl.dtype in ("f32", "f64") and not d.dims:
                data = np.array([value], dtype=np_type(decl.dtype)).view(np.uint8)
            elif isinstance(value, float):
                raise EmulationError(f"float value {value} given for non-float parameter {d.name}")
            else:
                data = np.frombuffer((int(value) % (1 << 8 * size)).to_bytes(size, "little"), dtype=np.uint8)
            self.write_bytes(addr, data)

    def _fill_page(self, start: int, page: np.ndarray) -> None:
        """The initial bytes of the page at offset ``start``: the fill of every buffer it overlaps (buffers
        given as inputs were written when the device was made, so their pages exist already)."""
        for address, buf in self.buffers.values():
            if buf.fill == "zeros":
                continue
            width = size_of(buf.dtype)
            lo, hi = address - GLOBAL_BASE, address - GLOBAL_BASE + buf.count * width
            a, b = max(lo, start), min(hi, start + len(page))
            if a >= b:
                continue
            first, last = (a - lo) // width, -(-(b - lo) // width)
            raw = _encoded(buf, buf.values_at(host_type(buf), first, last))
            page[a - start: b - start] = raw[a - lo - first * width: b - lo - first * width]

    # -------------------------------------------------------------------------------------- access
    def write_bytes(self, address: int, data: np.ndarray) -> None:
        off = address - GLOBAL_BASE
        self.memory[off: off + len(data)] = data

    def read(self, name: str, dtype: np.dtype, count: int) -> np.ndarray:
        """``count`` values of ``dtype`` at a global symbol or buffer parameter."""
        addr = self.buffers[name][0] if name in self.buffers else self.symbols[name].address
        off = addr - GLOBAL_BASE
        return self.memory[off: off + count * dtype.itemsize].view(dtype).copy()


def host_type(buf: Buffer) -> np.dtype:
    """The dtype a buffer's values are given in: its element type's (float32 for bf16, rounded when written)."""
    return np.dtype(np.float32) if buf.dtype == "bf16" else np_type(buf.dtype)


def _encoded(buf: Buffer, values: np.ndarray) -> np.ndarray:
    """A buffer's values as the bytes the device holds (bf16 rounded from float32)."""
    raw = f32_to_bf16(values) if buf.dtype == "bf16" else values
    return raw.view(np.uint8).reshape(-1)


def _given(name: str, buf: Buffer, data: np.ndarray) -> np.ndarray:
    """Caller-supplied initial contents of a buffer, in its element type."""
    values = np.asarray(data).reshape(-1)
    if len(values) > buf.count:
        raise EmulationError(f"{len(values)} values given for buffer {name} of {buf.count} elements")
    out = np.zeros(buf.count, dtype=host_type(buf))
    out[: len(values)] = values
    return out


def param_names(fn: Function) -> list[str]:
    return [d.name for decl in fn.params or () for d in decl.names]


def _flatten_init(init: Init | None, out: list[Init]) -> None:
    if isinstance(init, InitList):
        for item in init.items:
            _flatten_init(item, out)
    elif init is not None:
        out.append(init)


# --------------------------------------------------------------------------------- address spaces
def split_generic(addr: np.ndarray, m: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Partition the active lanes of a generic access into (space, space address, lanes)."""
    below = addr < GLOBAL_BASE
    if not (m & below).any():  # the common case: every active lane's address is global
        return [("global", addr, m)]
    glob = m & ~below
    out = [("global", addr, glob)] if glob.any() else []
    rest = m & below
    for space, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW)):
        inside = rest & (addr >= base) & (addr < base + WINDOW_SIZE)
        if inside.any():
            out.append((space, addr - np.uint64(base), inside))
            rest = rest & ~inside
    if rest.any():
        bad = int(addr[np.flatnonzero(rest)[0]])
        raise EmulationError(f"generic address {bad:#x} is in no memory window (null or invalid pointer)")
    return out


def to_generic(space: str, addr: np.ndarray) -> np.ndarray:
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    return addr + np.uint64(base) if base else addr


def from_generic(space: str, addr: np.ndarray) -> np.ndarray:
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    return addr - np.uint64(base) if base else addr


def in_window(space: str, addr: np.ndarray) -> np.ndarray:
    """``isspacep``: which generic addresses fall in ``space``'s window."""
    if space in ("global", "const", "param"):
        return addr >= GLOBAL_BASE
    base = SHARED_WINDOW if space == "shared" else LOCAL_WINDOW
    return (addr >= base) & (addr < base + WINDOW_SIZE)
