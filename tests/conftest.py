"""What every test folder shares. ``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml), so the
shared modules import from the ``support`` package (``support.paths``: where the test data is, skips for missing
tools; see ``support/__init__.py`` for the others). The folders mirror the package; every test under
``tests/gpu_hardware`` needs an NVIDIA GPU and carries the ``gpu`` mark (``-m "not gpu"`` leaves them out)."""

from __future__ import annotations

from pathlib import Path

import pytest

GPU_HARDWARE = Path(__file__).parent / "gpu_hardware"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if GPU_HARDWARE in item.path.parents:
            item.add_marker(pytest.mark.gpu)
