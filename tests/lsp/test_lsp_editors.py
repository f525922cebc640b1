"""README's editor set-ups, run as written: Neovim headless with the ``init.lua`` snippet (its built-in LSP
client starts ``ptxstatic lsp``, opens a ``.cu`` file, and the diagnostics it received are written out),
and the VS Code generic client's settings (their command, arguments and language ids drive the server)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig
from support.lsp import copy_data, hover, line_of, make_client, published, server_env, start
from support.paths import ROOT, needs_nvcc

from ptxstatic.config import config_for
from ptxstatic.lint.document import analyse_document

README = (ROOT / "README.md").read_text()
NVIM = shutil.which("nvim")
#: waits for the server's diagnostics, then writes what Neovim holds for the buffer as JSON
COLLECT = """
local buf = vim.api.nvim_get_current_buf()
local function ours()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == "ptxstatic" then
      local lsp = d.user_data and d.user_data.lsp or {}
      table.insert(out, { lnum = d.lnum, col = d.col, message = d.message, code = d.code or lsp.code })
    end
  end
  return out
end
local received = vim.wait(180000, function() return #ours() > 0 end, 100)
local f = assert(io.open(os.getenv("PTXSTATIC_NVIM_OUT"), "w"))
f:write(vim.fn.json_encode({ received = received, diagnostics = ours() }))
f:close()
vim.cmd("qa!")
"""


def snippet(name: str) -> str:
    """The code block between README's ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""
    block = re.search(rf"<!-- {name}:start -->\n```\w+\n(.*?)```\n<!-- {name}:end -->", README, re.S)
    assert block is not None, f"README has no {name} snippet"
    return block.group(1)


def _nvim_version() -> tuple[int, ...] | None:
    if NVIM is None:
        return None
    out = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _nvim_skip() -> str | None:
    version = _nvim_version()
    if NVIM is None:
        return "nvim is not on the PATH (Debian: apt-get install neovim)"
    if version is None or version < (0, 7):
        return f"Neovim {version} is older than 0.7, which the README snippet needs"
    return None


def _launcher(directory: Path) -> str:
    """A ``ptxstatic`` command running this checkout, first on the returned $PATH."""
    directory.mkdir()
    exe = directory / "ptxstatic"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m ptxstatic \"$@\"\n")
    exe.chmod(0o755)
    return os.pathsep.join([str(directory), os.environ.get("PATH", "")])


@needs_nvcc
@pytest.mark.skipif(_nvim_skip() is not None, reason=_nvim_skip() or "")
def test_neovim_with_the_readme_init_lua_receives_checks_diagnostics(tmp_path: Path):
    source = copy_data("kernels.cu", tmp_path)
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    init = tmp_path / "init.lua"
    init.write_text(snippet("neovim-lsp"))
    collect = tmp_path / "collect.lua"
    collect.write_text(COLLECT)
    out = tmp_path / "diagnostics.json"
    env = {**server_env(), "PATH": _launcher(tmp_path / "bin"), "PTXSTATIC_NVIM_OUT": str(out), "HOME": str(home),
           **{f"XDG_{k}_HOME": str(home / k.lower()) for k in ("CONFIG", "DATA", "STATE", "CACHE")}}
    subprocess.run([NVIM, "--headless", "-i", "NONE", "-u", str(init), "-c", f"luafile {collect}", str(source)],
                   cwd=tmp_path, env=env, timeout=300, check=True, stdin=subprocess.DEVNULL, capture_output=True)
    got = json.loads(out.read_text())
    assert got["received"], "Neovim received the server's diagnostics"
    expected = analyse_document(source, config_for(source)).findings
    assert {(d["code"], d["lnum"] + 1) for d in got["diagnostics"]} == {(f.code, f.source.line) for f in expected}
    assert any("bar.sync" in d["message"] for d in got["diagnostics"])


def _vscode_settings() -> dict:
    return json.loads(snippet("vscode-lsp"))


@pytest.mark.asyncio
async def test_the_vscode_settings_start_the_server_for_their_language_ids(tmp_path: Path):
    settings = _vscode_settings()
    assert settings["files.associations"] == {"*.ptx": "ptx"}
    command = [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]]
    config = ClientServerConfig(server_command=command, client_factory=make_client,
                                server_env={**server_env(), "PATH": _launcher(tmp_path / "bin")})
    client = await config.start()
    try:
        await start(client, tmp_path)
        ptx = copy_data("kernels.ptx", tmp_path)
        documents = [(ptx, "ptx")]
        if shutil.which("nvcc"):
            documents.append((copy_data("kernels.cu", tmp_path), "cuda-cpp"))
        assert {language for _, language in documents} <= set(settings["glspc.server.languageId"])
        for path, language in documents:
            uri = path.as_uri()
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri, language, 1, path.read_text())))
            await published(client, uri, 1)
            kernel = "void polynomial(" if language == "cuda-cpp" else ".entry polynomial("
            answer = await hover(client, uri, line_of(path.read_text(), kernel))
            assert answer is not None and "Minimum energy at mem" in answer.contents.value
    finally:
        await client.shutdown_session()
        await client.stop()

