"""The C++ parameter names of a kernel (``saxpy(int n, float a, ...)`` gives ``n``, ``a``, ...), read from its
CUDA source with the tree-sitter CUDA grammar, so that ``--param n=4096`` names what the source names.

The source is the ``.cu`` file the module was compiled from, or the file its ``.loc`` directives name
(``-lineinfo``), looked up as written and beside the PTX file. The definition is the one that contains the
kernel's first source line, else the only one with the kernel's name and parameter count. Names are known
only when the parameter count matches the PTX; otherwise, or without the source, there are none.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ptxstatic.limits import CXX_SOURCE_BYTES
from ptxstatic.ptx.ast import FileDirective, Function, LocDirective, Module
from ptxstatic.ptx.kernels import demangle, spellings


def cxx_param_names(module: Module, kernel: Function) -> list[str | None]:
    """The C++ names of ``kernel``'s parameters in order, or ``[]`` when its source cannot be found or read."""
    n_params = sum(len(p.names) for p in kernel.params or ())
    source, line = _source_of(module, kernel)
    if source is None:
        return []
    definitions = _definitions(source)
    bare = spellings(demangle([kernel.name])[kernel.name])[3]
    found = [names for first, last, _, names in definitions if first <= line <= last and len(names) == n_params]
    if not found:
        found = [names for _, _, name, names in definitions if name == bare and len(names) == n_params]
    return list(found[0]) if len(found) == 1 else []


def _source_of(module: Module, kernel: Function) -> tuple[Path | None, int]:
    """The CUDA file of ``kernel`` and its first line there (0 when no ``.loc`` says)."""
    loc = next((s for s in kernel.statements if isinstance(s, LocDirective) and s.inlined_at is None), None)
    if module.filename.endswith(".cu"):
        candidates, line = [Path(module.filename)], loc.line if loc else 0
    else:
        files = {i.index: i for i in module.items if isinstance(i, FileDirective)}
        if loc is None or loc.file not in files:
            return None, 0
        written = Path(files[loc.file].path)
        here = Path(module.filename).parent
        candidates, line = [written, here / written, here / written.name], loc.line
    for path in candidates:
        try:
            if path.is_file() and path.stat().st_size <= CXX_SOURCE_BYTES:
                return path.resolve(), line
        except OSError:
            continue
    return None, 0


def _definitions(path: Path) -> list[tuple[int, int, str, tuple[str | None, ...]]]:
    """Every function definition in ``path`` (see :func:`_parsed`), or none when it cannot be read."""
    try:
        return _parsed(path, path.stat().st_mtime_ns)
    except OSError:
        return []


@lru_cache(maxsize=16)
def _parsed(path: Path, mtime_ns: int) -> list[tuple[int, int, str, tuple[str | None, ...]]]:
    """Every function definition in ``path``: first and last line (1-based), bare name, parameter names."""
    try:
        from tree_sitter import Language, Parser
        from tree_sitter_cuda import language
    except ImportError:
        return []
    try:
        source = path.read_bytes()
    except OSError:
        return []
    tree = Parser(Language(language())).parse(source)
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "function_definition":
            continue
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        if declarator is None:
            continue
        name = _text(declarator.child_by_field_name("declarator"))
        params = declarator.child_by_field_name("parameters")
        names = tuple(_identifier(p) for p in params.named_children if p.type.endswith("parameter_declaration")) \
            if params is not None else ()
        out.append((node.start_point[0] + 1, node.end_point[0] + 1, name.rpartition("::")[2].partition("<")[0],
                    names))
    return out


def _identifier(param) -> str | None:
    """The name a parameter declaration declares (through pointers, references and arrays), or None."""
    node = param.child_by_field_name("declarator")
    while node is not None and node.type not in ("identifier", "field_identifier"):
        node = node.child_by_field_name("declarator") or next(
            (c for c in node.named_children if c.type in ("identifier", "field_identifier")), None)
    return _text(node) or None


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""
