"""Driving ``ptxstatic lsp`` from tests: the server command, a pytest-lsp client that keeps every
diagnostics notification with its version, and waits on them."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from support.paths import DATA, ROOT

LSP_DATA = DATA / "lsp"
SERVER = [sys.executable, "-m", "ptxstatic", "lsp"]


def server_env(**extra: str) -> dict[str, str]:
    """The server's environment: this checkout on the Python path, no user cache."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PTXSTATIC_NO_CACHE": "1"}
    return {**env, **extra}


def path_without(tool: str) -> str:
    """$PATH less the directories that hold ``tool``."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, tool)))


def make_client() -> LanguageClient:
    """A pytest-lsp client that also keeps every ``publishDiagnostics`` (``client.published``)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


def config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER, client_factory=make_client, server_env=server_env(**env))


async def start(client: LanguageClient, root: Path) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=from_fs_path(str(root))))


def copy_data(name: str, to: Path) -> Path:
    """A test input copied into ``to`` (so that edits and caches stay out of the repository)."""
    return Path(shutil.copy(LSP_DATA / name, to / name))


def uri_of(path: Path) -> str:
    return from_fs_path(str(path))


def open_document(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = uri_of(path)
    language = "ptx" if path.suffix == ".ptx" else "cuda"
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri, language, version, path.read_text() if text is None else text)))
    return uri


def replace_text(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """A ``didChange`` that replaces the whole text."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(text)]))


async def published(client: LanguageClient, uri: str, version: int | None = None,
                    timeout_s: float = 120.0) -> types.PublishDiagnosticsParams:
    """The first diagnostics published for ``uri`` (at ``version``), waiting up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        hit = next((p for p in client.published if p.uri == uri and (version is None or p.version == version)), None)
        if hit is not None:
            return hit
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no diagnostics for {uri} version {version} in {timeout_s:.0f} s")


async def hover(client: LanguageClient, uri: str, line: int, character: int = 0) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, character)))


def line_of(text: str, needle: str) -> int:
    """0-based line of the first line holding ``needle``."""
    return next(n for n, line in enumerate(text.splitlines()) if needle in line)
