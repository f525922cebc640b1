"""Memory whose contents the launch gives and the kernel never writes: what loads from it read is known.

Two kinds: buffer arguments the launch describes (``Buffer`` with a fill: zeros, ones, iota, const, or random
with a seed, for random integers up to :data:`~ptxstatic.limits.EXACT_RANDOM_ELEMENTS` elements, where every
slice has the values of the whole), and module ``.global``/``.const`` variables with an initialiser that
holds no addresses (the maths library's coefficient tables, lookup tables), taken to hold it as the module
loads them. A store, atomic or reduction anywhere in the kernel or the functions it calls whose address comes
from one of them, or from anywhere the def-use chains cannot follow (a pointer loaded from memory, a
function's pointer parameter), makes them all unknown.

The bytes come from the emulator's paged global memory (:mod:`ptxstatic.emulator.memory`), made for the launch
on the first load and filled a 4 KiB page at a time, so a buffer of gigabytes costs what the loads touch.
"""

from __future__ import annotations

import numpy as np

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.analysis.defuse import DefUse, def_use
from ptxstatic.launch import Buffer, Launch
from ptxstatic.limits import EXACT_RANDOM_ELEMENTS
from ptxstatic.ptx.ast import Addr, Function, Generic, InitList, Module, Reg, Sym
from ptxstatic.ptx.dtypes import U64, size_of
from ptxstatic.ptx.isa import bit_width

_STORES = ("st", "atom", "red")
_UNTRACED = ("cp.async.bulk", "cp.reduce", "multimem", "st.bulk")  # may write global memory: not followed
_PRIVATE = ("local", "shared", "param")
_LOADED = frozenset({"ld", "ldu", "atom", "shfl", "tex", "suld", "prmt"})  # a 64-bit value from them may point anywhere
_CARRY = frozenset({"add", "sub", "mov", "cvta", "selp", "and", "or", "mad"})  # 64-bit operations keeping a pointer
SPAN_BYTES = 1 << 22  #: loads whose addresses span up to this many bytes read the span in one piece


def _holds_addresses(init: object) -> bool:
    if isinstance(init, (Sym, Generic)):
        return True
    if isinstance(init, InitList):
        return any(_holds_addresses(i) for i in init.items)
    return any(_holds_addresses(getattr(init, a)) for a in ("left", "right", "operand") if hasattr(init, a))


def _origins(fn: Function, du: DefUse, user: int, reg: str, params: set[str]) -> set[str] | None:
    """The kernel parameters and symbols an address register's value comes from, following its definitions
    through the 64-bit operations that carry a pointer (add, sub, mov, cvta, selp, and, or; a mad's addend):
    an index (a product, a shift, a widened 32-bit value) carries none. None when it comes from memory or from
    a function's parameter."""
    out: set[str] = set()
    seen: set[int] = set()
    work = [(user, reg)]
    while work:
        u, r = work.pop()
        for d in du.reaching.get((u, r), ()):
            if d in seen:
                continue
            seen.add(d)
            ins = fn.instructions[d]
            info = ins.info
            if info.dtype and bit_width(info.dtype) != 64:
                continue
            if info.opcode == "ld" and info.space == "param":
                addr = ins.operands[1]
                name = addr.base.name if isinstance(addr, Addr) and isinstance(addr.base, Sym) else ""
                if name not in params:
                    return None
                out.add(name)
            elif info.opcode in _LOADED:
                return None
            elif info.opcode in _CARRY:
                sources = ins.operands[3:4] if info.opcode == "mad" else ins.operands[1:]
                out.update(o.name for o in sources if isinstance(o, Sym))
                work += [(d, o.name) for o in sources if isinstance(o, Reg)]
    return out


def _steering(fn: Function, du: DefUse, loads: set[int]) -> set[int]:
    """The ``loads`` whose values may reach control: a comparison, a guard, a branch or call, another load's
    address, or a value passed to or returned from a function (the others' values are left data: cheaper)."""
    users = du.chains()
    out = set()
    for load in loads:
        seen, work = {load}, [load]
        while work:
            d = work.pop()
            for u in users.get(d, ()):
                ins = fn.instructions[u]
                op = ins.info.opcode
                if op in ("setp", "set", "bra", "brx", "call", "ld", "ldu") or ins.opcode.startswith("st.param") or (
                        ins.guard is not None and any(r == ins.guard.name for r in du.defs[d])):
                    out.add(load)
                    work = []
                    break
                if u not in seen:
                    seen.add(u)
                    work.append(u)
    return out


def reachable(module: Module, kernel: Function) -> list[Function]:
    """The kernel and the functions it may call (every defined function when it calls through a pointer)."""
    defined = {f.name: f for f in module.functions if f.body is not None}
    out, work = {kernel.name: kernel}, [kernel]
    while work:
        for ins in work.pop().instructions:
            if not ins.opcode.startswith("call"):
                continue
            targets = [o.name for o in ins.operands if isinstance(o, Sym) and o.name in defined]
            if not targets and any(isinstance(o, Reg) for o in ins.operands):
                return list(defined.values())
            for t in targets:
                if t not in out:
                    out[t] = defined[t]
                    work.append(defined[t])
    return list(out.values())


class KnownMemory:
    """The memory of one launch that loads read with known values, by pointer base tag (the static
    interpreter's); empty when the kernel may write to what it could read."""

    def __init__(self, module: Module, kernel: Function, launch: Launch, tags: dict[str, int]) -> None:
        self.module, self.kernel, self.launch = module, kernel, launch
        self.functions = reachable(module, kernel)
        self._du: dict[str, DefUse] = {}
        self._loads: dict[str, frozenset[int]] = {}
        self.params = {d.name for p in kernel.params or () for d in p.names}
        names = [name for name, value in launch.args.items() if isinstance(value, Buffer) and _exact_fill(value)]
        names += [d.name for decl in module.globals if decl.space in ("global", "const")
                  and decl.init is not None and not _holds_addresses(decl.init) for d in decl.names]
        stored = self._written() if names else None
        self.names = {tags[n]: n for n in names if n in tags and stored is not None and n not in stored}
        self._device = None
        self._bases: dict[int, tuple[int, int] | None] = {}  # tag -> (offset in the device's memory, bytes)

    def __contains__(self, tag: object) -> bool:
        return tag in self.names

    def def_use(self, fn: Function) -> DefUse:
        if fn.name not in self._du:
            self._du[fn.name] = def_use(build_cfg(fn))
        return self._du[fn.name]

    def _written(self) -> set[str] | None:
        """Kernel parameters and module variables that a store, atomic or reduction of the kernel or of a
        function it calls may write; None when some such address cannot be traced."""
        out: set[str] = set()
        for fn in self.functions:
            for i, ins in enumerate(fn.instructions):
                if ins.opcode.startswith(_UNTRACED):
                    return None
                info = ins.info
                if info.opcode not in _STORES or info.space in _PRIVATE:
                    continue
                addr = ins.operands[0]
                if isinstance(addr, Addr) and isinstance(addr.base, Sym):
                    out.add(addr.base.name)
                    continue
                if not isinstance(addr, Addr) or not isinstance(addr.base, Reg):
                    return None
                found = _origins(fn, self.def_use(fn), i, addr.base.name, self.params if fn is self.kernel else set())
                if found is None:
                    return None
                out |= found
        return out

    def loads(self, fn: Function) -> frozenset[int]:
        """Indexes of the loads of ``fn`` whose address may lie in known memory (their values are not data)."""
        if not self.names:
            return frozenset()
        if fn.name not in self._loads:
            readable = set(self.names.values())
            found = set()
            for i, ins in enumerate(fn.instructions):
                info = ins.info
                if info.opcode not in ("ld", "ldu") or info.space in _PRIVATE:
                    continue
                addr = ins.operands[1] if len(ins.operands) > 1 else None
                if not isinstance(addr, Addr):
                    continue
                if isinstance(addr.base, Sym):
                    origins: set[str] | None = {addr.base.name}
                elif isinstance(addr.base, Reg):
                    origins = _origins(fn, self.def_use(fn), i, addr.base.name,
                                       self.params if fn is self.kernel else set())
                else:
                    origins = None
                if origins and origins & readable:
                    found.add(i)
            self._loads[fn.name] = frozenset(found & _steering(fn, self.def_use(fn), found))
        return self._loads[fn.name]

    def _base(self, tag: int) -> tuple[int, int] | None:
        if tag not in self._bases:
            from ptxstatic.emulator.faults import EmulationError
            from ptxstatic.emulator.memory import GLOBAL_BASE, Device, decl_size

            self._bases[tag] = None
            if self._device is None:
                args = {d.name: self.launch.args.get(d.name, 0) for p in self.kernel.params or () for d in p.names}
                try:
                    self._device = Device(self.module, self.kernel, Launch(self.launch.grid, self.launch.block,
                                                                           self.launch.shared_bytes, args))
                except EmulationError:
                    self.names.clear()
                    return None
            dev, name = self._device, self.names[tag]
            if name in dev.buffers:
                address, buf = dev.buffers[name]
                size = buf.count * size_of(buf.dtype)
            else:
                decl, d = dev.globals[name]
                address, size = dev.symbols[name].address, decl_size(decl, d)
            self._bases[tag] = (address - GLOBAL_BASE, size)
        return self._bases[tag]

    def read(self, tag: int, offsets: np.ndarray, width: int) -> np.ndarray | None:
        """The ``width``-byte little-endian values at byte ``offsets`` of the memory tagged ``tag``, as
        uint64 bits (None when one lies outside it)."""
        base = self._base(tag)
        if base is None:
            return None
        start, size = base
        off = np.asarray(offsets, dtype=np.int64)
        lo, hi = int(off.min()), int(off.max()) + width
        if lo < 0 or hi > size:
            return None
        memory = self._device.memory  # type: ignore[union-attr]
        if hi - lo <= SPAN_BYTES and width in (1, 2, 4, 8) and not np.any((off - lo) % width):
            span = memory[start + lo: start + hi]
            return span.view(f"<u{width}")[(off - lo) // width].astype(U64)
        idx = (start + off)[..., None] + np.arange(width)
        raw = memory[idx.reshape(-1)].reshape(*off.shape, width)
        weights = U64(1) << (U64(8) * np.arange(width, dtype=U64))
        return (raw.astype(U64) * weights).sum(axis=-1, dtype=U64)


def _exact_fill(buf: Buffer) -> bool:
    """Whether every slice of the buffer has the values of the whole (what the GPU run and the emulator read)."""
    return buf.fill != "random" or buf.dtype[0] == "f" or buf.count <= EXACT_RANDOM_ELEMENTS
