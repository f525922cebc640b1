"""One document to findings: the per-file step of ``check``, and what the language server calls on a buffer.

:func:`analyse_document` takes a ``.cu``, ``.cuh`` or ``.ptx`` file (or an editor's unsaved text for it),
compiles CUDA with the flags its build records (``compile_commands.json``) or the configured ones, parses the
PTX and runs the rules. Nothing here prints or exits: input problems (nvcc's errors, PTX the parser rejects, a
rule that crashed) come back as :class:`Problem` records beside the findings of what could be analysed. The
compile stops when ``cancel`` is set, and the parse and the rules do not start after it
(:class:`~ptxstatic.toolchain.process.ToolCancelled` propagates).
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptxstatic.config import Config
from ptxstatic.errors import PtxstaticError
from ptxstatic.findings import Finding, Location, Note
from ptxstatic.limits import HOOK_KEPT_PTX_FILES
from ptxstatic.lint.cache import ResultCache
from ptxstatic.lint.compile_db import CompileDatabase, CompileSpec, configured_spec
from ptxstatic.user_cache import keep_copy

#: file suffix -> kind of document
KINDS = {".cu": "cu", ".cuh": "cuh", ".ptx": "ptx"}
_NVCC_ERROR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<message>.*)$", re.M)


@dataclass(frozen=True)
class Problem:
    """Why a file (or part of it) could not be analysed: a position (line 0: the file as a whole), a
    one-line message and, for a tool's failure, the tool's own output."""

    file: str
    line: int = 0
    column: int = 0
    message: str = ""
    detail: str = ""

    def render(self) -> str:
        """``FILE:LINE:COL: error: MESSAGE``, then the detail (nvcc's messages, the line and a caret)."""
        where = str(Location(self.file, self.line, self.column))
        return f"{where}: error: {self.message}" + (f"\n{self.detail}" if self.detail else "")


@dataclass(frozen=True)
class Kernel:
    name: str  # PTX name
    display_name: str  # demangled


@dataclass
class DocumentResult:
    """What analysing one document gave: findings (sorted), its kernels, problems, notes (such as the flags
    a CUDA file was compiled with when its build does not record it), the files it was made from, the
    compile spec (None for PTX), whether it came from the cache, and for a header checked through the
    translation units that include it, those units."""

    path: str
    kind: str
    findings: list[Finding] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    compile: CompileSpec | None = None
    cached: bool = False
    included_by: list[str] = field(default_factory=list)  # a header analysed through these files
    #: the parsed PTX (None from the cache or when nothing compiled), and the paths its ``.file`` directives
    #: name for the files they stand for (an editor's unsaved text is compiled from a temporary copy)
    module: Any = field(default=None, repr=False, compare=False)
    aliases: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def to_cache(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings], "dependencies": self.dependencies,
                "kernels": [[k.name, k.display_name] for k in self.kernels], "notes": self.notes}

    @classmethod
    def from_cache(cls, data: dict[str, Any], path: str, kind: str, spec: CompileSpec | None,
                   notes: list[str]) -> DocumentResult:
        every = list(dict.fromkeys([*notes, *data.get("notes", ())]))  # the compile's note, then the analysis's
        return cls(path, kind, [Finding.from_dict(f) for f in data["findings"]],
                   [Kernel(*k) for k in data["kernels"]], [], every, list(data["dependencies"]), spec, True)


def kind_of(path: str | Path) -> str | None:
    """``"cu"``, ``"cuh"`` or ``"ptx"`` by suffix, or None for other files."""
    return KINDS.get(Path(path).suffix)


def compile_spec(path: str | Path, config: Config, database: CompileDatabase | None,
                 nvcc_flags: str | None = None) -> tuple[CompileSpec, str | None]:
    """How a CUDA file is compiled: its ``compile_commands.json`` entry, else the configured flags (with a
    note saying why, when there is a database that lacks it)."""
    if database is not None:
        spec, why = database.lookup(path)
        if spec is not None:
            return spec, None
    else:
        why = None
    spec = configured_spec(config, nvcc_flags, header=kind_of(path) == "cuh")
    note = None if why is None else f"{path}: {why}; compiled with the configured flags: {' '.join(spec.args)}"
    return spec, note


def analyse_document(path: str | Path, config: Config, *, text: str | None = None,
                     database: CompileDatabase | None = None, nvcc_flags: str | None = None,
                     cancel: threading.Event | None = None, cache: ResultCache | None = None,
                     keep_module: bool = False) -> DocumentResult:
    """Findings of one ``.cu``/``.cuh``/``.ptx`` document under ``config``.

    ``text`` is the document's unsaved content (default: read the file); ``database`` the build's
    compilation database; ``nvcc_flags`` overrides the configuration's flags for files it lacks. Results are
    looked up in and stored to ``cache`` (not for unsaved text). ``keep_module`` keeps the parsed PTX in
    the result (``module``; not for a cached result) for callers that go on to predict its kernels.
    """
    path = str(path)
    kind = _kind(path)
    spec, notes = _spec(path, kind, config, database, nvcc_flags)
    try:
        content = text.encode() if text is not None else Path(path).read_bytes()
    except OSError as exc:
        return DocumentResult(path, kind, problems=[Problem(path, message=f"cannot read: {exc.strerror}")])
    key = None
    if cache is not None and text is None:
        key = _key(cache, path, kind, content, config, spec)
        hit = cache.get(key)
        if hit is not None:
            return DocumentResult.from_cache(hit, path, kind, spec, notes)
    result = DocumentResult(path, kind, notes=notes, compile=spec)
    if spec is None:
        _analyse_ptx(result, content.decode("utf-8", errors="replace"), config)
    else:
        _analyse_cuda(result, spec, config, text, cancel)
    if key is not None and not result.problems:
        cache.put(key, result.dependencies, result.to_cache())
    if not keep_module:
        result.module, result.aliases = None, {}
    return result


def cached_document(path: str | Path, config: Config, cache: ResultCache, *,
                    database: CompileDatabase | None = None, nvcc_flags: str | None = None) -> DocumentResult | None:
    """The cached result of :func:`analyse_document` for an unchanged file, or None (nothing is compiled)."""
    path = str(path)
    kind = _kind(path)
    spec, notes = _spec(path, kind, config, database, nvcc_flags)
    try:
        content = Path(path).read_bytes()
    except OSError:
        return None
    hit = cache.get(_key(cache, path, kind, content, config, spec))
    return None if hit is None else DocumentResult.from_cache(hit, path, kind, spec, notes)


def _kind(path: str) -> str:
    kind = kind_of(path)
    if kind is None:
        raise PtxstaticError(f"{path}: not a CUDA (.cu, .cuh) or PTX (.ptx) file")
    return kind


def _spec(path: str, kind: str, config: Config, database: CompileDatabase | None,
          nvcc_flags: str | None) -> tuple[CompileSpec | None, list[str]]:
    if kind == "ptx":
        return None, []
    spec, note = compile_spec(path, config, database, nvcc_flags)
    return spec, [note] if note else []


def _key(cache: ResultCache, path: str, kind: str, content: bytes, config: Config, spec: CompileSpec | None) -> str:
    # PTX: relative .file paths are read from the current directory, so it is part of the key
    return cache.key(path=path, kind=kind, content=content, config=config, compile=spec,
                     extra=os.getcwd() if spec is None else "")


def _analyse_ptx(result: DocumentResult, text: str, config: Config) -> None:
    from ptxstatic.loader import load_module

    module = load_module(result.path, text=text, recover=True).module  # invalid functions left out
    result.problems += [Problem(e.file, e.line, e.column, e.message, _caret(e)) for e in module.errors]
    result.dependencies = [os.path.abspath(result.path)]
    result.dependencies += [os.path.abspath(f.path) for f in module.files.values() if os.path.isfile(f.path)]
    result.module = module
    _lint(result, module, config, ptx_path=result.path, source_root=None)


def _analyse_cuda(result: DocumentResult, spec: CompileSpec, config: Config, text: str | None,
                  cancel: threading.Event | None) -> None:
    from ptxstatic.loader import load_module
    from ptxstatic.toolchain.nvcc import NvccFailed
    from ptxstatic.toolchain.process import ToolCancelled, scratch_directory

    source = os.path.abspath(result.path)
    with scratch_directory("ptxstatic-doc-") as tmp:
        compiled_source, args = source, list(spec.args)
        if text is not None:  # the editor's text, compiled beside its own directory's headers
            compiled_source = os.path.join(tmp, os.path.basename(source))
            Path(compiled_source).write_text(text, encoding="utf-8")
            args.append(f"-I{os.path.dirname(source)}")
        try:
            loaded = load_module(compiled_source, args, cwd=spec.directory, nvcc=spec.nvcc, cancel=cancel,
                                 name=result.path + ".ptx", recover=True, validate=False, dependencies=True)
        except NvccFailed as exc:
            result.problems.append(_nvcc_problem(result.path, exc, compiled_source))
            return
        except ToolCancelled:
            raise
        except PtxstaticError as exc:
            result.problems.append(Problem(result.path, message=str(exc)))
            return
        if cancel is not None and cancel.is_set():  # cancelled as nvcc finished: skip the parse and the rules
            raise ToolCancelled(f"{result.path}: cancelled")
        module = loaded.module
        result.problems += [Problem(result.path, message=f"nvcc's PTX cannot be parsed: {e}") for e in module.errors]
        result.dependencies = [source if d == compiled_source else d for d in loaded.dependencies]
        result.module = module
        if text is not None:
            result.aliases[compiled_source] = source
        _lint(result, module, config, ptx_path=module.filename, source_root=spec.directory)
    if text is not None:
        result.findings = [_moved(f, compiled_source, source) for f in result.findings]
    if any(f.source is None for f in result.findings):  # they point into the PTX: keep it to be opened
        kept = keep_copy(loaded.text.encode(), Path(source).stem, "ptx", HOOK_KEPT_PTX_FILES)
        if kept is not None:
            result.findings = [_moved(f, module.filename, str(kept)) for f in result.findings]
            result.dependencies.append(str(kept))


def _lint(result: DocumentResult, module: Any, config: Config, ptx_path: str,
          source_root: str | None) -> None:
    from ptxstatic.ptx.kernels import demangle
    from ptxstatic.rules.engine import lint_module
    from ptxstatic.toolchain.nvcc_command import include_dirs

    def failed(message: str) -> None:
        result.problems.append(Problem(result.path, message=f"internal error: {message}"))

    user, system = None, []
    if result.compile is not None:  # the checked file's neighbours are the user's (an editor's text: its copy's)
        user, system = include_dirs(result.compile.args, result.compile.directory)
        user += [os.path.dirname(os.path.abspath(p)) for p in (result.path, *result.aliases)]
    result.findings = lint_module(module, config, ptx_path=ptx_path, source_root=source_root, on_failure=failed,
                                  on_note=lambda message: result.notes.append(f"{result.path}: {message}"),
                                  include_dirs=user, system_dirs=system)
    names = demangle(k.name for k in module.kernels)
    result.kernels = [Kernel(k.name, names.get(k.name, k.name)) for k in module.kernels]


def _nvcc_problem(path: str, exc: Any, compiled_source: str) -> Problem:
    """nvcc's failure at its first error's line, with nvcc's whole output as the detail."""
    output = exc.output.replace(compiled_source, os.path.abspath(path))
    first = _NVCC_ERROR.search(output)
    if first is None:
        return Problem(path, message=f"nvcc could not compile this file (exit {exc.status})", detail=output)
    return Problem(first.group("file"), int(first.group("line")), 0,
                   f"nvcc could not compile this file (exit {exc.status}): {first.group('message')}", output)


def _caret(error: Any) -> str:
    if not error.source_line:
        return ""
    return f"  {error.source_line.rstrip()}\n  {' ' * max(0, error.column - 1)}^"


def _moved(finding: Finding, old: str, new: str) -> Finding:
    """``finding`` with locations in file ``old`` moved to ``new``."""

    def move(loc: Location | None) -> Location | None:
        return dataclasses.replace(loc, file=new) if loc is not None and loc.file == old else loc

    return dataclasses.replace(
        finding, ptx=move(finding.ptx), source=move(finding.source),
        inlined_at=tuple(move(x) for x in finding.inlined_at),
        notes=tuple(Note(n.message, move(n.location)) for n in finding.notes))
