"""The GTX Titan X measurements, imported once per test session (skipped where they are absent)."""

from __future__ import annotations

import pytest
from support.paths import TITANX_DATA


@pytest.fixture(scope="session")
def titanx():
    """The 140 microbenchmarks as a DvfsDataset."""
    if not TITANX_DATA.is_dir():
        pytest.skip(f"GTX Titan X data not found at {TITANX_DATA} (set PTXSTATIC_TITANX_DATA)")
    from ptxstatic.dataset.dataset import load_dataset
    from ptxstatic.dataset.gpuptxmodel import import_folder
    from ptxstatic.dataset.store import DatasetStore

    store = DatasetStore(":memory:", create=True)
    import_folder(TITANX_DATA, store)
    return load_dataset(store, "gtxtitanx")
