"""Many paths to one run: the files under them, each file's configuration and compilation database, the
result cache, files analysed in parallel, headers through the files that include them, each finding once.

A ``.cuh`` header is analysed through the translation units of the run that include it (nvcc's dependency
list says which): its findings are theirs, at the header's lines. A header that none of them includes is
compiled alone as CUDA (``-x cu``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from ptxstatic.config import Config, config_for, find_config, load_config
from ptxstatic.findings import Finding
from ptxstatic.lint.cache import ResultCache
from ptxstatic.lint.compile_db import CompileDatabase, find_database, load_database
from ptxstatic.lint.document import DocumentResult, Problem, analyse_document, cached_document
from ptxstatic.lint.sources import discover
from ptxstatic.toolchain.process import stop_workers

#: progress(files done, files in all): called as files finish and a few times a second meanwhile
ProgressCallback = Callable[[int, int], None]
_TICK_S = 0.25


@dataclass(frozen=True)
class LintOptions:
    """``config``: one configuration file for every path (default: each file's own, found by walking up);
    ``build_dir``: where ``compile_commands.json`` is (default: the configuration's ``build-dir``, else found
    by walking up); ``nvcc_flags``: flags for CUDA files the build does not describe (default: the
    configuration's); ``jobs``: files analysed at once (processes); ``use_cache``: the result cache."""

    config: str | None = None
    build_dir: str | None = None
    nvcc_flags: str | None = None
    jobs: int = 1
    use_cache: bool = True


@dataclass
class LintRun:
    """The documents checked (in the order found), the problems met finding them, and each document's
    configuration."""

    documents: list[DocumentResult]
    problems: list[Problem]
    configs: dict[str, Config]
    seconds: float = 0.0

    def root_of(self, document: DocumentResult) -> Path:
        """The directory fingerprints are relative to: the configuration's, else the current one."""
        return self.configs[document.path].root or Path.cwd()


def lint_paths(paths: list[str], options: LintOptions = LintOptions(),
               progress: ProgressCallback | None = None) -> LintRun:
    """Check every ``.cu``, ``.cuh`` and ``.ptx`` file under ``paths``. A configuration or compilation
    database that cannot be read raises (:class:`~ptxstatic.errors.SourceError`); problems with single files
    are in the documents and the run."""
    from ptxstatic.rules.engine import check_config

    start = time.monotonic()
    configs = _Configs(options.config)
    files, problems = discover(paths, configs.of)
    for config in {id(c): c for c in map(configs.of, files)}.values():
        check_config(config)
    databases = _Databases(options.build_dir)
    cache = ResultCache.default() if options.use_cache else ResultCache(None)
    jobs = _Jobs(options, configs, databases, cache, progress, total=len(files))
    units = [f for f in files if not f.endswith(".cuh")]
    jobs.run(units)
    covered = _inclusions(jobs.results.values())
    headers = [f for f in files if f.endswith(".cuh")]
    for h in headers:
        if os.path.realpath(h) in covered:
            jobs.results[h] = DocumentResult(h, "cuh", included_by=covered[os.path.realpath(h)])
            jobs.done += 1
    jobs.run([h for h in headers if h not in jobs.results])
    cache.prune()
    documents = [jobs.results[f] for f in files]
    run = LintRun(documents, problems, {f: configs.of(f) for f in files}, time.monotonic() - start)
    _drop_repeats(run)
    return run


class _Configs:
    """Each path's configuration (each file read once), or the one given."""

    def __init__(self, path: str | None) -> None:
        self.fixed = load_config(path) if path is not None else None
        self._by_file: dict[Path | None, Config] = {}

    def of(self, path: str) -> Config:
        if self.fixed is not None:
            return self.fixed
        found = find_config(path)
        if found not in self._by_file:
            self._by_file[found] = load_config(found) if found is not None else config_for(path)
        return self._by_file[found]


class _Databases:
    """The compilation database of each file (each read once), from ``--build-dir``, the configuration's
    ``build-dir``, or walking up."""

    def __init__(self, build_dir: str | None) -> None:
        self.build_dir = build_dir
        self._by_dir: dict[tuple[str, str | None], Path | None] = {}

    def path_for(self, file: str, config: Config) -> Path | None:
        build = self.build_dir or (str(config.build_path) if config.build_path is not None else None)
        key = (os.path.dirname(os.path.abspath(file)), build)
        if key not in self._by_dir:
            self._by_dir[key] = find_database(file, build)
        return self._by_dir[key]

    def for_file(self, file: str, config: Config) -> CompileDatabase | None:
        if file.endswith(".ptx"):
            return None
        path = self.path_for(file, config)
        return load_database(path) if path is not None else None


class _Jobs:
    """Runs documents: cached results in this process, the others in a pool of ``jobs`` processes (one:
    a thread, so that progress keeps being reported)."""

    def __init__(self, options: LintOptions, configs: _Configs, databases: _Databases, cache: ResultCache,
                 progress: ProgressCallback | None, total: int) -> None:
        self.options, self.configs, self.databases, self.cache = options, configs, databases, cache
        self.progress, self.total, self.done = progress, total, 0
        self.results: dict[str, DocumentResult] = {}

    def run(self, files: list[str]) -> None:
        todo = []
        for f in files:
            config, database = self.configs.of(f), self.databases.for_file(f, self.configs.of(f))
            hit = cached_document(f, config, self.cache, database=database, nvcc_flags=self.options.nvcc_flags)
            if hit is not None:
                self.results[f] = hit
                self.done += 1
            else:
                todo.append((f, config, database.path if database is not None else None))
        self._tick()
        if todo:
            with self._executor(len(todo)) as pool:
                try:
                    self._collect(pool, {pool.submit(_analyse, f, c, d, self.options.nvcc_flags, self.cache): f
                                         for f, c, d in todo})
                except BaseException:  # stopped by a signal, or a failure: start nothing more, stop the workers
                    pool.shutdown(wait=False, cancel_futures=True)
                    stop_workers()
                    raise

    def _executor(self, tasks: int) -> Executor:
        if self.options.jobs > 1 and tasks > 1:
            return ProcessPoolExecutor(min(self.options.jobs, tasks))
        return ThreadPoolExecutor(1)

    def _collect(self, pool: Executor, futures: dict) -> None:
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=_TICK_S, return_when=FIRST_COMPLETED)
            for future in finished:
                self.results[futures[future]] = future.result()
                self.done += 1
            self._tick()

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress(self.done, self.total)


def _analyse(path: str, config: Config, database_path: Path | None, nvcc_flags: str | None,
             cache: ResultCache) -> DocumentResult:
    """One document, in a worker; an unexpected exception becomes the document's problem."""
    try:
        database = load_database(database_path) if database_path is not None else None
        return analyse_document(path, config, database=database, nvcc_flags=nvcc_flags, cache=cache)
    except Exception as exc:  # a bug on one file must not lose the others' results
        kind = "cuh" if path.endswith(".cuh") else "ptx" if path.endswith(".ptx") else "cu"
        return DocumentResult(path, kind, problems=[Problem(path, message=f"internal error: "
                                                                          f"{type(exc).__name__}: {exc}")])


def _inclusions(documents) -> dict[str, list[str]]:
    """Header (resolved path) -> the analysed translation units whose compilation read it."""
    out: dict[str, list[str]] = {}
    for d in documents:
        if d.kind == "cu":
            for dep in d.dependencies:
                out.setdefault(os.path.realpath(dep), []).append(d.path)
    return out


def _drop_repeats(run: LintRun) -> None:
    """A finding in a header that several files include is reported once, with the first of them."""
    seen: set[tuple[str, str]] = set()
    for d in run.documents:
        kept: list[Finding] = []
        for f in d.findings:
            mark = (f.fingerprint(run.root_of(d)), str(f.location))
            if mark not in seen:
                seen.add(mark)
                kept.append(f)
        d.findings = kept
