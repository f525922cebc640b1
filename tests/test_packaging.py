"""The wheel carries every shipped folder (grammars, instrumentation, trained models, rule pages, the report's
templates and schemas) and, installed into a fresh environment outside the checkout, predicts the bundled
example with the shipped models."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from support.paths import FRONTEND_DATA, ROOT


def built_wheel(tmp_path: Path) -> Path:
    """The wheel built from the checkout, with every shipped folder in it."""
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True)
    if build.returncode != 0 and "hatchling" in build.stderr:
        pytest.skip("the build backend could not be installed: " + build.stderr.strip().splitlines()[-1])
    assert build.returncode == 0, build.stderr
    wheel = next(tmp_path.glob("ptxstatic-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "ptxstatic/data/grammars/ptx.lark" in names
    assert any(n.startswith("ptxstatic/data/instrumentation/") for n in names)
    assert "ptxstatic/data/trained/gtxtitanx/physical/card.json" in names
    assert "ptxstatic/rules/docs/PS201.md" in names
    for command in ("check", "parse", "analyze", "blocks", "features", "predict", "rules", "evaluate", "collect"):
        assert f"ptxstatic/report/schemas/{command}.schema.json" in names
    assert "ptxstatic/report/templates/report.html.j2" in names
    hook = next(n for n in names if n.endswith(".data/scripts/ptxstatic-nvcc"))
    text = zipfile.ZipFile(wheel).read(hook).decode()
    assert text.startswith("#!python")  # the installer writes the interpreter's path
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import sys", "from ptxstatic.hook.launcher import main"]  # no re, as entry points have
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment outside the checkout with the wheel installed (its dependencies are this
    environment's, through a .pth file, so that no download is needed); returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = built_wheel(tmp)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    return venv / "bin"


@pytest.mark.slow
def test_installed_wheel_finds_its_data_outside_the_checkout(installed: Path, tmp_path: Path):
    """Every shipped folder comes from the installed package: grammar, instrumentation, rule pages, schemas,
    the report's template and the trained models."""
    code = (
        "import ptxstatic\n"
        "from ptxstatic.package_data import data_path\n"
        "root = ptxstatic.__file__.rsplit('/', 1)[0]\n"
        "for folder in ('grammars', 'instrumentation', 'trained', 'rules/docs', 'report/templates', "
        "'report/schemas'):\n"
        "    p = data_path(folder)\n"
        "    assert str(p).startswith(root) and p.is_dir(), (folder, p)\n"
        "from ptxstatic.rules.catalog import get_rule\n"
        "assert get_rule('PS201').doc.startswith('# PS201')\n"
        "from ptxstatic.report.schemas import json_schema\n"
        "assert json_schema('check')['properties']['command']['const'] == 'check'\n"
        "from ptxstatic.ptx import parse_file\n"
        f"print(len(parse_file({str(FRONTEND_DATA / 'small_sm80.ptx')!r}).kernels))\n"
    )
    run = subprocess.run([installed / "python", "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "PTXSTATIC_NO_CACHE": "1"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "3"


@pytest.mark.slow
def test_installed_wheel_predicts_the_bundled_example(installed: Path, tmp_path: Path):
    """The README's main job from the wheel alone: predict picks the shipped default model."""
    for name in ("saxpy_reduce.ptx", "saxpy_reduce.cu"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    run = subprocess.run([installed / "ptxstatic", "predict", "saxpy_reduce.ptx", "-k", "saxpy", "--launch", "64/256",
                          "--param", "n=1000000", "--format", "json"], capture_output=True, text=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "PTXSTATIC_NO_CACHE": "1"})
    assert run.returncode == 0, run.stderr
    kernel = json.loads(run.stdout)["kernels"][0]
    assert kernel["model"]["name"] == "physical" and kernel["model"]["default"]
    assert "site-packages/ptxstatic/data/trained/gtxtitanx" in kernel["model"]["path"]
    assert kernel["min_energy"]["energy_scaling"] < 1.0


@pytest.mark.slow
def test_installed_hook_script_runs_the_compiler_command(installed: Path, tmp_path: Path):
    """``ptxstatic-nvcc`` is installed as an executable script for the environment's interpreter: it shows its
    usage, and with the hook turned off it runs the command it is given and nothing else."""
    script = installed / "ptxstatic-nvcc"
    assert script.read_text().startswith(f"#!{installed / 'python'}")
    env = {"PATH": "/usr/bin:/bin", "PTXSTATIC_NO_CACHE": "1"}
    usage = subprocess.run([script, "--help"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: ptxstatic-nvcc"), usage.stderr
    passed = subprocess.run([script, "sh", "-c", "echo compiled; exit 3"], capture_output=True, text=True,
                            cwd=tmp_path, env={**env, "PTXSTATIC_DISABLE": "1"})
    assert (passed.returncode, passed.stdout) == (3, "compiled\n"), passed.stderr
