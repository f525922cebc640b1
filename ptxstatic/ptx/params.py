"""A kernel's parameters and the launch arguments bound to them, checked against each parameter's PTX type.

An argument names its parameter by PTX name (``saxpy_param_0``), index (``0``), ``param_<index>`` or, when the
caller knows the kernel's C++ source, the C++ parameter name (``n``). Numbers must fit the parameter's type:
an integer parameter takes an integer its width holds (``3.7``, ``1e30``, ``inf`` and ``nan`` are refused;
``.u32`` takes -2^31 to 2^32-1, as nvcc declares C++ ``int`` parameters ``.u32``), a
float parameter a value that does not overflow it, and an aggregate parameter no number at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Buffer
from ptxstatic.ptx.ast import Function, VarDecl
from ptxstatic.ptx.dtypes import int_range, is_float, size_of

Value = int | float | Buffer


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its index, PTX name, PTX type, whether it is an aggregate, and its C++ name."""

    index: int
    name: str
    dtype: str
    aggregate: bool
    cxx_name: str | None = None

    def describe(self) -> str:
        cxx = f"{self.cxx_name}, " if self.cxx_name else ""
        return f"parameter {self.index} ({cxx}{self.name}, .{self.dtype})"


def param_list(kernel: Function, cxx_names: Sequence[str | None] = ()) -> list[Param]:
    """The parameters of ``kernel`` in order; ``cxx_names``: their C++ names where known (same order)."""
    decls: list[tuple[VarDecl, str, bool]] = [(p, d.name, bool(d.dims)) for p in kernel.params or ()
                                              for d in p.names]
    names = list(cxx_names) if len(cxx_names) == len(decls) else [None] * len(decls)
    return [Param(i, name, p.dtype, agg, names[i]) for i, (p, name, agg) in enumerate(decls)]


def bind_args(kernel: Function, args: Mapping[str, Value],
              cxx_names: Callable[[], Sequence[str | None]] | None = None) -> dict[str, Value]:
    """The launch arguments keyed by PTX parameter name, each checked against its parameter's type.
    ``cxx_names`` gives the C++ parameter names; it is called only when an argument is not named by PTX
    name, index or ``param_<index>``.

    Raises :class:`PtxstaticError` naming the parameter for an unknown key, a parameter given twice, or a
    value its type cannot hold."""
    params = param_list(kernel)
    aliases = _aliases(params)
    if cxx_names is not None and any(key not in aliases for key in args):
        params = param_list(kernel, cxx_names())
        aliases = _aliases(params)
    out: dict[str, Value] = {}
    for key, value in args.items():
        p = aliases.get(key)
        if p is None:
            raise PtxstaticError(f"kernel {kernel.name} has no parameter {key!r}; its parameters: "
                                 + (", ".join(q.describe().removeprefix("parameter ") for q in params) or "none"))
        if p.name in out:
            raise PtxstaticError(f"{p.describe()} of {kernel.name} is given twice")
        out[p.name] = checked_value(p, value)
    return out


def _aliases(params: list[Param]) -> dict[str, Param]:
    aliases: dict[str, Param] = {}
    for p in params:
        aliases.update({p.name: p, str(p.index): p, f"param_{p.index}": p})
    for p in params:
        if p.cxx_name:
            aliases.setdefault(p.cxx_name, p)
    return aliases


def checked_value(p: Param, value: Value) -> Value:
    """``value`` as parameter ``p`` takes it (an integral float becomes an int), or a :class:`PtxstaticError`."""
    if p.aggregate:
        raise PtxstaticError(f"{p.describe()} is an aggregate (a struct or array passed by value): "
                             "it takes no number or buffer")
    if isinstance(value, Buffer):
        if is_float(p.dtype) or size_of(p.dtype) not in (4, 8):
            raise PtxstaticError(f"{p.describe()} cannot hold a device pointer")
        return value
    if is_float(p.dtype):
        return _float_value(p, value)
    return _int_value(p, value)


def _int_value(p: Param, given: int | float) -> int:
    if isinstance(given, float) and (not math.isfinite(given) or not given.is_integer()):
        raise PtxstaticError(f"{p.describe()} takes an integer, not {given!r}")
    value = int(given)
    lo, hi = int_range(p.dtype)
    if not p.dtype.startswith("s"):  # nvcc declares C++ int parameters .u32: unsigned and bit types take both
        lo = -(hi + 1) // 2
    if not lo <= value <= hi:
        raise PtxstaticError(f"{p.describe()} takes an integer in [{lo}, {hi}], not {given!r}")
    return value


def _float_value(p: Param, value: int | float) -> float:
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if p.dtype in ("f16", "f32", "f64"):
        biggest = float(np.finfo(np.dtype(p.dtype.replace("f", "float"))).max)
    else:  # bf16 and the packed half types: the f32 exponent range
        biggest = float(np.finfo(np.float32).max)
    if (math.isfinite(x) and abs(x) > biggest) or (not math.isfinite(x) and isinstance(value, int)):
        raise PtxstaticError(f"{p.describe()} takes a value within ±{biggest:.4g}, not {value!r}")
    return x
