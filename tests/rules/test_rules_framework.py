"""The findings/rules framework: configuration, registry and doc pages, selection, diagnostics text."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from support.hook import GCC_MATCHER
from support.paths import DATA, FIXTURES, ROOT

from ptxstatic.config import Config, ConfigError, config_for, find_config, load_config
from ptxstatic.findings import Finding, Location, Note, Severity
from ptxstatic.ptx import parse_file
from ptxstatic.report.diagnostics import display_path, format_finding
from ptxstatic.rules.budget import Budget
from ptxstatic.rules.catalog import all_rules, get_rule
from ptxstatic.rules.engine import check_config, lint_module
from ptxstatic.rules.registry import CATEGORIES, Rule

LINEINFO = DATA / "rules/ptx/lineinfo/ps201_barrier.ptx"
DOC_SECTIONS = ("## What it detects", "## Why it matters", "## Example", "## How to fix", "## Known false positives")


# ----------------------------------------------------------------------------------------- registry


def test_every_rule_has_a_code_a_name_and_a_complete_doc_page():
    rules = all_rules()
    assert "PS201" in {r.code for r in rules}
    for r in rules:
        assert re.fullmatch(r"PS[1-5]\d\d", r.code) and r.category == CATEGORIES[int(r.code[2])]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name) and r.summary
        doc = r.doc
        assert doc.startswith(f"# {r.code} {r.name}\n")
        for section in DOC_SECTIONS:
            assert section in doc, (r.code, section)
    assert len({r.name for r in rules}) == len(rules)
    assert get_rule("ps201") is get_rule("barrier-under-divergence")


# ------------------------------------------------------------------------------------ configuration


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_configuration_is_found_by_walking_up(tmp_path: Path):
    _write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')  # no [tool.ptxstatic]: skipped
    outer = _write(tmp_path / "a/pyproject.toml", '[tool.ptxstatic]\nignore = ["PS2"]\nfail-on = "error"\n')
    inner = _write(tmp_path / "a/b/ptxstatic.toml", 'select = ["PS201"]\n')
    _write(tmp_path / "a/b/c/kernel.cu", "")
    assert find_config(tmp_path / "a/b/c/kernel.cu") == inner.resolve()
    assert find_config(tmp_path / "a/other.cu") == outer.resolve()
    assert find_config(tmp_path / "elsewhere.cu") is None or find_config(tmp_path / "elsewhere.cu") != outer
    config = config_for(tmp_path / "a/x.cu")
    assert config.fail_on == Severity.ERROR and not config.is_selected("PS201") and config.is_selected("PS101")
    assert config.root == (tmp_path / "a").resolve()


def test_all_keys(tmp_path: Path):
    path = _write(tmp_path / "pyproject.toml", """
[tool.ptxstatic]
gpu = "h100"
select = ["PS1", "PS201"]
ignore = ["PS2"]
fail-on = "note"
nvcc-flags = "-arch=sm_90 -lineinfo"
per-file-ignores = { "legacy/*.cu" = ["PS201"], "*_test.cu" = ["PS2"] }
launch = { grid = 1024, block = [256], args = { n = 1048576 } }

[tool.ptxstatic.rules.PS201]
severity = "error"
""")
    config = load_config(path)
    check_config(config)
    assert config.gpu == "h100" and config.nvcc_flags == "-arch=sm_90 -lineinfo" and config.fail_on == Severity.NOTE
    assert config.is_selected("PS201")  # the longer entry wins: PS201 over PS2
    assert not config.is_selected("PS202") and config.is_selected("PS101") and not config.is_selected("PS301")
    assert config.ignored_in("PS201", str(tmp_path / "legacy/old.cu"))
    assert not config.ignored_in("PS201", str(tmp_path / "src/legacy/old.cu"))  # a pattern with / is anchored
    assert config.ignored_in("PS201", str(tmp_path / "deep/dir/k_test.cu"))
    assert config.launch.grid == (1024, 1, 1) and config.launch.args == {"n": 1048576}
    assert config.rule_options("PS201") == {"severity": "error"}


@pytest.mark.parametrize("text, message, line", [
    ('[tool.ptxstatic]\nselect = ["PS2"]\nfail_on = "error"\n', "unknown key 'fail_on' in the ptxstatic configuration"
     " (did you mean 'fail-on'?)", 3),
    ('[tool.ptxstatic]\nselect = "PS2"\n', "select must be a list of rule codes", 2),
    ('[tool.ptxstatic]\nignore = ["E501"]\n', "'E501' in ignore is not a rule code", 2),
    ('[tool.ptxstatic]\nfail-on = "fatal"\n', "unknown severity 'fatal'", 2),
    ('[tool.ptxstatic]\nlaunch = { grid = 0 }\n', "bad dimensions", 2),
    ('[tool.ptxstatic]\n\n[tool.ptxstatic.rules.PS201]\nseverity = "error"\ntreshold = 3\n',
     "unknown option 'treshold' for PS201 (barrier-under-divergence)", 5),
    ('[tool.ptxstatic]\n[tool.ptxstatic.rules.PS299]\nseverity = "error"\n', "unknown rule code 'PS299'", 2),
    ('[tool.ptxstatic]\ngpu = "voodoo3"\n', "unknown GPU 'voodoo3'", 2),
    ('[tool.ptxstatic]\nselect = [\n', "invalid TOML", 3),
    ('[tool.ptxstatic]\nhook-server = "no"\n', "hook-server must be true or false", 2),
    ('[tool.ptxstatic]\nhook-budget = 0\n', "hook-budget must be a positive number of seconds", 2),
])
def test_bad_configuration_names_the_key_file_and_line(tmp_path: Path, text: str, message: str, line: int):
    path = _write(tmp_path / "pyproject.toml", text)
    with pytest.raises(ConfigError) as info:
        check_config(load_config(path))
    err = info.value
    assert message in str(err) and err.file == str(path.resolve()) and err.line == line, str(err)
    assert str(err).startswith(f"{path.resolve()}:{line}:")


def test_unreadable_configuration(tmp_path: Path):
    path = tmp_path / "ptxstatic.toml"
    path.write_bytes(b'select = ["PS\xff"]\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read the configuration"):
        load_config(tmp_path / "missing.toml")


# -------------------------------------------------------------------------------------------- engine


def test_configured_severity_and_per_file_ignores(tmp_path: Path):
    module = parse_file(LINEINFO)  # PS201's kernels; other rules report on some of them too
    _write(tmp_path / "ptxstatic.toml", '[rules.PS201]\nseverity = "error"\n')
    strict = lint_module(module, load_config(tmp_path / "ptxstatic.toml"), source_root=ROOT, rules=[get_rule("PS201")])
    assert strict and all(f.severity == Severity.ERROR for f in strict)
    _write(tmp_path / "ptxstatic.toml", '[per-file-ignores]\n"ps201_helpers.cuh" = ["PS201"]\n')
    ignored = lint_module(module, load_config(tmp_path / "ptxstatic.toml"), source_root=ROOT, rules=[get_rule("PS201")])
    assert len(ignored) == len(strict) - 2 and all(not f.source.file.endswith(".cuh") for f in ignored)
    _write(tmp_path / "ptxstatic.toml", 'ignore = ["PS201"]\n')
    assert lint_module(module, load_config(tmp_path / "ptxstatic.toml"), source_root=ROOT,
                       rules=[get_rule("PS201")]) == []


def test_findings_are_sorted_and_the_same_every_run():
    module = parse_file(LINEINFO)
    runs = [lint_module(module, Config(), source_root=ROOT) for _ in range(2)]
    assert runs[0] == runs[1]
    keys = [f.sort_key() for f in runs[0]]
    assert keys == sorted(keys)
    assert all(f.display_name == f.kernel for f in runs[0])  # extern "C" kernels


def test_display_names_are_demangled_unless_asked_not_to():
    module = parse_file(FIXTURES / "nvcc/sm_90/lineinfo/calls.ptx")
    shown = lint_module(module, Config(), source_root=ROOT)
    plain = lint_module(module, Config(), source_root=ROOT, display_names=False)
    assert shown and all(f.kernel.startswith("_Z") and f.display_name.startswith("calls_") for f in shown)
    assert [f.display_name for f in plain] == [f.kernel for f in shown]
    assert [dataclasses.replace(f, display_name="") for f in plain] == [
        dataclasses.replace(f, display_name="") for f in shown]


def test_a_failing_rule_is_reported_and_the_others_still_run():
    def broken(ctx):
        raise ZeroDivisionError("boom")

    rules = [Rule("PS299", "always-fails", Severity.NOTE, "fails", broken), get_rule("PS201")]
    failures: list[str] = []
    found = lint_module(parse_file(LINEINFO), Config(), source_root=ROOT, rules=rules, on_failure=failures.append)
    assert found and {f.code for f in found} == {"PS201"}
    assert failures and all("PS299 (always-fails) failed on" in m and "ZeroDivisionError: boom" in m for m in failures)
    with pytest.raises(ZeroDivisionError):
        lint_module(parse_file(LINEINFO), Config(), rules=rules)


def test_a_spent_budget_runs_no_rule_and_says_what_it_left():
    module = parse_file(LINEINFO)
    budget = Budget(0.0)
    assert lint_module(module, Config(), source_root=ROOT, budget=budget) == []
    functions = [f.name for f in module.functions if f.body is not None]
    selected = [r.code for r in all_rules() if Config().is_selected(r.code, r.opt_in)]
    assert budget.cut == [(code, fn) for fn in functions for code in selected]
    assert budget.summary().startswith(f"{selected[0]} on {functions[0]}")
    assert Budget(60.0).summary() == ""


def test_the_memory_rules_emulation_stops_when_the_budget_is_spent():
    from ptxstatic.rules.memory_sampling import EMULATION, OUT_OF_BUDGET, sample_module

    module = parse_file(LINEINFO)
    budget = Budget(0.0)
    sampling = sample_module(module, Config(), budget)
    assert sampling.runs and all(run.stopped == OUT_OF_BUDGET for run in sampling.runs)
    assert not sampling.accesses
    assert budget.cut == [(EMULATION, k.name) for k in module.kernels]
    assert all(run.stopped != OUT_OF_BUDGET for run in sample_module(module, Config(), Budget(60.0)).runs)


# --------------------------------------------------------------------------------------- diagnostics


def test_diagnostics_read_as_compiler_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    finding = Finding("PS201", Severity.WARNING, "`bar.sync` is under a condition", "k",
                      Location(str(tmp_path / "k.ptx"), 40, 2), source=Location(str(tmp_path / "src/util.cuh"), 7, 5),
                      inlined_at=(Location(str(tmp_path / "src/k.cu"), 9, 13),),
                      notes=(Note("the condition is decided here", Location(str(tmp_path / "src/k.cu"), 8, 5)),
                             Note("a note without a place")))
    monkeypatch.chdir(tmp_path)
    lines = format_finding(finding).splitlines()
    assert lines == [
        "src/util.cuh:7:5: warning: `bar.sync` is under a condition [PS201]",
        "src/k.cu:9:13: note: inlined from here",
        "src/k.cu:8:5: note: the condition is decided here",
        "src/util.cuh:7:5: note: a note without a place",
    ]
    m = GCC_MATCHER.match(lines[0])
    assert m.groups() == ("src/util.cuh", "7", "5", "warning", "`bar.sync` is under a condition [PS201]")
    assert all(GCC_MATCHER.match(line) is None for line in lines[1:])  # notes are not extra problems
    outside = format_finding(finding, cwd=tmp_path / "src" / "deeper").splitlines()[0]
    assert outside.startswith(f"{tmp_path}/src/util.cuh:7:5: warning:")
    assert display_path("rel/x.cu", tmp_path) == "rel/x.cu"
    no_column = Finding("PS201", Severity.ERROR, "m", "k", Location("a.ptx", 3, 0))
    assert GCC_MATCHER.match(format_finding(no_column, cwd="/")).groups()[:4] == ("a.ptx", "3", "", "error")


def test_rules_and_rule_commands():
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ptxstatic", *args], capture_output=True, text=True, cwd=ROOT)

    listing = cli("rules")
    assert listing.returncode == 0
    assert re.search(r"^PS201\s+barrier-under-divergence\s+warning\s+", listing.stdout, re.M)
    page = cli("rule", "PS201")
    assert page.returncode == 0 and page.stdout == get_rule("PS201").doc.rstrip("\n") + "\n"
    missing = cli("rule", "PS999")
    assert missing.returncode == 2 and missing.stderr.startswith("error: no rule 'PS999'")
    assert "Traceback" not in missing.stderr


def test_configuration_doc_lists_every_rule_option():
    from ptxstatic.report.rules_table import options_markdown

    assert options_markdown(all_rules()) in (ROOT / "docs" / "configuration.md").read_text()
