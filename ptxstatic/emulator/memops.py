"""Memory instructions: ``ld``/``ldu``/``st`` in every state space, ``atom``/``red``, synchronous ``cp.async``.

``.param`` variables of device-function frames and call sites are per-lane byte arrays of the frame;
kernel parameters live in global memory, so ``ld.param`` of them (by name or by address) reads there.
Memory ordering, caching and scope qualifiers do not change results in a sequential emulator and are ignored.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptxstatic.emulator.code import Op, Operands, Reader
from ptxstatic.emulator.faults import EmulationError
from ptxstatic.emulator.lanes import WARP, lanes
from ptxstatic.emulator.observe import ATOMIC, LOAD, STORE, MemoryAccess
from ptxstatic.emulator.state import Frame, Parts, atomic, by_space, check, read, write
from ptxstatic.ptx.ast import Instruction, Reg, Vec
from ptxstatic.ptx.dtypes import np_type
from ptxstatic.ptx.isa import OpInfo


def _access(ops: Operands, info: OpInfo, i: int) -> tuple[str, Reader, str]:
    """(state space, address reader, name of a per-lane .param variable or "") of memory operand ``i``."""
    sym, addr = ops.address(i)
    space = info.space or "generic"
    if space == "param" and sym is not None and sym.kind == "param":
        return "param", addr, ops.items[i].base.name  # type: ignore[union-attr]
    if space in ("param", "const"):
        space = "global"
    if space not in ("global", "shared", "local", "generic"):
        raise EmulationError(f"memory access to .{space} is not supported")
    return space, addr, ""


def _observe(f: Frame, ins: Instruction | None, parts: Parts, width: int, kind: str) -> None:
    """Report a warp's access (split by :func:`by_space`) to the emulation's observer, if it has one (``ins``
    None: not reported)."""
    observer = f.device.observer
    if observer is None or ins is None:
        return
    for sp, a, mm in parts:
        lanes = np.flatnonzero(mm)
        if len(lanes):
            if type(a) is np.ndarray and a.shape == (WARP,) and a.dtype == np.uint64:
                where = a[lanes]  # a copy
            else:
                where = np.broadcast_to(np.asarray(a, dtype=np.uint64), (WARP,))[lanes].copy()
            observer(MemoryAccess(f.code.name, ins, f.cta.ctaid, f.warp.index, sp, kind, lanes, where, width))


def _as_const(parts: Parts) -> Parts:
    """An access to constant memory (which lives in global memory) as the observer is told of it."""
    return [("const", a, mm) for _, a, mm in parts]


def _touch(space: str, addr: Reader, ins: Instruction | None, width: int, kind: str, constant: bool = False) -> Op:
    """A load or store left out of an address-watching emulation: its access is observed and checked for
    faults, and nothing is read or written."""
    def run(f, m):
        parts = by_space(space, addr(f), m)
        _observe(f, ins, _as_const(parts) if constant else parts, width, kind)
        check(f, parts, width)

    return run


def _observed(ops: Operands, info: OpInfo) -> Instruction | None:
    """The instruction, when its accesses are reported to observers (not those of .param)."""
    return ops.ins if info.space != "param" else None


def _param_slice(f: Frame, name: str, offset: int, width: int) -> np.ndarray:
    store = f.param(name)
    if offset + width > store.shape[1]:
        grown = np.zeros((WARP, offset + width), dtype=np.uint8)
        grown[:, : store.shape[1]] = store
        f.params[name] = store = grown
    return store[:, offset: offset + width]


def _element(info: OpInfo) -> tuple[str, np.dtype]:
    if not info.types:
        raise EmulationError("memory instruction has no type")
    ty = info.types[-1]
    return ty, np_type(ty)


def _ld(ops: Operands, info: OpInfo) -> Op:
    ty, dt = _element(info)
    dst = ops.items[0]
    writers = [ops.writer(item, ty) for item in (dst.items if isinstance(dst, Vec) else (dst,))]
    space, addr, pname = _access(ops, info, 1)
    width = dt.itemsize * len(writers)
    ins = _observed(ops, info)
    constant = info.space == "const"  # read from global memory, reported as .const

    if ops.address_only and not pname:  # its value is not needed: the access, without reading memory
        return _touch(space, addr, ins, width, LOAD, constant)

    def run(f, m):
        if pname:
            raw = np.ascontiguousarray(_param_slice(f, pname, int(addr(f)), width))
        else:
            parts = by_space(space, addr(f), m)
            _observe(f, ins, _as_const(parts) if constant else parts, width, LOAD)
            raw = read(f, parts, width)
        values = raw.view(dt)
        for k, w in enumerate(writers):
            w(f, values[:, k], m)

    return run


def _st(ops: Operands, info: OpInfo) -> Op:
    ty, dt = _element(info)
    src = ops.items[1]
    readers = [ops.reader(item, ty) for item in (src.items if isinstance(src, Vec) else (src,))]
    space, addr, pname = _access(ops, info, 0)
    ins = _observed(ops, info)

    if ops.address_only and not pname:  # no value read from memory is needed: the access, writing nothing
        return _touch(space, addr, ins, dt.itemsize * len(readers), STORE)

    def run(f, m):
        values = np.empty((WARP, len(readers)), dtype=dt)
        for k, r in enumerate(readers):
            values[:, k] = r(f)
        data = values.view(np.uint8)
        if pname:
            target = _param_slice(f, pname, int(addr(f)), data.shape[1])
            target[m] = data[m]
        else:
            parts = by_space(space, addr(f), m)
            _observe(f, ins, parts, data.shape[1], STORE)
            write(f, parts, data)

    return run


_ATOMIC: dict[str, Callable[..., np.ndarray]] = {
    "add": lambda old, b, c: old + b,
    "min": lambda old, b, c: np.fmin(old, b) if old.dtype.kind == "f" else np.minimum(old, b),
    "max": lambda old, b, c: np.fmax(old, b) if old.dtype.kind == "f" else np.maximum(old, b),
    "and": lambda old, b, c: old & b, "or": lambda old, b, c: old | b, "xor": lambda old, b, c: old ^ b,
    "exch": lambda old, b, c: b,
    "cas": lambda old, b, c: np.where(old == b, c, old),
    "inc": lambda old, b, c: np.where(old >= b, old.dtype.type(0), old + old.dtype.type(1)),
    "dec": lambda old, b, c: np.where((old == 0) | (old > b), b, old - old.dtype.type(1)),
}

#: (operation, is float) -> the ufunc that applies it, for atomics that collide within a warp
_SCANS = {
    **{("add", fl): np.add for fl in (False, True)},
    ("min", False): np.minimum, ("max", False): np.maximum, ("min", True): np.fmin, ("max", True): np.fmax,
    ("and", False): np.bitwise_and, ("or", False): np.bitwise_or, ("xor", False): np.bitwise_xor,
}


def _atom(ops: Operands, info: OpInfo) -> Op:
    name = next((o for o in info.other if o in _ATOMIC), "")
    if not name:
        raise EmulationError(f"{info.opcode} operation {'.'.join(info.other)} is not supported")
    ty, dt = _element(info)
    if ty in ("bf16", "bf16x2", "f16x2") or info.vec > 1:
        raise EmulationError(f"{info.opcode} on .{ty} is not supported")
    first = 0 if info.opcode == "red" else 1
    space, addr, pname = _access(ops, info, first)
    if pname:
        raise EmulationError("atomics on .param are not defined")
    b = ops.read(first + 1, ty)
    c = ops.read(first + 2, ty) if name == "cas" else (lambda f: dt.type(0))
    dest = ops.write(0, ty) if first else None
    fn = _ATOMIC[name]
    ufunc = _SCANS.get((name, dt.kind == "f"))
    ins = _observed(ops, info)

    def run(f, m):
        bv, cv = lanes(b(f)), lanes(c(f))
        parts = by_space(space, np.broadcast_to(addr(f), (WARP,)), m)
        _observe(f, ins, parts, dt.itemsize, ATOMIC)
        old = atomic(f, parts, dt, lambda o, ln: fn(o, bv[ln], cv[ln]),
                     (ufunc, bv) if ufunc is not None else None)
        if dest is not None:
            dest(f, old, m)

    return run


def _cp_async(ops: Operands, info: OpInfo) -> Op:
    """``cp.async`` done at once: the copy is complete before any wait instruction, which is then a no-op."""
    dst_addr, src_addr = ops.address(0)[1], ops.address(1)[1]
    size = int(ops.items[2].value)  # type: ignore[union-attr]
    extra = ops.items[3] if (len(ops) > 3 and "L2::cache_hint" not in info.cache) or len(ops) > 4 else None
    ignore = src_size = None
    if isinstance(extra, Reg) and ops.scope.reg_type(extra.name).kind == "b":
        ignore = ops.pred(3)
    elif extra is not None:
        src_size = ops.read(3, "u32")

    ins = ops.ins

    def run(f, m):
        src, dst = by_space("global", src_addr(f), m), by_space("shared", dst_addr(f), m)
        _observe(f, ins, src, size, LOAD)
        _observe(f, ins, dst, size, STORE)
        data = read(f, src, size)
        if src_size is not None:
            data[np.arange(size)[None, :] >= lanes(src_size(f))[:, None]] = 0
        if ignore is not None:
            data[lanes(ignore(f))] = 0
        write(f, dst, data)

    return run


def _createpolicy(ops: Operands, info: OpInfo) -> Op:
    dest = ops.write(0, "b64")
    return lambda f, m: dest(f, np.uint64(0), m)


def _nothing(ops: Operands, info: OpInfo) -> Op:
    return lambda f, m: None


#: instructions with no effect on a sequentially consistent, timing-free model
_NO_OPS = (
    "membar", "fence", "nanosleep", "pmevent", "griddepcontrol", "setmaxnreg", "prefetch", "prefetchu",
    "bar.warp.sync", "discard", "applypriority", "cp.async.commit_group", "cp.async.wait_group",
    "cp.async.wait_all",
)

BUILDERS: dict[str, Callable[[Operands, OpInfo], Op]] = {
    "ld": _ld, "ldu": _ld, "st": _st, "atom": _atom, "red": _atom, "cp.async": _cp_async,
    "createpolicy": _createpolicy, **dict.fromkeys(_NO_OPS, _nothing),
}
