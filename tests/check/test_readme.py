"""README's rule table is the registry's (``ptxstatic rules --format markdown``), and its CI snippets name
options and hooks that exist."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml
from support.paths import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_rule_table_is_generated_from_the_registry():
    table = subprocess.run([sys.executable, "-m", "ptxstatic", "rules", "--format", "markdown"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120, check=True).stdout
    m = re.search(r"<!-- rules-table:start -->\n(.*?)<!-- rules-table:end -->", README, re.S)
    assert m is not None, "README has no rules table markers"
    assert m.group(1) == table, "README's rule table differs: paste `ptxstatic rules --format markdown`"
    from ptxstatic.rules.catalog import all_rules

    assert len(table.splitlines()) == 2 + len(all_rules())


def test_readme_ci_snippets_use_real_hooks_and_options():
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks == {"ptxstatic-check", "ptxstatic-check-system"}
    section = README.split("## In your build and CI", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"- id: (\S+)", section)) <= hooks
    help_text = subprocess.run([sys.executable, "-m", "ptxstatic", "check", "--help"], cwd=ROOT,
                               capture_output=True, text=True, timeout=120, check=True).stdout
    for option in set(re.findall(r"ptxstatic check[^\n]*?(--[a-z-]+)", section)):
        assert option in help_text, option
    workflow = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    steps = workflow["jobs"]["check"]["steps"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
