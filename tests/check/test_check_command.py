"""``ptxstatic check`` as a process: CUDA with and without compile_commands.json, PTX, directories, exit
codes and --fail-on, and bad input (nothing lost, exit 2, no traceback)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.check import check, check_json, compile_commands, copy_project, expected, found_lines
from support.paths import DATA, ROOT, needs_nvcc

RULES_CUDA = DATA / "rules" / "cuda" / "ps201_barrier.cu"
RULES_PTX = DATA / "rules" / "ptx" / "lineinfo" / "ps201_barrier.ptx"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("check"))


@needs_nvcc
def test_directory_with_the_configuration_flags(project: Path, tmp_path: Path):
    doc, proc = check_json("src", "third_party/vendor.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    src = project / "src"
    # no compile_commands.json: the configuration's flags, so reduce.cu's barrier is reached by every thread
    assert found_lines(doc, "reduce.cu") == expected(src / "reduce.cu")
    assert found_lines(doc, "tile.cuh") == expected(src / "tile.cuh")
    assert found_lines(doc, "clean.cu") == set()
    files = {f["path"]: f for f in doc["files"]}
    assert set(files) == {"src/clean.cu", "src/reduce.cu", "src/scan.cu", "src/tile.cuh"}  # vendor.cu excluded
    assert files["src/tile.cuh"]["included_by"] == ["src/scan.cu"]
    assert files["src/reduce.cu"]["compile"]["origin"] == "configuration"
    assert files["src/reduce.cu"]["compile"]["arguments"] == ["-arch=sm_90", "-lineinfo"]
    inlined = next(f for f in doc["findings"] if Path(f["location"]["file"]).name == "tile.cuh")
    assert [Path(x["file"]).name for x in inlined["inlined_at"]] == ["scan.cu"]
    assert inlined["inlined_at"][0]["line"] in expected(src / "scan.cu", "expect-call")
    assert {k["name"] for k in doc["kernels"]} == {"copy_tile", "reduce_block", "lane_flag", "scan_partial"}


@needs_nvcc
def test_compile_commands_flags_and_a_missing_entry(project: Path, tmp_path: Path):
    build = tmp_path / "build"
    db = compile_commands(project, build, {"reduce.cu": ["-DCHECK_BOUNDS"], "scan.cu": []})
    doc, proc = check_json("--build-dir", str(build), "src/reduce.cu", "src/clean.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == 1, proc.stderr
    reduce = project / "src" / "reduce.cu"
    # the build defines CHECK_BOUNDS: the early return puts the first barrier under a thread-dependent condition
    assert found_lines(doc, "reduce.cu") == expected(reduce) | expected(reduce, "expect-with-CHECK_BOUNDS")
    files = {f["path"]: f for f in doc["files"]}
    assert files["src/reduce.cu"]["compile"]["origin"] == str(db)
    args = files["src/reduce.cu"]["compile"]["arguments"]
    assert "-DCHECK_BOUNDS" in args and "-arch=compute_90" in args and "-lineinfo" in args
    assert not {"-c", "-o", "-MD", "-MF"} & set(args)
    # clean.cu has no entry: a note on stderr, and the configured flags
    assert files["src/clean.cu"]["compile"]["origin"] == "configuration"
    note = f"ptxstatic: note: src/clean.cu: it has no entry in {db}; compiled with the configured flags: " \
           "-arch=sm_90 -lineinfo"
    assert note in proc.stderr.splitlines()
    assert files["src/clean.cu"]["notes"] == [note.removeprefix("ptxstatic: note: ")]


@needs_nvcc
def test_compile_commands_found_by_walking_up_from_a_cmake_build(tmp_path: Path):
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if cmake is None or ninja is None:
        pytest.skip("cmake and ninja are needed (the test extra installs them)")
    project = copy_project(tmp_path)
    configure = subprocess.run([cmake, "-S", str(project), "-B", str(project / "build"), "-G", "Ninja",
                                f"-DCMAKE_MAKE_PROGRAM={ninja}"], capture_output=True, text=True, timeout=600)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert (project / "build" / "compile_commands.json").is_file()
    doc, proc = check_json("src/reduce.cu", cwd=project, tmp=tmp_path)  # found in ./build, walking up
    reduce = project / "src" / "reduce.cu"
    assert proc.returncode == 1, proc.stderr
    assert doc["files"][0]["compile"]["origin"] == str(project / "build" / "compile_commands.json")
    assert found_lines(doc, "reduce.cu") == expected(reduce) | expected(reduce, "expect-with-CHECK_BOUNDS")


def test_ptx_file_with_line_information(tmp_path: Path):
    doc, proc = check_json(str(RULES_PTX.relative_to(ROOT)), cwd=ROOT, tmp=tmp_path)
    assert proc.returncode == 1, proc.stderr
    ps201 = {"findings": [f for f in doc["findings"] if f["code"] == "PS201"]}  # other rules report there too
    assert found_lines(ps201, "ps201_barrier.cu") == expected(RULES_CUDA)
    assert doc["files"] == [{"path": str(RULES_PTX.relative_to(ROOT)), "kind": "ptx", "cached": False,
                             "included_by": [], "notes": [], "findings": len(doc["findings"]), "errors": 0,
                             "compile": None}]


@needs_nvcc
@pytest.mark.parametrize(("fail_on", "status"), [("note", 1), ("warning", 1), ("error", 0)])
def test_fail_on_sets_the_exit_status(project: Path, tmp_path: Path, fail_on: str, status: int):
    proc = check("--fail-on", fail_on, "src/reduce.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert "[PS201]" in proc.stdout  # shown whatever the threshold


@needs_nvcc
def test_clean_file_exits_0_and_configured_fail_on_applies(project: Path, tmp_path: Path):
    proc = check("src/clean.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("0 findings in 0 of 1 file"), proc.stdout
    other = tmp_path / "p"
    shutil.copytree(project / "src", other / "src")
    (other / "ptxstatic.toml").write_text('fail-on = "error"\nnvcc-flags = "-arch=sm_90 -lineinfo"\n')
    assert check("src/reduce.cu", cwd=other, tmp=tmp_path).returncode == 0
    (other / "ptxstatic.toml").write_text('nvcc-flags = "-arch=sm_90 -lineinfo"\n[rules.PS201]\nseverity = "error"\n')
    proc = check("--fail-on", "error", "src/reduce.cu", cwd=other, tmp=tmp_path)
    assert proc.returncode == 1 and ": error: " in proc.stdout


# ------------------------------------------------------------------------------------------ bad input


@needs_nvcc
def test_a_file_that_does_not_compile_is_reported_and_the_others_checked(project: Path, tmp_path: Path):
    work = tmp_path / "w"
    shutil.copytree(project / "src", work / "src")
    (work / "src" / "broken.cu").write_text("__global__ void k(float* x)\n{\n    x[0] = not_declared;\n}\n")
    doc, proc = check_json("--config", str(project / "pyproject.toml"), "src", cwd=work, tmp=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "src/broken.cu:3: error: nvcc could not compile this file" in proc.stderr
    assert 'identifier "not_declared" is undefined' in proc.stderr  # nvcc's own message
    assert found_lines(doc, "reduce.cu") == expected(work / "src" / "reduce.cu")  # the others still checked
    [error] = doc["errors"]
    assert Path(error["file"]).name == "broken.cu" and error["line"] == 3 and "not_declared" in error["detail"]
    # a text report shows the findings too
    text = check("--config", str(project / "pyproject.toml"), "src", cwd=work, tmp=tmp_path)
    assert text.returncode == 2 and "[PS201]" in text.stdout and "1 input error" in text.stdout


def test_ptx_the_parser_rejects(tmp_path: Path):
    good = tmp_path / "good.ptx"
    shutil.copy(RULES_PTX, good)
    bad = tmp_path / "bad.ptx"
    lines = RULES_PTX.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "bar.sync" in line)
    lines[n] = "\tbar.sync \t0,, ;"
    bad.write_text("\n".join(lines) + "\n")
    doc, proc = check_json("bad.ptx", "good.ptx", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"bad.ptx:{n + 1}:" in proc.stderr and ": error: " in proc.stderr and "Traceback" not in proc.stderr
    assert any(e["line"] == n + 1 and e["column"] > 0 for e in doc["errors"])
    per_file = {f["path"]: f["findings"] for f in doc["files"]}
    assert per_file["good.ptx"] > 0 and per_file["bad.ptx"] > 0  # the other kernels of bad.ptx still analysed


@pytest.mark.parametrize(("text", "message"), [
    ('fail_on = "error"\n', "ptxstatic.toml:1:1: error: unknown key 'fail_on' in the ptxstatic configuration "
                            "(did you mean 'fail-on'?)"),
    ("exclude = \"build\"\n", "ptxstatic.toml:1:1: error: exclude must be a list of glob patterns"),
    ("select = [\n", "ptxstatic.toml:2:1: error: invalid TOML"),
    (b"\xff\xfe", "ptxstatic.toml: error: cannot read the configuration: it is not UTF-8 text"),
])
def test_a_bad_configuration_is_a_clear_error(tmp_path: Path, text, message: str):
    shutil.copy(RULES_PTX, tmp_path / "k.ptx")
    config = tmp_path / "ptxstatic.toml"
    config.write_bytes(text if isinstance(text, bytes) else text.encode())
    proc = check("k.ptx", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0].endswith(message) or message in proc.stderr, proc.stderr


def test_missing_paths_and_usage_errors(tmp_path: Path):
    shutil.copy(RULES_PTX, tmp_path / "k.ptx")
    proc = check("k.ptx", "nowhere.cu", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2 and "nowhere.cu: error: no such file or directory" in proc.stderr
    assert "[PS201]" in proc.stdout  # k.ptx still checked
    (tmp_path / "dangling.cu").symlink_to(tmp_path / "gone.cu")
    proc = check(".", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2 and "dangling.cu: error: dangling symbolic link" in proc.stderr
    assert check("--format", "xml", "k.ptx", cwd=tmp_path, tmp=tmp_path).returncode == 2
    proc = check("--baseline", "missing.json", "k.ptx", cwd=tmp_path, tmp=tmp_path)
    assert proc.returncode == 2 and "missing.json: cannot read the baseline" in proc.stderr


@needs_nvcc
def test_a_build_dir_without_a_database_is_an_error(project: Path, tmp_path: Path):
    proc = check("--build-dir", str(tmp_path), "src/clean.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == 2 and "no compile_commands.json in this build directory" in proc.stderr
    (tmp_path / "compile_commands.json").write_text('[{"directory": "/x", "file": "a.cu",')
    proc = check("--build-dir", str(tmp_path), "src/clean.cu", cwd=project, tmp=tmp_path)
    assert proc.returncode == 2 and "compile_commands.json:1:" in proc.stderr and "invalid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
