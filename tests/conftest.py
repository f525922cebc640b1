"""What every test folder shares. ``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml), so the
helper modules import by name: ``helpers`` (where the fixtures are, skips for missing tools), ``kernels``
(hand-written kernels with known block counts) and ``hook_helpers`` (builds under the nvcc hook, the
compiler-diagnostic pattern editors read). The folders mirror the package; every test under
``tests/gpu_hardware`` needs an NVIDIA GPU and carries the ``gpu`` mark (``-m "not gpu"`` leaves them out)."""

from __future__ import annotations

from pathlib import Path

import pytest

GPU_HARDWARE = Path(__file__).parent / "gpu_hardware"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if GPU_HARDWARE in item.path.parents:
            item.add_marker(pytest.mark.gpu)
