"""The source map: ``.loc`` / ``.file`` directives turned into a ``.cu`` position on every instruction."""

from __future__ import annotations

from ptxstatic.ptx import ast as A


def _byte(item: A.Expr) -> int | None:
    """The integer a ``.b8`` item holds, or None for what is not an integer constant (``1e400``, ``08``)."""
    if not isinstance(item, A.Imm):
        return None
    try:
        value = item.value
    except ValueError:
        return None
    return value if isinstance(value, int) else None


def debug_strings(module: A.Module) -> dict[str, str]:
    """Labels of ``.section .debug_str`` mapped to the NUL-terminated strings that follow them."""
    out: dict[str, str] = {}
    for sec in module.items:
        if not isinstance(sec, A.Section) or sec.name != "debug_str":
            continue
        label, buf = "", bytearray()
        for e in sec.entries:
            if e.label:
                label, buf = e.label, bytearray()
            elif e.directive == "b8" and label:
                for item in e.items:
                    b = _byte(item)
                    if b is not None:
                        if b == 0:
                            out[label] = buf.decode("utf-8", "replace")
                            label = ""
                            break
                        buf.append(b & 0xFF)
    return out


class SourceLocator:
    """Sets ``Instruction.loc`` from the ``.loc`` directive in force before each instruction, for the
    functions of a module given one at a time (the module needs only its ``.file`` directives and
    sections).

    An ``inlined_at`` position that an earlier ``.loc`` of the function named is that location, with its
    own ``inlined_at``: so nested inlining gives the whole chain of call sites.
    """

    def __init__(self, module: A.Module) -> None:
        self.module = module
        self.files = {i: f.path for i, f in module.files.items()}
        self.names: dict[str, str] | None = None
        self.cache: dict[tuple, A.SourceLoc | None] = {}  # keyed by the caller's id: cleared by forget()

    def forget(self) -> None:
        """Drop the locations shared between functions (call this before the functions are dropped)."""
        self.cache.clear()

    def attach(self, fn: A.Function) -> None:
        if fn.body is None:
            return
        cache = self.cache
        current: A.SourceLoc | None = None
        seen: dict[tuple[int, int, int], A.SourceLoc] = {}  # (file, line, column) -> its latest location
        for s in fn.statements:
            if isinstance(s, A.Instruction):
                s.loc = current
            elif isinstance(s, A.LocDirective):
                caller = seen.get(s.inlined_at) if s.inlined_at is not None else None
                key = (s.file, s.line, s.column, s.function_name, s.inlined_at, id(caller))
                if key not in cache:
                    if s.function_name and self.names is None:
                        self.names = debug_strings(self.module)
                    cache[key] = _loc(s, self.files, self.names or {}, caller)
                current = cache[key]
                if current is not None:
                    seen[(s.file, s.line, s.column)] = current


def _loc(d: A.LocDirective, files: dict[int, str], names: dict[str, str],
         caller: A.SourceLoc | None = None) -> A.SourceLoc | None:
    if d.line == 0:
        return None
    if d.inlined_at is not None and caller is None:
        f, line, col = d.inlined_at
        caller = A.SourceLoc(files.get(f, f"<file {f}>"), line, col)
    elif d.inlined_at is None:
        caller = None
    return A.SourceLoc(
        files.get(d.file, f"<file {d.file}>"), d.line, d.column, caller, names.get(d.function_name, d.function_name)
    )
