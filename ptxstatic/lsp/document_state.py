"""The language server's work on one document version, run in worker threads: the lint pipeline
(``lint.document``) with the document's configuration and compilation database, and each kernel's insight,
computed once per analysis."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ptxstatic.config import Config, config_for
from ptxstatic.errors import PtxstaticError
from ptxstatic.lint.compile_db import find_database, load_database
from ptxstatic.lint.document import DocumentResult, Problem, analyse_document, kind_of
from ptxstatic.lint.insight import KernelInsight, kernel_insight
from ptxstatic.lsp.kernels import base_name


@dataclass
class Analysis:
    """One version of a document analysed: its text, the lint result (with the parsed PTX), the
    configuration it was analysed under (None when it could not be read), and the kernel insights computed
    so far."""

    version: int
    text: str
    result: DocumentResult
    config: Config | None
    insights: dict[str, KernelInsight] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def kernels_named(self, name: str) -> list[str]:
        """PTX names of the kernels whose identifier (CUDA) or PTX name is ``name``."""
        if self.result.kind == "ptx":
            return [k.name for k in self.result.kernels if k.name == name]
        return [k.name for k in self.result.kernels if base_name(k.display_name) == name]

    def insight(self, kernel: str) -> KernelInsight | None:
        """The kernel's insight (computed on first use; None without the parsed PTX or such a kernel)."""
        with self._lock:
            if kernel in self.insights:
                return self.insights[kernel]
        module = self.result.module
        fn = next((k for k in module.kernels if k.name == kernel), None) if module is not None else None
        if fn is None or self.config is None:
            return None
        display = next(k.display_name for k in self.result.kernels if k.name == kernel)
        try:
            found = kernel_insight(module, fn, display, self.config.gpu, self.config.launch, self.result.aliases)
        except Exception as exc:  # one kernel's failure must not cost the others their hover
            found = KernelInsight(kernel, display, None, (), False, f"internal error: {type(exc).__name__}: {exc}")
        with self._lock:
            self.insights[kernel] = found
        return found

    def all_insights(self) -> None:
        """Compute every kernel's insight (ahead of the hovers that will read them)."""
        for k in self.result.kernels:
            self.insight(k.name)


def analyse(path: str, text: str, version: int, cancel: threading.Event) -> Analysis:
    """Lint one document version from the editor's text; a configuration or compilation-database error is
    the document's problem. Raises :class:`~ptxstatic.toolchain.process.ToolCancelled` when ``cancel`` is set
    during the compile."""
    from ptxstatic.toolchain.process import ToolCancelled

    kind = kind_of(path) or "cu"
    try:
        config = config_for(path)
        database_path = None if kind == "ptx" else find_database(path, config.build_path)
        database = load_database(database_path) if database_path is not None else None
        result = analyse_document(path, config, text=text, database=database, cancel=cancel, keep_module=True)
    except ToolCancelled:
        raise
    except PtxstaticError as exc:
        problem = Problem(path, message=exc.render().removeprefix("error: "))
        return Analysis(version, text, DocumentResult(path, kind, problems=[problem]), None)
    return Analysis(version, text, result, config)
