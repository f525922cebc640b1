"""The nvcc hook in real builds: make and CMake/Ninja projects with and without it, ccache in both orders.

Objects and executables must be byte-identical to a plain build once nvcc's own temporary-file names
(``tmpxft_...``) are masked; nvcc's output and status pass through; findings appear as compiler warnings.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.hook import (
    copy_project,
    expect_ps201,
    hook_env,
    hook_launcher,
    masked,
    run,
    tool,
)
from support.paths import needs_nvcc

pytestmark = [needs_nvcc, pytest.mark.slow]


def _artefacts(build: Path) -> dict[str, bytes]:
    return {str(p.relative_to(build)): masked(p) for p in sorted(build.rglob("*"))
            if p.is_file() and (p.suffix == ".o" or p.name == "app")}


def test_make_project(tmp_path: Path):
    make = tool("make")
    if make is None:
        pytest.skip("make is not installed")
    env = hook_env(tmp_path)
    hook = hook_launcher(tmp_path / "bin")
    project = copy_project(tmp_path / "project")  # one place: -lineinfo records the source's absolute path
    a = run([make], project, env)
    assert a.returncode == 0, a.stderr
    plain = _artefacts(project / "build")
    app_output = run([str(project / "build/app")], project, env).stdout
    shutil.rmtree(project / "build")
    b = run([make, f"NVCC={hook} nvcc"], project, env)
    assert b.returncode == 0, b.stderr
    assert "PS201" not in a.stderr
    expect_ps201(b.stderr, project / "src", "src/util.cuh")
    assert plain == _artefacts(project / "build")
    assert set(plain) == {"kernel.o", "main.o", "host.o", "app"}
    assert run([str(project / "build/app")], project, env).stdout == app_output == "checksum 285\n"


def test_cmake_ninja_project(tmp_path: Path):
    cmake, ninja = tool("cmake"), tool("ninja")
    if cmake is None or ninja is None:
        pytest.skip("cmake or ninja is not installed (pip install cmake ninja)")
    env = hook_env(tmp_path)
    hook = hook_launcher(tmp_path / "bin")
    src = copy_project(tmp_path / "src")
    build = tmp_path / "build"
    results, artefacts = {}, {}
    for name, extra in (("plain", []), ("hooked", [f"-DCMAKE_CUDA_COMPILER_LAUNCHER={hook}"])):
        shutil.rmtree(build, ignore_errors=True)
        configure = run([cmake, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}", "-S", str(src), "-B", str(build),
                         *extra], tmp_path, env)
        assert configure.returncode == 0, configure.stdout + configure.stderr
        results[name] = run([cmake, "--build", str(build), "--verbose"], tmp_path, env)
        assert results[name].returncode == 0, results[name].stdout + results[name].stderr
        artefacts[name] = _artefacts(build)
    expect_ps201(results["hooked"].stdout + results["hooked"].stderr, src / "src", f"{src}/src/util.cuh")
    assert "PS201" not in results["plain"].stdout + results["plain"].stderr
    assert str(hook) in results["hooked"].stdout  # the launcher really ran
    assert artefacts["plain"] == artefacts["hooked"]
    assert {Path(k).name for k in artefacts["plain"]} >= {"kernel.cu.o", "main.cu.o", "host.cpp.o", "app"}


def _both(tmp_path: Path, args: list[str], project: Path, **env_extra: str):
    """The same nvcc command plain, then through the hook, in ``project`` (one place, since -lineinfo and
    -g record absolute paths); the plain run's files are moved to a sibling directory, which is returned."""
    env = hook_env(tmp_path, **env_extra)
    hook = hook_launcher(tmp_path / "bin")
    pristine = tmp_path / "pristine"
    shutil.copytree(project, pristine)
    plain = run(["nvcc", *args], project, env)
    plain_dir = tmp_path / "plain-run"
    project.rename(plain_dir)
    shutil.copytree(pristine, project)
    hooked = run([str(hook), "nvcc", *args], project, env)
    return plain, hooked, plain_dir, project


@pytest.mark.parametrize("args, output", [
    (["-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "out/deep/kernel.o"], "out/deep/kernel.o"),
    (["-c", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
      "-lineinfo", "src/kernel.cu", "-o", "k.o"], "k.o"),
    (["-c", "-rdc=true", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "k.o"], "k.o"),
    (["-dc", "--gpu-architecture", "sm_80", "-lineinfo", "src/kernel.cu", "-o", "k.o"], "k.o"),
    (["-c", "-x", "cu", "-arch=sm_90", "-lineinfo", "kernel.source", "-Isrc", "-o", "k.o"], "k.o"),
    (["-c", "-arch=sm_90", "-lineinfo", "-ccbin", "g++", "-Xcompiler", "-Wall,-fPIC", "src/kernel.cu", "-o", "k.o"],
     "k.o"),
    (["--options-file", "flags.rsp", "src/kernel.cu", "-o", "k.o"], "k.o"),
])
def test_command_line_forms(tmp_path: Path, args: list[str], output: str):
    project = copy_project(tmp_path / "project")
    shutil.copy(project / "src/kernel.cu", project / "kernel.source")
    (project / "flags.rsp").write_text('-c "-arch=sm_90"\n-lineinfo -Xcompiler -Wall\n')
    (project / "out/deep").mkdir(parents=True)
    plain, hooked, pdir, hdir = _both(tmp_path, args, project)
    assert plain.returncode == 0 == hooked.returncode, plain.stderr + hooked.stderr
    assert plain.stdout == hooked.stdout
    assert masked(pdir / output) == masked(hdir / output)
    assert hooked.stderr.startswith(plain.stderr)
    caller = "kernel.source" if "kernel.source" in args else "src/kernel.cu"
    expect_ps201(hooked.stderr[len(plain.stderr):], hdir / "src", "src/util.cuh", caller)


@pytest.mark.parametrize("args", [
    ["-E", "src/kernel.cu"],
    ["-M", "src/kernel.cu"],
    ["--version"],
    ["-c", "src/host.cpp", "-o", "host.o"],
    ["-arch=sm_90", "-ptx", "src/kernel.cu", "-o", "k.ptx"],
    ["@flags.rsp", "src/kernel.cu", "-o", "k.o"],  # nvcc itself rejects @file: the same message either way
])
def test_pass_through_untouched(tmp_path: Path, args: list[str]):
    project = copy_project(tmp_path / "project")
    (project / "flags.rsp").write_text("-c -arch=sm_90\n")
    plain, hooked, pdir, hdir = _both(tmp_path, args, project)
    assert (plain.returncode, plain.stdout, plain.stderr) == (hooked.returncode, hooked.stdout, hooked.stderr)
    outputs = [a for a in args if a.endswith((".o", ".ptx"))]
    for out in outputs:
        assert (pdir / out).exists() == (hdir / out).exists()
        if (pdir / out).exists():
            assert masked(pdir / out) == masked(hdir / out)


def test_link_only_step(tmp_path: Path):
    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path)
    for cu in ("kernel", "main"):
        assert run(["nvcc", "-c", "-arch=sm_90", f"src/{cu}.cu", "-o", f"{cu}.o"], project, env).returncode == 0
    plain, hooked, pdir, hdir = _both(tmp_path, ["-arch=sm_90", "kernel.o", "main.o", "src/host.cpp", "-o", "app"],
                                      project)
    assert (plain.returncode, plain.stdout, plain.stderr) == (hooked.returncode, hooked.stdout, hooked.stderr) == \
           (0, "", "")
    assert masked(pdir / "app") == masked(hdir / "app")


def test_compile_error_keeps_nvcc_status_and_text(tmp_path: Path):
    project = copy_project(tmp_path / "project")
    (project / "src/broken.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = undefined_name; }\n")
    plain, hooked, pdir, hdir = _both(tmp_path, ["-c", "-arch=sm_90", "src/broken.cu", "-o", "b.o"], project)
    assert plain.returncode != 0
    assert (plain.returncode, plain.stdout, plain.stderr) == (hooked.returncode, hooked.stdout, hooked.stderr)
    assert "undefined_name" in plain.stderr
    assert not (pdir / "b.o").exists() and not (hdir / "b.o").exists()


def test_disable_is_a_pure_pass_through(tmp_path: Path):
    project = copy_project(tmp_path / "project")
    args = ["-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "k.o"]
    plain, hooked, pdir, hdir = _both(tmp_path, args, project, PTXSTATIC_DISABLE="1")
    assert (plain.returncode, plain.stdout, plain.stderr) == (hooked.returncode, hooked.stdout, hooked.stderr)
    assert masked(pdir / "k.o") == masked(hdir / "k.o")


REJECTED_ASM = 'asm volatile("add.s32 %0, %1, 5 > 3 ? 1 : 2;" : "=r"(x) : "r"(y));'


def test_ptx_the_parser_rejects_is_one_note(tmp_path: Path, build_ptx):
    from ptxstatic.errors import SourceError

    project = copy_project(tmp_path / "project")
    (project / "src/odd.cu").write_text(
        "__global__ void k(int* out, int y) {\n    int x = 0;\n    " + REJECTED_ASM + "\n    out[0] = x;\n}\n")
    with pytest.raises(SourceError):  # if the grammar learns this, pick another construct ptxas accepts
        build_ptx(project / "src/odd.cu", "sm_90")
    plain, hooked, pdir, hdir = _both(tmp_path, ["-c", "-arch=sm_90", "src/odd.cu", "-o", "o.o"], project)
    assert plain.returncode == 0 == hooked.returncode
    extra = hooked.stderr[len(plain.stderr):].splitlines()
    assert len(extra) == 1 and extra[0].startswith("ptxstatic: note: could not analyse the PTX of src/odd.cu"), extra
    assert masked(pdir / "o.o") == masked(hdir / "o.o")


@pytest.mark.parametrize("config, message", [
    ("[tool.ptxstatic]\ncolour = 1\n", "unknown key 'colour'"),
    ("[tool.ptxstatic\nselect = [\n", "invalid TOML"),
    (b"[tool.ptxstatic]\nselect = ['PS2\xff']\n", "not UTF-8"),
])
def test_bad_configuration_is_a_note_or_a_strict_error(tmp_path: Path, config: str | bytes, message: str):
    project = copy_project(tmp_path / "project")
    target = project / "pyproject.toml"
    target.write_bytes(config if isinstance(config, bytes) else config.encode())
    args = ["-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "k.o"]
    plain, hooked, pdir, hdir = _both(tmp_path, args, project)
    assert plain.returncode == 0 == hooked.returncode
    extra = hooked.stderr[len(plain.stderr):].splitlines()
    assert len(extra) == 1 and extra[0].startswith("ptxstatic: note: ") and message in extra[0], extra
    assert "pyproject.toml" in extra[0]
    assert masked(pdir / "k.o") == masked(hdir / "k.o")
    strict = run([str(hook_launcher(tmp_path / "bin")), "--strict", "nvcc", *args], hdir, hook_env(tmp_path))
    assert strict.returncode == 1 and message in strict.stderr and "error:" in strict.stderr
    assert not (hdir / "k.o").exists()  # removed, so that the build retries the step


def test_strict_fails_on_findings_at_the_configured_severity(tmp_path: Path):
    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path)
    hook = str(hook_launcher(tmp_path / "bin"))
    args = ["-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "k.o"]
    failed = run([hook, "--strict", "nvcc", *args], project, env)
    assert failed.returncode == 1 and "[PS201]" in failed.stderr and not (project / "k.o").exists()
    # what fails the step is an error, as -Werror prints it
    assert re.search(r"^src/util\.cuh:\d+:\d+: error: .*\[PS201\]$", failed.stderr, re.M), failed.stderr
    assert ": warning: " not in failed.stderr
    (project / "ptxstatic.toml").write_text('fail-on = "error"\n')
    passed = run([hook, "--strict", "nvcc", *args], project, env)
    assert passed.returncode == 0 and "[PS201]" in passed.stderr and (project / "k.o").exists()
    assert re.search(r"^src/util\.cuh:\d+:\d+: warning: .*\[PS201\]$", passed.stderr, re.M), passed.stderr
    (project / "src/kernel.cu").write_text((project / "src/kernel.cu").read_text().replace(
        "v = exchange(tile, v);", "v = exchange(tile, v);  // ptxstatic: ignore[PS201]"))
    (project / "ptxstatic.toml").unlink()
    quiet = run([hook, "--strict", "nvcc", *args], project, env)
    assert quiet.returncode == 0 and "PS201" not in quiet.stderr


def test_ccache_in_either_order(tmp_path: Path):
    ccache = tool("ccache")
    if ccache is None:
        pytest.skip("ccache is not installed (apt-get install ccache)")
    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path, CCACHE_DIR=str(tmp_path / "ccache"), CCACHE_NOHASHDIR="1")
    hook = str(hook_launcher(tmp_path / "bin"))
    args = ["-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o"]
    assert run(["nvcc", *args, "plain.o"], project, env).returncode == 0
    reference = masked(project / "plain.o")
    for order, prefix in (("ccache-first", [ccache, hook]), ("hook-first", [hook, ccache])):
        for attempt in ("miss", "hit"):
            out = f"{order}-{attempt}.o"
            result = run([*prefix, "nvcc", *args, out], project, env)
            assert result.returncode == 0, result.stderr
            assert masked(project / out) == reference, (order, attempt)
            if order == "ccache-first" or attempt == "miss":  # ccache replays the hook's stderr on a hit
                expect_ps201(result.stderr, project / "src", "src/util.cuh")
            else:  # a hit behind the hook runs no nvcc: nothing to analyse, nothing said
                assert result.stderr == ""
    stats = run([ccache, "--print-stats"], project, env).stdout
    hits = sum(int(line.split()[1]) for line in stats.splitlines() if line.startswith(("direct_cache_hit",
                                                                                        "preprocessed_cache_hit")))
    assert hits >= 2, stats


def test_click_subcommand_is_the_same_hook(tmp_path: Path):
    import sys

    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path)
    version = run([sys.executable, "-m", "ptxstatic", "nvcc", "--", "nvcc", "--version"], project, env)
    assert (version.returncode, version.stdout) == (0, run(["nvcc", "--version"], project, env).stdout)
    built = run([sys.executable, "-m", "ptxstatic", "nvcc", "--", "nvcc", "-c", "-arch=sm_90", "-lineinfo",
                 "src/kernel.cu", "-o", "k.o"], project, env)
    assert built.returncode == 0 and (project / "k.o").exists()
    expect_ps201(built.stderr, project / "src", "src/util.cuh")
