"""What the rule tests share: the compiled rule kernels, their ``expect:`` marks, and running rules on them."""

from __future__ import annotations

import re
from pathlib import Path

from ptxstatic.config import Config
from ptxstatic.findings import Finding
from ptxstatic.ptx import parse_file
from ptxstatic.rules.catalog import get_rule
from ptxstatic.rules.engine import lint_module
from support.paths import DATA, ROOT

RULES = DATA / "rules"
VARIANTS = ("lineinfo", "plain", "G")


def ptx(stem: str, variant: str = "lineinfo") -> Path:
    return RULES / "ptx" / variant / f"{stem}.ptx"


def source(stem: str) -> Path:
    return RULES / "cuda" / f"{stem}.cu"


def marked(stem: str, code: str) -> set[tuple[str, int]]:
    """(kernel, line) of every line of the source carrying ``// expect: <code>``, with the kernel it is in."""
    out, kernel = set(), ""
    for n, line in enumerate(source(stem).read_text().splitlines(), 1):
        m = re.search(r"__global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(", line)
        if m:
            kernel = m.group(1)
        if re.search(rf"//\s*expect:.*\b{code}\b", line):
            out.add((kernel, n))
    return out


def kernels(stem: str, prefix: str) -> set[str]:
    return set(re.findall(rf"__global__ void (?:__launch_bounds__\([^)]*\) )?({prefix}\w*)\(",
                          source(stem).read_text()))


def lint(stem: str, codes: str, variant: str = "lineinfo", config: Config | None = None) -> list[Finding]:
    rules = [get_rule(c) for c in codes.split(",")]
    return lint_module(parse_file(ptx(stem, variant)), config or Config(), rules=rules, source_root=ROOT)


def found(findings: list[Finding]) -> set[tuple[str, int]]:
    return {(f.kernel, f.source.line) for f in findings}
