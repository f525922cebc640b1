"""Project configuration: ``[tool.ptxstatic]`` in ``pyproject.toml``, or a ``ptxstatic.toml``.

The file is found by walking up from the checked path: in each directory ``ptxstatic.toml`` (its top level
is the configuration) is taken first, then a ``pyproject.toml`` that has a ``[tool.ptxstatic]`` table.
Keys are spelled with dashes, as in ``pyproject.toml`` tools generally; an unknown key is an error naming
it, with its file and line. See ``docs/configuration.md``.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ptxstatic.config_search import SERVER_KEY, config_file
from ptxstatic.errors import PtxstaticError, SourceError
from ptxstatic.findings import Severity
from ptxstatic.launch import Launch
from ptxstatic.limits import HOOK_BUDGET_S

KEYS = ("gpu", "select", "ignore", "per-file-ignores", "rules", "nvcc-flags", "launch", "fail-on", "exclude",
        "extend-exclude", "build-dir", "report-system-headers", SERVER_KEY, "hook-budget")
#: what ``ptxstatic check`` skips unless ``exclude`` says otherwise: version control, environments, build trees
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", ".tox", "node_modules", "__pycache__", "build",
                   "_build", "dist", "CMakeFiles")
_CODE = re.compile(r"^(ALL|PS\d{0,3})$")


class ConfigError(SourceError):
    """A configuration file that cannot be read or holds a bad key or value."""


@dataclass(frozen=True)
class Config:
    """The settings in force for a path; ``Config()`` is the default when no file is found.

    ``root`` is the directory of the configuration file: ``per-file-ignores`` patterns and fingerprints are
    relative to it, and headers outside it (and outside the compilation's include directories) are system
    headers, whose findings are moved to the user's call site unless ``report_system_headers``. ``rules`` maps
    a rule code to its options (thresholds, ``severity``) as written; the rule
    engine checks them against the rules' declared options.
    """

    path: Path | None = None
    gpu: str | None = None
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rules: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)
    nvcc_flags: str | None = None
    launch: Launch | None = field(default=None, hash=False)
    fail_on: Severity = Severity.WARNING
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    build_dir: str | None = None
    report_system_headers: bool = False
    hook_server: bool = True
    hook_budget: float = HOOK_BUDGET_S

    @property
    def root(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def is_selected(self, code: str, opt_in: bool = False) -> bool:
        """Whether rule ``code`` runs: the longest matching entry of ``select``/``ignore`` decides, and
        ``ignore`` wins a tie; an ``opt_in`` rule needs an entry of ``select`` other than ``ALL``."""
        best_select = max((_match_length(p, code) for p in self.select), default=-1)
        best_ignore = max((_match_length(p, code) for p in self.ignore), default=-1)
        return best_select >= (1 if opt_in else 0) and best_select > best_ignore

    def ignored_in(self, code: str, file: str) -> bool:
        """Whether ``per-file-ignores`` switches ``code`` off for ``file`` (a pattern without ``/`` matches the
        file name in any directory; one with ``/`` matches the path relative to the configuration's directory)."""
        rel = _relative(file, self.root)
        name = Path(file).name
        for pattern, codes in self.per_file_ignores:
            target = rel if "/" in pattern else name
            if fnmatch.fnmatchcase(target, pattern) and any(_match_length(c, code) >= 0 for c in codes):
                return True
        return False

    def is_excluded(self, path: str | Path, parents: bool = True) -> bool:
        """Whether ``exclude``/``extend-exclude`` skip ``path`` (a file, or a directory and all under it): a
        pattern without ``/`` matches the path's name or (``parents``) the name of a directory above it below
        the configuration's directory (else the current one); one with ``/`` matches the path relative to it."""
        base = (self.root or Path.cwd()).resolve()
        full = Path(path).resolve()
        rel = full.relative_to(base).as_posix() if full.is_relative_to(base) else full.name
        names = rel.split("/") if parents else [full.name]
        for pattern in (*self.exclude, *self.extend_exclude):
            if "/" in pattern:
                if fnmatch.fnmatchcase(rel, pattern.strip("/")):
                    return True
            elif any(fnmatch.fnmatchcase(name, pattern) for name in names):
                return True
        return False

    @property
    def build_path(self) -> Path | None:
        """``build-dir`` as a path (relative to the configuration's directory), or None."""
        if self.build_dir is None:
            return None
        return (self.root / self.build_dir) if self.root is not None else Path(self.build_dir)

    def rule_options(self, code: str) -> dict[str, Any]:
        return self.rules.get(code, {})

    def error(self, message: str, *keys: str) -> ConfigError:
        """A :class:`ConfigError` for the key path ``keys`` (its line looked up in the file)."""
        if self.path is None:
            return ConfigError("<default configuration>", 0, 0, message)
        text = _read(self.path)
        line, column = _key_position(text, keys, self.path.name == "pyproject.toml")
        return ConfigError(str(self.path), line, column, message, _nth_line(text, line))


def _match_length(pattern: str, code: str) -> int:
    """Length of ``pattern`` if it selects ``code`` (``ALL`` selects everything, with length 0), else -1."""
    if pattern == "ALL":
        return 0
    return len(pattern) if code.startswith(pattern) else -1


def _relative(file: str, root: Path | None) -> str:
    path = Path(file)
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            pass
    return path.as_posix()


# ------------------------------------------------------------------------------------------- finding


def find_config(start: str | Path) -> Path | None:
    """The configuration file for ``start`` (a file or directory), walking up to the file-system root."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    return _find_from(here)


@lru_cache(maxsize=256)
def _find_from(directory: Path) -> Path | None:
    found = config_file(str(directory))
    return Path(found) if found is not None else None


def config_for(path: str | Path) -> Config:
    """The configuration in force for ``path``: the one found by :func:`find_config`, else the default."""
    found = find_config(path)
    return load_config(found) if found is not None else Config()


# ------------------------------------------------------------------------------------------- loading


def load_config(path: str | Path) -> Config:
    """Read and validate one configuration file; raises :class:`ConfigError` naming the file (and line)."""
    path = Path(path).resolve()
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        if m:
            line, col = int(m.group(1)), int(m.group(2))
        else:  # "(at end of document)"
            line, col = text.count("\n") + 1, len(text) - text.rfind("\n")
        raise ConfigError(str(path), line, col, "invalid TOML: " + re.sub(r"\s*\(at .*\)", "", msg),
                          _nth_line(text, line)) from None
    table = data.get("tool", {}).get("ptxstatic", {}) if path.name == "pyproject.toml" else data
    config = Config(path=path)
    if not isinstance(table, dict):
        raise config.error("[tool.ptxstatic] must be a table", "tool")
    return _from_table(config, table)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(str(path), 0, 0, "cannot read the configuration: it is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(str(path), 0, 0, f"cannot read the configuration: {exc.strerror or exc}") from None


def _from_table(config: Config, table: dict[str, Any]) -> Config:
    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f"; known keys: {', '.join(KEYS)}"
            raise config.error(f"unknown key '{key}' in the ptxstatic configuration{hint}", key)
    values: dict[str, Any] = {}
    if "gpu" in table:
        values["gpu"] = _string(config, table, "gpu")
    if "nvcc-flags" in table:
        values["nvcc_flags"] = _string(config, table, "nvcc-flags")
    if "build-dir" in table:
        values["build_dir"] = _string(config, table, "build-dir")
    if SERVER_KEY in table:
        if not isinstance(table[SERVER_KEY], bool):
            raise config.error(f"{SERVER_KEY} must be true or false", SERVER_KEY)
        values["hook_server"] = table[SERVER_KEY]
    if "hook-budget" in table:
        budget = table["hook-budget"]
        if isinstance(budget, bool) or not isinstance(budget, int | float) or budget <= 0:
            raise config.error("hook-budget must be a positive number of seconds", "hook-budget")
        values["hook_budget"] = float(budget)
    for key in ("exclude", "extend-exclude"):
        if key in table:
            values[key.replace("-", "_")] = _strings(config, table, key)
    for key in ("select", "ignore"):
        if key in table:
            values[key] = _codes(config, table[key], key)
    if "per-file-ignores" in table:
        values["per_file_ignores"] = _per_file_ignores(config, table["per-file-ignores"])
    if "rules" in table:
        values["rules"] = _rules(config, table["rules"])
    if "report-system-headers" in table:
        if not isinstance(table["report-system-headers"], bool):
            raise config.error("report-system-headers must be true or false", "report-system-headers")
        values["report_system_headers"] = table["report-system-headers"]
    if "fail-on" in table:
        try:
            values["fail_on"] = Severity.parse(_string(config, table, "fail-on"))
        except PtxstaticError as exc:
            raise config.error(f"fail-on: {exc}", "fail-on") from None
    if "launch" in table:
        launch = table["launch"]
        if not isinstance(launch, dict):
            raise config.error("launch must be a table such as { grid = 1024, block = 256 }", "launch")
        unknown = set(launch) - {"grid", "block", "shared-bytes", "args"}
        if unknown:
            raise config.error(f"unknown key '{sorted(unknown)[0]}' in launch; known: grid, block, shared-bytes, args",
                               "launch", sorted(unknown)[0])
        try:
            values["launch"] = Launch.from_dict({**launch, "shared_bytes": launch.get("shared-bytes", 0)})
        except (PtxstaticError, ValueError) as exc:
            raise config.error(f"launch: {exc}", "launch") from None
    return Config(path=config.path, **values)


def _string(config: Config, table: dict[str, Any], key: str) -> str:
    value = table[key]
    if not isinstance(value, str):
        raise config.error(f"{key} must be a string, not {type(value).__name__}", key)
    return value


def _strings(config: Config, table: dict[str, Any], key: str) -> tuple[str, ...]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise config.error(f"{key} must be a list of glob patterns such as [\"third_party\", \"legacy/*.cu\"]", key)
    return tuple(value)


def _codes(config: Config, value: Any, *keys: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise config.error(f"{keys[-1]} must be a list of rule codes such as [\"PS201\", \"PS1\"]", *keys)
    for v in value:
        if not _CODE.match(v):
            raise config.error(f"'{v}' in {keys[-1]} is not a rule code or prefix (PS201, PS2, PS or ALL)", *keys)
    return tuple(value)


def _per_file_ignores(config: Config, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise config.error("per-file-ignores must be a table of glob = [codes]", "per-file-ignores")
    return tuple((pattern, _codes(config, codes, "per-file-ignores", pattern)) for pattern, codes in value.items())


def _rules(config: Config, value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise config.error("rules must hold one table per rule code, such as [tool.ptxstatic.rules.PS201]", "rules")
    for code in value:
        if not re.fullmatch(r"PS\d{3}", code):
            raise config.error(f"'{code}' under rules is not a rule code such as PS201", "rules", code)
    return {code: dict(options) for code, options in value.items()}


# ------------------------------------------------------------------------------------ error positions


def _key_position(text: str, keys: tuple[str, ...], in_pyproject: bool) -> tuple[int, int]:
    """1-based (line, column) where the last of ``keys`` is written ((0, 0) if it cannot be found): searched
    after the header of the innermost table the keys name, else after ``[tool.ptxstatic]``."""
    lines = text.splitlines()
    prefix = ["tool", "ptxstatic"] if in_pyproject else []
    start = 0
    for n in range(len(keys), -1, -1):
        parts = prefix + list(keys[:n])
        if not parts:
            break
        pattern = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in parts) + r"\s*\]")
        found = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
        if found is not None:
            if n == len(keys):
                return found + 1, lines[found].index("[") + 1
            start = found
            break
    if not keys:
        return 0, 0
    name = re.escape(keys[-1])
    key = re.compile(r"""(?:^\s*(?:[\w-]+\s*\.\s*)*|[{,]\s*)["']?(""" + name + r""")["']?\s*=""")
    for i in range(start, len(lines)):
        m = key.search(lines[i])
        if m:
            return i + 1, m.start(1) + 1
    return 0, 0


def _nth_line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""
