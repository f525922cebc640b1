"""``ptxstatic lsp``: a Language Server (pygls, stdio) for ``.cu``, ``.cuh`` and ``.ptx`` documents.

Diagnostics are the findings of ``check`` (same rules, codes and suppression comments), published when a
document is opened or saved and, after :data:`~ptxstatic.limits.LSP_DEBOUNCE_S` without edits, when it
changes. Analyses run in worker threads, so requests are answered while nvcc compiles; a newer edit
cancels the running analysis (nvcc is killed). A hover on a kernel's header shows its predicted scaling,
minimum-energy clocks, whether it is memory- or compute-bound and its hottest blocks; a quick fix adds the
``// ptxstatic: ignore[PSnnn]`` comment for a finding. A file that cannot be analysed (nvcc missing, a
compile error, a crashed rule) gets a diagnostic, and a message when it concerns the file as a whole.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ptxstatic import __version__
from ptxstatic.limits import LSP_DEBOUNCE_S
from ptxstatic.lint.document import kind_of
from ptxstatic.lsp.document_state import Analysis, analyse
from ptxstatic.lsp.kernels import kernel_spans
from ptxstatic.lsp.presentation import SOURCE, diagnostics, hover_markdown, suppression_edit


@dataclass
class _Document:
    """The server's state of one open document: the version last seen, the analysis task for it and its
    cancel event, and the latest finished analysis."""

    version: int = 0
    task: asyncio.Task | None = None
    cancel: threading.Event | None = None
    analysis: Analysis | None = None


class PtxstaticServer(LanguageServer):
    """The server: open documents, a pool for analyses and one for hovers (so that a hover never waits
    behind a compile), and the whole-file messages already shown."""

    def __init__(self, debounce_s: float = LSP_DEBOUNCE_S) -> None:
        super().__init__("ptxstatic", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce_s = debounce_s
        self.documents: dict[str, _Document] = {}
        self.analyses = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ptxstatic-analysis")
        self.insights = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptxstatic-hover")
        self.shown: set[str] = set()

    def schedule(self, uri: str, version: int, delay: float) -> None:
        """Analyse ``uri`` at ``version`` after ``delay`` seconds, cancelling the analysis of older versions."""
        doc = self.documents.setdefault(uri, _Document())
        self.cancel(uri, doc, f"version {version} replaces it")
        doc.version = version
        doc.task = asyncio.get_running_loop().create_task(self._run(uri, doc, version, delay))

    def cancel(self, uri: str, doc: _Document, why: str) -> None:
        """Stop the document's pending or running analysis (a running compile is killed)."""
        if doc.task is None or doc.task.done():
            return
        doc.task.cancel()
        if doc.cancel is not None and not doc.cancel.is_set():
            doc.cancel.set()
            self.log(f"analysis of {uri} (version {doc.version}) cancelled: {why}")

    async def _run(self, uri: str, doc: _Document, version: int, delay: float) -> None:
        from ptxstatic.toolchain.process import ToolCancelled

        if delay > 0:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        cancel = doc.cancel = threading.Event()
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(self.analyses, analyse, document.path, document.source, version, cancel)
        except ToolCancelled:
            return
        except Exception as exc:  # a crash in one analysis: say so, keep serving
            self.message(types.MessageType.Error, f"ptxstatic could not analyse {document.path}: "
                                                  f"{type(exc).__name__}: {exc}")
            return
        if cancel.is_set() or doc.version != version:
            return
        doc.analysis = found
        self.publish(uri, found)
        loop.run_in_executor(self.insights, found.all_insights)

    def publish(self, uri: str, found: Analysis) -> None:
        """A message for each problem of the file as a whole, then the analysis's diagnostics (in that order,
        so a client that has the diagnostics has the messages too)."""
        for p in found.result.problems:
            if p.line == 0 and p.message not in self.shown:
                self.shown.add(p.message)
                self.message(types.MessageType.Warning, f"ptxstatic: {p.message}")
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri, diagnostics(found.result, found.text), version=found.version))

    def message(self, kind: types.MessageType, text: str) -> None:
        self.window_show_message(types.ShowMessageParams(kind, text))

    def log(self, text: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Log, text))

    async def latest(self, uri: str) -> Analysis | None:
        """The document's latest analysis, waiting for the one under way when there is none yet."""
        doc = self.documents.get(uri)
        if doc is None:
            return None
        if doc.analysis is None and doc.task is not None:
            try:
                await asyncio.shield(doc.task)
            except asyncio.CancelledError:
                return None
        return doc.analysis

    def close(self, uri: str) -> None:
        doc = self.documents.pop(uri, None)
        if doc is not None:
            self.cancel(uri, doc, "the document was closed")
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))


server = PtxstaticServer()


def _analysable(uri: str) -> bool:
    """A ``.cu``, ``.cuh`` or ``.ptx`` file on disk (not an editor's untitled buffer)."""
    return kind_of(uri) is not None and to_fs_path(uri) is not None


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: PtxstaticServer, params: types.DidOpenTextDocumentParams) -> None:
    if _analysable(params.text_document.uri):
        ls.schedule(params.text_document.uri, params.text_document.version, 0.0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: PtxstaticServer, params: types.DidChangeTextDocumentParams) -> None:
    if _analysable(params.text_document.uri):
        ls.schedule(params.text_document.uri, params.text_document.version, ls.debounce_s)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: PtxstaticServer, params: types.DidSaveTextDocumentParams) -> None:
    """Analyse the saved document again, and the open documents whose last compile read it (a header)."""
    saved = os.path.realpath(to_fs_path(params.text_document.uri) or "")
    for uri, doc in list(ls.documents.items()):
        read = doc.analysis.result.dependencies if doc.analysis is not None else []
        if uri == params.text_document.uri or saved in {os.path.realpath(d) for d in read}:
            ls.schedule(uri, doc.version, 0.0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: PtxstaticServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.close(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: PtxstaticServer, params: types.HoverParams) -> types.Hover | None:
    """The insight of the kernel whose header holds the cursor (every instantiation of a template)."""
    uri, line = params.text_document.uri, params.position.line
    kind = kind_of(uri)
    found = await ls.latest(uri) if kind is not None else None
    if found is None:
        return None
    span = next((s for s in kernel_spans(found.text, kind) if s.first <= line <= s.last), None)
    if span is None:
        return None
    loop = asyncio.get_running_loop()
    insights = [await loop.run_in_executor(ls.insights, found.insight, k) for k in found.kernels_named(span.name)]
    parts = [hover_markdown(i, found.result.path) for i in insights if i is not None]
    if not parts:
        return None
    content = types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts))
    return types.Hover(content, types.Range(types.Position(span.first, 0), types.Position(span.last + 1, 0)))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: PtxstaticServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """For each finding at the cursor that a comment can silence: add ``// ptxstatic: ignore[CODE]``."""
    uri = params.text_document.uri
    lines = ls.workspace.get_text_document(uri).lines
    actions = []
    for d in params.context.diagnostics:
        line = d.data.get("suppress_line") if d.source == SOURCE and isinstance(d.data, dict) else None
        if not isinstance(line, int) or not isinstance(d.code, str) or not 0 <= line < len(lines):
            continue
        edit = suppression_edit(lines[line], line, d.code)
        actions.append(types.CodeAction(
            f"Ignore {d.code} on this line (// ptxstatic: ignore[{d.code}])", kind=types.CodeActionKind.QuickFix,
            diagnostics=[d], edit=types.WorkspaceEdit(changes={uri: [edit]})))
    return actions


@server.feature(types.SHUTDOWN)
def shutdown(ls: PtxstaticServer, params: None) -> None:
    for uri, doc in list(ls.documents.items()):
        ls.cancel(uri, doc, "the server is shutting down")
    ls.analyses.shutdown(wait=False, cancel_futures=True)
    ls.insights.shutdown(wait=False, cancel_futures=True)


def serve() -> None:
    """Speak LSP over standard input and output until the client exits."""
    server.start_io()
