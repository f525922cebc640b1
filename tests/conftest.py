"""What every test folder shares. ``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml), so the
shared modules import from the ``support`` package (``support.paths``: where the test data is, skips for missing
tools; see ``support/__init__.py`` for the others). The folders mirror the package; every test under
``tests/gpu_hardware`` needs an NVIDIA GPU and carries the ``gpu`` mark (``-m "not gpu"`` leaves them out).

A test that compiles CUDA takes the ``build_ptx`` fixture, the one way tests compile (it carries the ``nvcc``
mark and skips without nvcc); the scripts that regenerate committed PTX use ``tests/data/fixtures/regenerate.py``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from ptxstatic.loader import Loaded, load_module

GPU_HARDWARE = Path(__file__).parent / "gpu_hardware"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if GPU_HARDWARE in item.path.parents:
            item.add_marker(pytest.mark.gpu)
        if "build_ptx" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.nvcc)


@pytest.fixture(scope="session")
def build_ptx(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Loaded]:
    """``build_ptx(source, arch="sm_80", flags=(), *, validate=True, name=None) -> Loaded``: CUDA compiled
    with ``nvcc -ptx -arch=ARCH FLAGS`` and loaded as the package loads a ``.cu`` input
    (:func:`ptxstatic.loader.load_module`: parsed, validated unless ``validate`` is false). ``source`` is a
    ``.cu`` path, or CUDA source text (a ``str``) written to a fresh ``kernel.cu``; ``name`` is the module's file
    name (default: the source's path). Skips the test when nvcc is not on the PATH."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH: CUDA sources cannot be compiled here")

    def build(source: Path | str, arch: str = "sm_80", flags: Sequence[str] = (), *, validate: bool = True,
              name: str | None = None) -> Loaded:
        path = source if isinstance(source, Path) else tmp_path_factory.mktemp("cuda") / "kernel.cu"
        if isinstance(source, str):
            path.write_text(source)
        return load_module(str(path), [f"-arch={arch}", *flags], name=name, validate=validate)

    return build
