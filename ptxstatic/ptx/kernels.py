"""C++ kernel names: demangling (``_Z14tmpl_block_sumIfLi256EEvPKT_PS0_i`` to
``void tmpl_block_sum<float, 256>(float const*, float*, int)``) with the C++ runtime's own demangler
(``abi::__cxa_demangle`` through the ``cxxfilt`` binding: no binutils needed), and finding kernels by the
name a user types: the PTX name, the full signature, the name with template arguments (``reduce<float>``),
or the bare name (``reduce``, ``ns::reduce``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import DEMANGLE_NAME_CHARS
from ptxstatic.ptx.ast import Function, Module


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Each name mapped to its demangled form; a name that is not mangled, longer than
    :data:`~ptxstatic.limits.DEMANGLE_NAME_CHARS` (the demangler's work is bounded by the name's length), or
    that the demangler cannot read (or every name, when the C++ runtime library cannot be found), maps to
    itself."""
    import cxxfilt  # finds the C++ runtime library on first import

    out = {}
    for name in dict.fromkeys(names):
        try:
            wanted = name.startswith("_Z") and len(name) <= DEMANGLE_NAME_CHARS
            out[name] = cxxfilt.demangle(name) if wanted else name
        except cxxfilt.Error:
            out[name] = name
    return out


def _strip_tail(text: str, close: str, open_: str) -> str:
    """``text`` without a trailing bracketed group (``(int, float)`` or ``<float, 256>``), if it has one."""
    if not text.endswith(close):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += (text[i] == close) - (text[i] == open_)
        if depth == 0:
            return text[:i]
    return text


def spellings(demangled: str) -> list[str]:
    """The names a user may type for a kernel, most specific first: the full signature, the name with its
    template arguments (no parameter list, no ``void`` return type), the name without them, and the
    unqualified name (without namespaces or classes); spaces removed."""
    full = demangled.replace(" ", "")
    named = _strip_tail(demangled, ")", "(").removeprefix("void ").replace(" ", "")
    bare = _strip_tail(named, ">", "<")
    return [full, named, bare, bare.rpartition("::")[2]]


def designates(ptx_name: str, name: str) -> bool:
    """Whether ``name`` is one of the names of the function ``ptx_name`` (see :func:`spellings`), for callers
    that see one function at a time."""
    return name == ptx_name or name.replace(" ", "") in spellings(demangle([ptx_name])[ptx_name])


def find_kernels(module: Module, name: str, *, functions: bool = False) -> list[Function]:
    """The kernels (with ``functions``, the defined functions) of ``module`` that ``name`` designates: the one
    with that PTX name, else those whose demangled name matches at the most specific level any kernel does.
    A :class:`PtxstaticError` listing the kernels when none does."""
    kernels = [f for f in module.functions if f.body is not None] if functions else module.kernels
    exact = [k for k in kernels if k.name == name]
    if exact:
        return exact
    wanted = name.replace(" ", "")
    readable = demangle(k.name for k in kernels)
    forms = {k.name: spellings(readable[k.name]) for k in kernels}
    for level in range(4):
        found = [k for k in kernels if forms[k.name][level] == wanted]
        if found:
            return found
    names = ", ".join(readable[k.name] if readable[k.name] == k.name else f"{readable[k.name]} ({k.name})"
                      for k in kernels)
    what = "function" if functions else "kernel"
    raise PtxstaticError(f"{module.filename}: no {what} named {name!r}; {what}s: {names or 'none'}")


def find_kernel(module: Module, name: str) -> Function:
    """The one kernel ``name`` designates (see :func:`find_kernels`); an error when it designates several."""
    found = find_kernels(module, name)
    if len(found) > 1:
        readable = demangle(k.name for k in found)
        raise PtxstaticError(f"{module.filename}: {name!r} names {len(found)} kernels; give one of: "
                             + ", ".join(f"{readable[k.name]!r} ({k.name})" for k in found))
    return found[0]
