"""The gpuPTXModel importer on the real GTX Titan X folder: counts, quirks corrected, SeqItems as the front
end makes them, and clear errors on malformed folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from support.paths import TITANX_DATA

from ptxstatic.dataset.dataset import benchmark_family, load_dataset
from ptxstatic.dataset.gpuptxmodel import import_folder
from ptxstatic.dataset.store import DatasetStore
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.models.inference.encoding import writer_distances
from ptxstatic.ptx.isa import op_info

TITANX = TITANX_DATA
needs_titanx = pytest.mark.skipif(
    not TITANX.is_dir(), reason=f"GTX Titan X data not found at {TITANX} (set PTXSTATIC_TITANX_DATA)"
)
BENCH = TITANX / "microbenchmarks"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> DatasetStore:
    if not TITANX.is_dir():
        pytest.skip(f"GTX Titan X data not found at {TITANX}")
    s = DatasetStore(tmp_path_factory.mktemp("db") / "titanx.db", create=True)
    s.summary = import_folder(TITANX, s)  # type: ignore[attr-defined]
    return s


def _bench(store: DatasetStore, name: str):
    return next(b for b in store.benchmarks() if b.name == name)


def _lines(path: Path) -> list[str]:
    return [x.strip() for x in path.read_text().splitlines() if x.strip()]


@needs_titanx
def test_counts_and_clock_table(store: DatasetStore) -> None:
    s = store.summary  # type: ignore[attr-defined]
    folders = [p for p in BENCH.iterdir() if p.is_dir()]
    assert s.gpus == ["gtxtitanx"]
    assert s.benchmarks == len(folders)
    assert s.kernels == len(list(BENCH.glob("*/outputSequence_kernel_depend_*.csv")))
    measured = [x for x in _lines(BENCH / "aggregated_dataset_gtxtitanx.csv") if "," not in x]
    assert s.measured == len(measured)
    assert sorted(s.unmeasured) == sorted(p.name for p in folders if p.name not in measured)
    clocks = store.clocks("gtxtitanx")
    assert len(clocks) == 32
    assert {c.f_mem for c in clocks} == {810, 3505}
    assert [c for c in clocks if c.is_default] == [c for c in clocks if (c.f_mem, c.f_core) == (3505, 975)]
    idle = [float(x) for x in _lines(TITANX / "gpu_info" / "gtxtitanx" / "idle_pows_gtxtitanx.txt")]
    assert [c.idle_power_w for c in clocks] == idle  # memory ascending, then core ascending


@needs_titanx
def test_items_match_readable_opcodes_and_operand_counts(store: DatasetStore) -> None:
    bench = _bench(store, "Shared")
    (kernel,) = store.kernels(bench.id)
    runs = store.sequence(kernel.id)
    items = [item for item, count in runs for _ in range(count)]
    readable = _lines(BENCH / "Shared" / "outputSequenceReadable_kernel_0.csv")
    codes = _lines(BENCH / "Shared" / "outputSequence_kernel_depend_0.csv")
    assert len(items) == len(readable) == kernel.n_instructions
    for item, token, code in zip(items, readable, codes):
        info = op_info(token)
        assert (item.opcode, item.space, item.dtype, item.group) == (info.opcode, info.space, info.dtype, info.group)
        assert item.n_src + item.n_dst == int(code[6])
        assert item.n_dst == (0 if info.opcode == "st" else 1)
        assert item.guarded is False


@needs_titanx
def test_dependency_distance_round_trips_to_the_tools_writer_count(store: DatasetStore) -> None:
    """The importer stores instruction distances; counting register writers back recovers the D digit."""
    for name in ("Shared", "fadd_dram_50_50_64p", "lbm", "cvt_32p_asm"):
        bench = _bench(store, name)
        for k in store.kernels(bench.id):
            items = [(item, 1) for item, count in store.sequence(k.id) for _ in range(count)]
            digits = [int(c[7]) for c in _lines(BENCH / name / f"outputSequence_kernel_depend_{k.position}.csv")]
            assert writer_distances(items) == digits
            assert all(item.dep_distance >= d for (item, _), d in zip(items, digits))


@needs_titanx
def test_dependency_kind_recomputed_from_the_producer(store: DatasetStore) -> None:
    """The tool's kind digit swapped ld.shared and ld.param; the imported kind follows the producer."""
    seen = set()
    for name in ("Shared", "fadd_dram_50_50_64p", "lbm"):
        bench = _bench(store, name)
        for k in store.kernels(bench.id):
            items = [item for item, count in store.sequence(k.id) for _ in range(count)]
            tokens = _lines(BENCH / name / f"outputSequenceReadable_kernel_{k.position}.csv")
            for i, item in enumerate(items):
                if not item.dep_distance:
                    assert item.dep_kind == "none"
                    continue
                producer = op_info(tokens[i - item.dep_distance])
                want = {"global": "global_load", "shared": "shared_load"}.get(producer.space, "other_mem")
                assert item.dep_kind == (want if producer.is_load else "arith")
                seen.add((producer.opcode, producer.space, item.dep_kind))
    assert ("ld", "shared", "shared_load") in seen and ("ld", "param", "other_mem") in seen


@needs_titanx
def test_every_kernel_imported_in_launch_order(store: DatasetStore) -> None:
    bench = _bench(store, "fadd_dram_0_100_64p")
    kernels = store.kernels(bench.id)
    names = [x.split(",", 1)[0] for x in _lines(BENCH / "fadd_dram_0_100_64p" / "outputOccurrences_per_kernel.csv")]
    assert [k.name for k in kernels] == names and len(names) == 2
    data = load_dataset(store, "gtxtitanx")
    i = data.names.index("fadd_dram_0_100_64p")
    assert sum(c for _, c in data.runs[i]) == sum(k.n_instructions for k in kernels)
    assert data.kernel_names[i] == names


@needs_titanx
def test_dataset_targets(store: DatasetStore) -> None:
    data = load_dataset(store, "gtxtitanx")
    assert len(data) == 140 and data.time.shape == (140, 32)
    ref = data.clocks.reference
    assert (data.clocks.f_mem[ref], data.clocks.f_core[ref]) == (3505, 1164)
    np.testing.assert_allclose(data.energy, data.power * data.time, rtol=1e-4)
    s = data.scaling_surfaces()
    assert np.all(s[:, :, ref] == 1.0)
    # power already includes idle power: at every configuration the lightest kernel draws a little more
    idle = np.array(data.clocks.idle_power_w)
    assert np.all(data.power.min(axis=0) > idle) and np.all(data.power.min(axis=0) < idle + 25)
    assert benchmark_family("fadd_l2d_90_10_64p") == "fadd_l2d_64p" and benchmark_family("L2_2048_8") == "L2"


def _copy_folder(tmp_path: Path, names: list[str]) -> Path:
    root = tmp_path / "copy"
    for sub in ("assembly_info", "gpu_info"):
        shutil.copytree(TITANX / sub, root / sub)
    (root / "microbenchmarks").mkdir()
    agg = _lines(BENCH / "aggregated_dataset_gtxtitanx.csv")
    keep: list[str] = []
    for i, line in enumerate(agg):
        if line in names:
            keep += agg[i:i + 33]
    (root / "microbenchmarks" / "aggregated_dataset_gtxtitanx.csv").write_text("\n".join(keep) + "\n")
    for n in names:
        shutil.copytree(BENCH / n, root / "microbenchmarks" / n)
    return root


@needs_titanx
def test_imports_any_folder_in_the_layout_and_reports_bad_codes(tmp_path: Path) -> None:
    root = _copy_folder(tmp_path, ["DP", "sp_fma_4"])
    s = DatasetStore(":memory:", create=True)
    assert import_folder(root, s).measured == 2
    codes = root / "microbenchmarks" / "DP" / "outputSequence_kernel_depend_0.csv"
    lines = codes.read_text().splitlines()
    lines[4] = "0547162"  # truncated code on line 5
    codes.write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError) as err:
        import_folder(root, DatasetStore(":memory:", create=True))
    assert err.value.line == 5 and "9-digit" in err.value.message
    lines[4] = "030716210"  # opcode index of fma where the readable file says ld.shared.f64
    codes.write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError, match=r"fma.*ld\.shared\.f64"):
        import_folder(root, DatasetStore(":memory:", create=True))


def test_not_a_layout_folder(tmp_path: Path) -> None:
    with pytest.raises(PtxstaticError, match="not a gpuPTXModel-layout folder"):
        import_folder(tmp_path, DatasetStore(":memory:", create=True))
