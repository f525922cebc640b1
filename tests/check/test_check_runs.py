"""Across runs: the result cache (hits, and what invalidates it), baselines (only new findings fail), and
--jobs (the same output in parallel)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.check import check, check_json, copy_project, expected
from support.paths import needs_nvcc

pytestmark = needs_nvcc


def _cached(doc: dict) -> dict[str, bool]:
    return {f["path"]: f["cached"] for f in doc["files"]}


def test_the_cache_hits_and_a_changed_header_or_flag_invalidates(tmp_path: Path):
    project = copy_project(tmp_path)
    first, _ = check_json("src", cwd=project, tmp=tmp_path)
    assert first["summary"]["cached"] == 0
    second, _ = check_json("src", cwd=project, tmp=tmp_path)
    assert _cached(second) == {"src/clean.cu": True, "src/reduce.cu": True, "src/scan.cu": True,
                               "src/tile.cuh": False}  # the header is checked through scan.cu, not cached itself
    assert [f["fingerprint"] for f in second["findings"]] == [f["fingerprint"] for f in first["findings"]]
    assert second["findings"] == first["findings"]
    # the header scan.cu includes changes: scan.cu is analysed again, the others come from the cache
    header = project / "src" / "tile.cuh"
    barrier = "    __syncthreads();  // expect"
    header.write_text(header.read_text().replace(barrier, "\n" + barrier))
    third, _ = check_json("src", cwd=project, tmp=tmp_path)
    assert _cached(third)["src/scan.cu"] is False and _cached(third)["src/reduce.cu"] is True
    assert {f["location"]["line"] for f in third["findings"] if f["location"]["file"].endswith("tile.cuh")} \
        == expected(header)
    # other flags: compiled again
    fourth, _ = check_json("--nvcc-flags", "-arch=sm_90 -lineinfo -DCHECK_BOUNDS", "src/reduce.cu", cwd=project,
                           tmp=tmp_path)
    assert _cached(fourth) == {"src/reduce.cu": False}
    assert len(fourth["findings"]) == 2
    # a changed configuration: analysed again
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + "[tool.ptxstatic.rules.PS201]\nseverity = \"error\"\n")
    fifth, _ = check_json("src/reduce.cu", cwd=project, tmp=tmp_path)
    assert _cached(fifth) == {"src/reduce.cu": False} and fifth["findings"][0]["severity"] == "error"
    assert check_json("--no-cache", "src/clean.cu", cwd=project, tmp=tmp_path)[0]["summary"]["cached"] == 0


def test_only_new_findings_fail_with_a_baseline(tmp_path: Path):
    project = copy_project(tmp_path)
    baseline = tmp_path / "baseline.json"
    written = check("--write-baseline", str(baseline), "src", cwd=project, tmp=tmp_path)
    assert written.returncode == 0, written.stderr
    assert [e["code"] for e in json.loads(baseline.read_text())["findings"]] == ["PS201", "PS201"]
    assert check("--baseline", str(baseline), "src", cwd=project, tmp=tmp_path).returncode == 0
    # lines move (a comment above everything) and a new finding appears: only the new one fails and is shown
    reduce = project / "src" / "reduce.cu"
    text = "// moved down\n\n" + reduce.read_text() + """
extern "C" __global__ void odd_threads(float* out)
{
    __shared__ float t[256];
    if (threadIdx.x & 1) {
        t[threadIdx.x] = 1.0f;
        __syncthreads();  // new
        out[threadIdx.x] = t[threadIdx.x ^ 1];
    }
}
"""
    reduce.write_text(text)
    new_line = next(n for n, line in enumerate(text.splitlines(), 1) if "// new" in line)
    proc = check("--baseline", str(baseline), "src", cwd=project, tmp=tmp_path)
    assert proc.returncode == 1
    shown = re.findall(r"^(\S+?):(\d+):\d+: warning: .*\[PS201\]$", proc.stdout, re.M)
    assert shown == [("src/reduce.cu", str(new_line))]
    assert "2 in the baseline not shown" in proc.stdout
    doc, _ = check_json("--baseline", str(baseline), "src", cwd=project, tmp=tmp_path)
    assert sorted(f["baseline"] for f in doc["findings"]) == ["new", "unchanged", "unchanged"]
    sarif = json.loads(check("--format", "sarif", "--baseline", str(baseline), "src", cwd=project,
                             tmp=tmp_path).stdout)
    assert sorted(r["baselineState"] for r in sarif["runs"][0]["results"]) == ["new", "unchanged", "unchanged"]


def test_jobs_2_gives_the_output_of_jobs_1(tmp_path: Path):
    project = copy_project(tmp_path)
    one = check("--no-cache", "--jobs", "1", "--format", "json", ".", cwd=project, tmp=tmp_path)
    two = check("--no-cache", "--jobs", "2", "--format", "json", ".", cwd=project, tmp=tmp_path)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    a["summary"].pop("seconds"), b["summary"].pop("seconds")
    assert a == b and a["summary"]["files"] == 4
    text = [check("--no-cache", "--jobs", n, ".", cwd=project, tmp=tmp_path).stdout for n in ("1", "2")]
    assert text[0] == text[1] and "[PS201]" in text[0]
