"""Importer for measurement folders in the gpuPTXModel layout (e.g. the GTX Titan X training set).

Layout (see ``docs/dataset.md``)::

    FOLDER/assembly_info/ptx_isa.txt              opcode table of the 9-digit codes
    FOLDER/gpu_info/GPU/clks_mem_GPU.txt          memory clocks, last line = default
    FOLDER/gpu_info/GPU/clks_core_GPU_MEM.txt     core clocks at memory clock MEM, last line = default
    FOLDER/gpu_info/GPU/idle_pows_GPU.txt         idle power per configuration (memory, then core ascending)
    FOLDER/SUITE/aggregated_dataset_GPU.csv       benchmark name, then one line per configuration:
                                                  mem_mhz,core_mhz,time_ms,power_w,energy
    FOLDER/SUITE/BENCH/outputSequenceReadable_kernel_K.csv   one ``opcode.space.type`` per line
    FOLDER/SUITE/BENCH/outputSequence_kernel_depend_K.csv    one 9-digit code ``OOO S TT N D K`` per line
    FOLDER/SUITE/BENCH/outputOccurrences_per_kernel.csv      kernel K's name on line K + 1

Every instruction becomes the same :class:`SeqItem` the PTX front end produces. Quirks of the tool that
wrote these files, and what the importer does about them:

- the dependency-type digit swaps ``ld.shared`` and ``ld.param``: the kind is recomputed from the
  readable opcode of the producer;
- the distance digit counts *register-writing* instructions back (a window of the last 9 destinations),
  not instructions: the importer walks back that many writers and stores the exact instruction distance,
  as the front end does;
- predicated instructions and ``ret`` were dropped and cannot be restored, so ``guarded`` is always False;
- only kernel 0 was used by the tool: every kernel is imported, in launch order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.analysis.sequence import SeqItem, producer_kind, run_length
from ptxstatic.dataset.store import ClockConfig, DatasetStore, Measurement
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.features.sequence_features import features_from_sequence
from ptxstatic.ptx.isa import OpInfo, op_info

AGGREGATED = re.compile(r"aggregated_dataset_(?P<gpu>.+)\.csv$")
#: instructions the tool's window of destinations looked back over
DEPENDENCY_WINDOW = 9


@dataclass
class ImportSummary:
    """What an import added."""

    gpus: list[str] = field(default_factory=list)
    benchmarks: int = 0
    kernels: int = 0
    instructions: int = 0
    measured: int = 0
    unmeasured: list[str] = field(default_factory=list)  # benchmark folders with no measurements


def _lines(path: Path) -> list[str]:
    try:
        return [line.strip() for line in path.read_text().splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise PtxstaticError(f"{path}: cannot read ({exc})") from None


def _int_lines(path: Path) -> list[int]:
    out = []
    for i, line in enumerate(_lines(path), 1):
        try:
            out.append(int(float(line)))
        except ValueError:
            raise SourceError(str(path), i, 1, f"expected a number, found {line!r}") from None
    return out


def writes_register(info: OpInfo) -> bool:
    """Whether an instruction of this opcode writes a destination register."""
    return not (info.is_store or info.first_operand_read or info.opcode in ("ret", "exit", "trap", "brkpt"))


def decode_kernel(codes_path: Path, readable_path: Path, isa_table: list[str]) -> list[SeqItem]:
    """One kernel's instructions as SeqItems, from its code file and its readable file."""
    codes, tokens = _lines(codes_path), _lines(readable_path)
    if len(codes) != len(tokens):
        raise PtxstaticError(
            f"{codes_path}: {len(codes)} codes but {readable_path.name} has {len(tokens)} instructions"
        )
    infos = [op_info(t) for t in tokens]
    writes = [writes_register(i) for i in infos]
    items: list[SeqItem] = []
    for i, (code, info) in enumerate(zip(codes, infos)):
        if len(code) != 9 or not code.isdigit():
            raise SourceError(str(codes_path), i + 1, 1, f"expected a 9-digit code, found {code!r}")
        index = int(code[:3])
        if index >= len(isa_table) or isa_table[index] != info.opcode:
            listed = isa_table[index] if index < len(isa_table) else "nothing"
            raise SourceError(
                str(codes_path), i + 1, 1,
                f"opcode index {index} is {listed!r} in ptx_isa.txt but the readable file has {tokens[i]!r}",
            )
        n_operands, back = int(code[6]), int(code[7])
        n_dst = min(n_operands, int(writes[i]))
        distance, kind = 0, "none"
        if back:
            j, seen = i, 0
            while j > 0 and seen < back:
                j -= 1
                seen += writes[j]
            if seen != back:
                raise SourceError(
                    str(codes_path), i + 1, 8,
                    f"dependency {back} writers back, but only {seen} earlier instructions write a register",
                )
            distance, kind = i - j, producer_kind(infos[j])
        items.append(SeqItem(
            info.opcode, info.group, info.space, info.dtype, info.vec, n_operands - n_dst, n_dst, False,
            distance, kind,
        ))
    return items


def _clock_table(folder: Path, gpu: str) -> list[ClockConfig]:
    info = folder / "gpu_info" / gpu
    mem = _int_lines(info / f"clks_mem_{gpu}.txt")
    if len(mem) < 2:
        raise PtxstaticError(f"{info}: clks_mem_{gpu}.txt needs the clocks and a default on its last line")
    default_mem, mems = mem[-1], sorted(set(mem[:-1]))
    configs: list[tuple[int, int, bool]] = []
    for m in mems:
        core = _int_lines(info / f"clks_core_{gpu}_{m}.txt")
        default_core, cores = core[-1], sorted(set(core[:-1]))
        configs += [(m, c, m == default_mem and c == default_core) for c in cores]
    idle_path = info / f"idle_pows_{gpu}.txt"
    idle: list[float | None] = [None] * len(configs)
    if idle_path.is_file():
        values = [float(v) for v in _lines(idle_path)]
        if len(values) != len(configs):
            raise PtxstaticError(f"{idle_path}: {len(values)} idle powers for {len(configs)} configurations")
        idle = list(values)
    return [ClockConfig(m, c, d, p) for (m, c, d), p in zip(configs, idle)]


def read_aggregated(path: Path) -> dict[str, list[Measurement]]:
    """Benchmark name -> its measurements, from an ``aggregated_dataset_GPU.csv`` file."""
    out: dict[str, list[Measurement]] = {}
    current: list[Measurement] | None = None
    for n, line in enumerate(_lines(path), 1):
        parts = line.split(",")
        if len(parts) == 1:
            current = out.setdefault(parts[0], [])
            continue
        if current is None or len(parts) != 5:
            raise SourceError(str(path), n, 1, "expected a benchmark name or mem_mhz,core_mhz,time,power,energy")
        try:
            m, c = int(float(parts[0])), int(float(parts[1]))
            t, p, e = (float(x) for x in parts[2:])
        except ValueError:
            raise SourceError(str(path), n, 1, f"not numbers: {line!r}") from None
        if not (t > 0 and p > 0 and e > 0):
            raise SourceError(str(path), n, 1, f"time, power and energy must be positive: {line!r}")
        current.append(Measurement(m, c, t, p, e))
    return out


def _kernel_files(bench: Path) -> list[tuple[Path, Path]]:
    pairs = []
    k = 0
    while (bench / f"outputSequence_kernel_depend_{k}.csv").is_file():
        pairs.append((bench / f"outputSequence_kernel_depend_{k}.csv",
                      bench / f"outputSequenceReadable_kernel_{k}.csv"))
        k += 1
    return pairs


def _kernel_names(bench: Path, count: int) -> list[str]:
    path = bench / "outputOccurrences_per_kernel.csv"
    names = [line.split(",", 1)[0] for line in _lines(path)] if path.is_file() else []
    return [names[k] if k < len(names) else f"kernel_{k}" for k in range(count)]


def import_folder(
    folder: str | Path, store: DatasetStore, *, progress: Callable[[str], None] | None = None,
) -> ImportSummary:
    """Import every suite and GPU of a folder in the gpuPTXModel layout into ``store``."""
    root = Path(folder)
    isa_path = root / "assembly_info" / "ptx_isa.txt"
    if not isa_path.is_file():
        raise PtxstaticError(f"{root}: not a gpuPTXModel-layout folder (no assembly_info/ptx_isa.txt)")
    isa_table = _lines(isa_path)
    suites = sorted(p for p in root.iterdir() if p.is_dir() and any(AGGREGATED.match(f.name) for f in p.iterdir()))
    if not suites:
        raise PtxstaticError(f"{root}: no SUITE/aggregated_dataset_GPU.csv file")
    license_text = "BSD-3-Clause (LICENSE in the source folder)" if (root / "LICENSE").is_file() else ""
    summary = ImportSummary()
    with store.transaction():
        store.set_meta("imported_from", "gpuPTXModel layout")
        for suite_dir in suites:
            for agg in sorted(f for f in suite_dir.iterdir() if AGGREGATED.match(f.name)):
                gpu = AGGREGATED.match(agg.name)["gpu"]  # type: ignore[index]
                clocks = _clock_table(root, gpu)
                if gpu not in summary.gpus:
                    store.add_gpu(gpu, clocks, description=f"gpuPTXModel {gpu} measurements",
                                  source=root.name, license=license_text)
                    summary.gpus.append(gpu)
                measured = read_aggregated(agg)
                _import_suite(root, suite_dir, gpu, clocks, measured, isa_table, store, summary, progress)
    return summary


def _import_suite(
    root: Path, suite_dir: Path, gpu: str, clocks: list[ClockConfig], measured: dict[str, list[Measurement]],
    isa_table: list[str], store: DatasetStore, summary: ImportSummary, progress: Callable[[str], None] | None,
) -> None:
    configs = {(c.f_mem, c.f_core) for c in clocks}
    folders = sorted(p.name for p in suite_dir.iterdir() if p.is_dir() and _kernel_files(p))
    missing = sorted(set(measured) - set(folders))
    if missing:
        raise PtxstaticError(f"{suite_dir}: measurements for {', '.join(missing)} but no sequence folders")
    for name in folders:
        if progress:
            progress(name)
        bench = suite_dir / name
        files = _kernel_files(bench)
        benchmark_id = store.add_benchmark(suite_dir.name, name, f"{root.name}/{suite_dir.name}/{name}")
        for position, (kname, (codes, readable)) in enumerate(zip(_kernel_names(bench, len(files)), files)):
            runs = run_length(decode_kernel(codes, readable, isa_table))
            store.add_kernel(benchmark_id, position, kname, runs, features_from_sequence(runs))
            summary.kernels += 1
            summary.instructions += sum(c for _, c in runs)
        summary.benchmarks += 1
        rows = measured.get(name)
        if rows is None:
            summary.unmeasured.append(name)
            continue
        seen = {(m.f_mem, m.f_core) for m in rows}
        if seen != configs or len(rows) != len(configs):
            raise PtxstaticError(
                f"{suite_dir}/aggregated_dataset_{gpu}.csv: {name} has {len(rows)} measurements, expected one "
                f"at each of the {len(configs)} clock configurations in gpu_info/{gpu}"
            )
        store.add_measurements(benchmark_id, gpu, rows)
        summary.measured += 1
