"""The hook's analysis server in real builds: one server for compiles at once, a server killed mid-build, a
socket left by a dead server, a server of other code, idle shutdown, turning it off, the result cache and the
budget of a translation unit. Every compile is a real nvcc run through the hook's launcher; every server is
the real one, started by the builds themselves."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.hook import (
    copy_project,
    diagnostics,
    expect_ps201,
    hook_env,
    hook_launcher,
    run,
    server_dir,
    server_log,
    server_pids,
    server_socket,
    serving,
    stop_servers,
    tool,
    wait_until,
)
from support.paths import ROOT, needs_nvcc

from ptxstatic.limits import HOOK_SERVER_SHAPES_S

pytestmark = [needs_nvcc, pytest.mark.slow]

FLAGS = ["-c", "-arch=sm_90", "-lineinfo"]


@pytest.fixture
def build(tmp_path: Path):
    """(project, environment, hook): a copy of the test project, a private cache and the launcher; the servers
    the test's builds started are stopped afterwards."""
    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path)
    yield project, env, str(hook_launcher(tmp_path / "bin"))
    stop_servers(env)


def _compile(hook: str, project: Path, env: dict[str, str], source: str = "src/kernel.cu", *extra: str):
    result = run([hook, *extra, "nvcc", *FLAGS, source, "-o", Path(source).stem + ".o"], project, env)
    assert result.returncode == 0, result.stderr
    return result


def _copies(project: Path, count: int) -> list[str]:
    """``count`` translation units like src/kernel.cu (the same barrier under a condition, PS201)."""
    text = (project / "src/kernel.cu").read_text()
    for i in range(count):
        (project / f"src/k{i}.cu").write_text(text)
    return [f"src/k{i}.cu" for i in range(count)]


def _expect_each_once(output: str, project: Path, sources: list[str]) -> None:
    """One PS201 warning per source, each with the inlined-from note at its own call site."""
    assert len([m for m in diagnostics(output) if m.group(4) == "warning"]) == len(sources), output
    for source in sources:
        notes = [line for line in output.splitlines() if line.startswith(f"{source}:")
                 and line.endswith(": note: inlined from here")]
        assert len(notes) == 1, (source, output)


def test_compiles_at_once_share_one_server(build):
    project, env, hook = build
    sources = _copies(project, 6)
    procs = [subprocess.Popen([hook, "nvcc", *FLAGS, s, "-o", Path(s).stem + ".o"], cwd=project, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in sources]
    for source, proc in zip(sources, procs):
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        expect_ps201(err, project / "src", "src/util.cuh", caller=source)  # its own findings, no one else's
    assert server_log(env).count("serving") == 1
    assert [serving(pid) for pid in server_pids(env)] == [True]
    assert all((project / f"{Path(s).stem}.o").stat().st_size > 0 for s in sources)


def _makefile(project: Path, sources: list[str]) -> None:
    objects = [f"build/{Path(s).stem}.o" for s in sources]
    rules = "".join(f"{o}: {s} src/util.cuh\n\tmkdir -p build && $(NVCC) {' '.join(FLAGS)} {s} -o {o}\n"
                    for o, s in zip(objects, sources))
    (project / "Makefile").write_text(f"NVCC ?= nvcc\nall: {' '.join(objects)}\n{rules}")


def test_a_server_killed_mid_build(build):
    project, env, hook = build
    make = tool("make")
    if make is None:
        pytest.skip("make is not installed")
    sources = _copies(project, 6)
    _makefile(project, sources)
    proc = subprocess.Popen([make, "-j2", f"NVCC={hook} nvcc"], cwd=project, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert wait_until(lambda: "serving" in server_log(env) if server_dir(env).is_dir() else False, 300)
    os.kill(server_pids(env)[0], signal.SIGKILL)  # while the first compiles run, with four to come
    assert proc.poll() is None
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    _expect_each_once(output, project, sources)
    assert server_log(env).count("serving") == 2  # the next compile found the dead server's socket, started one
    assert all((project / f"build/{Path(s).stem}.o").exists() for s in sources)


def _lingering_nvcc(directory: Path, marker: Path) -> str:
    """An ``nvcc`` that runs the real one, then stays a second longer, writes its pid to ``marker`` and exits
    with nvcc's status: a compile that the hook still waits for well after nvcc's PTX is complete."""
    directory.mkdir()
    script = directory / "nvcc"
    script.write_text(f'#!/bin/sh\n"{tool("nvcc")}" "$@"\nstatus=$?\nsleep 1\necho $$ > "{marker}"\n'
                      'exit $status\n')
    script.chmod(0o755)
    return str(script)


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has exited and been reaped."""
    return not Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize("when", ["while nvcc runs", "after nvcc"])
def test_a_server_killed_during_a_compile(build, tmp_path: Path, when: str):
    """Killed once it has taken the compile's PTX in: while nvcc runs, the hook captures nvcc's PTX itself (nvcc
    has not deleted it yet); after nvcc (the server stopped before it answered), the hook analyses what the
    server had taken in. After nvcc, the compiler lingers a second after its PTX is complete, so that the server
    is stopped before it can answer however late this test sees the PTX."""
    project, env, hook = build
    env["TMPDIR"] = str(tmp_path / "tmp")  # nvcc's temporary files, and the server's links to them, alone here
    (tmp_path / "tmp").mkdir()
    _compile(hook, project, env)  # the server is up
    [pid] = server_pids(env)
    marker = tmp_path / "nvcc-exited"
    nvcc = _lingering_nvcc(tmp_path / "lingering", marker) if when == "after nvcc" else "nvcc"
    proc = subprocess.Popen([hook, nvcc, *FLAGS, "src/kernel.cu", "-o", "k.o"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_until(lambda: any((tmp_path / "tmp").glob(f"ptxstatic-hook-{pid}-*/*.ptx")), 300)
    if when == "after nvcc":
        os.kill(pid, signal.SIGSTOP)
        assert proc.poll() is None  # the hook waits for its compiler, so the server has not answered
        assert wait_until(lambda: marker.exists() and marker.read_text().strip(), 300)
        assert wait_until(lambda: _gone(int(marker.read_text())), 300)  # the hook has seen its compiler exit
        assert (project / "k.o").exists() and not any((tmp_path / "tmp").glob("tmpxft_*"))
    os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    expect_ps201(err, project / "src", "src/util.cuh")
    assert not list((tmp_path / "tmp").iterdir())  # the dead server's links are cleaned up too


def test_a_socket_left_by_a_dead_server(build):
    project, env, hook = build
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")
    [first] = server_pids(env)
    os.kill(first, signal.SIGKILL)
    assert wait_until(lambda: not serving(first), 10)
    assert server_socket(env).exists()  # the socket file is still there; nobody listens on it
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")
    [second] = server_pids(env)
    assert second != first and serving(second)
    assert server_log(env).count("serving") == 2


def test_a_server_of_other_code_gives_way(build, tmp_path: Path):
    project, env, hook = build
    install = tmp_path / "install"  # an installation of its own, to upgrade in place
    shutil.copytree(ROOT / "ptxstatic", install / "ptxstatic", ignore=shutil.ignore_patterns("__pycache__"))
    (install / "grammars").symlink_to(ROOT / "grammars")
    env["PYTHONPATH"] = str(install)
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")
    [old] = server_pids(env)
    for changed in ("hook/unit.py", "rules/engine.py"):  # the hook's own code (its handshake), then a rule's
        module = install / "ptxstatic" / changed
        module.write_text(module.read_text() + "\n# upgraded\n")
        expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")
        assert _ends(old)
        [new] = server_pids(env)
        assert new != old and serving(new)
        old = new
    assert server_log(env).count("stop: a hook of another version, or this server's code changed") == 2


def _ends(pid: int) -> bool:
    return wait_until(lambda: not serving(pid), 30)


def test_idle_shutdown(build):
    project, env, hook = build
    env["PTXSTATIC_SERVER_IDLE"] = "1"
    _compile(hook, project, env)
    [pid] = server_pids(env)
    assert _ends(pid)
    assert not server_socket(env).exists()  # given up, so that the next build starts a new one
    with open(next(server_dir(env).glob("*.lock"))) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and the lock with it
    assert "stop: no compile for 1 s" in server_log(env)
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")


@pytest.mark.parametrize("how", ["environment", "configuration"])
def test_the_server_turned_off(build, how: str):
    project, env, hook = build
    if how == "environment":
        env["PTXSTATIC_SERVER"] = "0"
    else:
        (project / "ptxstatic.toml").write_text("hook-server = false\n")
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")  # analysed in-process
    assert not server_dir(env).exists()


def test_the_same_ptx_is_analysed_once(build):
    project, env, hook = build
    _compile(hook, project, env)
    entries = list((Path(env["PTXSTATIC_CACHE_DIR"]) / "check").iterdir())
    assert len(entries) == 1
    before = entries[0].stat()
    stop_servers(env)  # a new server knows nothing in memory: the result comes from check's cache
    assert wait_until(lambda: not any(map(serving, server_pids(env))), 30)
    expect_ps201(_compile(hook, project, env).stderr, project / "src", "src/util.cuh")
    after = entries[0].stat()
    assert after.st_ino == before.st_ino and after.st_mtime_ns >= before.st_mtime_ns  # read, not rewritten
    kernel = project / "src/kernel.cu"  # a suppression comment changes no PTX, but the source the entry lists
    kernel.write_text(kernel.read_text().replace("v = exchange(tile, v);",
                                                 "v = exchange(tile, v);  // ptxstatic: ignore[PS201]"))
    assert "PS201" not in _compile(hook, project, env).stderr


def test_the_statement_shapes_reach_the_disk_once_the_analyses_pause(build):
    """The server keeps the statement shapes it learns in memory while analyses follow each other, and writes
    them to the parser's disk cache once none has come for a few seconds: another process parses with them."""
    project, env, hook = build
    cache = Path(env["PTXSTATIC_CACHE_DIR"])
    _compile(hook, project, env)
    assert wait_until(lambda: any(cache.glob("shapes-*.jsonl")), 3 * HOOK_SERVER_SHAPES_S)
    [shapes] = cache.glob("shapes-*.jsonl")
    assert len(shapes.read_text().splitlines()) > 10  # the header, then one line per shape


def test_a_unit_over_its_budget_says_so_in_one_note(build):
    project, env, hook = build
    (project / "ptxstatic.toml").write_text("hook-budget = 0.000001\n")
    for extra in ((), ("--strict",)):  # a cut analysis is not a failure, not even with --strict
        result = _compile(hook, project, env, "src/kernel.cu", *extra)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ptxstatic: note: src/kernel.cu: the analysis stopped at "
                                                       "its budget of 1e-06 s of CPU time (hook-budget)"), lines
        assert "PS201 on _Z12reverse_halfPKfPf" in lines[0]


def test_a_stopped_server_ends_at_once(build):
    """SIGTERM ends a server whose idle time is the default 10 minutes within seconds (a connection of its own
    wakes its accepting loop, rather than it spinning in an accept on a shut-down socket until the idle time
    is over)."""
    project, env, hook = build
    env.pop("PTXSTATIC_SERVER_IDLE")
    _compile(hook, project, env)
    [pid] = server_pids(env)
    os.kill(pid, signal.SIGTERM)
    assert wait_until(lambda: not serving(pid), 5)
    assert "stop: SIGTERM" in server_log(env)


def _messages(text: str) -> list[tuple[str, str]]:
    """(line, message) of each finding in compiler-style text, the column left out (``check`` on PTX has none)."""
    return sorted((m.group(2), m.group(5)) for m in diagnostics(text))


@pytest.mark.parametrize("extra, server, assembled_again", [
    ([], "1", False), ([], "0", False), (["-maxrregcount=128"], "1", True)],
    ids=["server", "in the hook", "-maxrregcount"])
def test_resources_from_the_cubin_nvcc_wrote(build, tmp_path: Path, extra: list[str], server: str,
                                             assembled_again: bool):
    """Where nvcc assembles with ptxas's default options, registers and shared memory come from the cubin nvcc
    wrote (no ``ptxas -v`` of the hook's own: its cache stays empty), in the server and in the hook's own
    process alike, and the findings are ``check``'s from ``ptxas -v``; an option that changes what ptxas makes
    of the PTX has the hook run ``ptxas -v`` itself."""
    project, env, hook = build
    env["PTXSTATIC_SERVER"] = server
    for name in ("occupancy.cu", "common.cuh"):
        shutil.copy(ROOT / "microbenchmarks" / name, project / "src" / name)
    result = run([hook, "nvcc", *FLAGS, *extra, "src/occupancy.cu", "-o", "occupancy.o"], project, env)
    assert result.returncode == 0, result.stderr
    ptxas_cache = Path(env["PTXSTATIC_CACHE_DIR"]) / "ptxas"
    assert (ptxas_cache.is_dir() and any(ptxas_cache.iterdir())) == assembled_again
    ptx = tmp_path / "occupancy.ptx"
    run([tool("nvcc"), "-ptx", *FLAGS[1:], "src/occupancy.cu", "-o", str(ptx)], project, env).check_returncode()
    check = run([sys.executable, "-m", "ptxstatic", "check", str(ptx)], project, env)
    hooked = _messages(result.stderr)
    assert any(message.endswith("[PS303]") for _, message in hooked)
    assert hooked == _messages(check.stdout)
