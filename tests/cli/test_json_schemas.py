"""Every command's --format json has one shape, an object with `schema`, `command`, `tool`, `kernels` and
`errors`, described by the JSON Schema shipped in the package, whatever the number of files and kernels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support.paths import DATA, FIXTURES

from ptxstatic.report.schemas import json_schema

EXAMPLE = DATA.parents[1] / "examples" / "saxpy_reduce.ptx"
TEMPLATES = FIXTURES / "nvcc" / "sm_80" / "lineinfo" / "templates.ptx"
LAUNCH = ("--grid", "4", "--block", "64", "--param", "n=1000")


def document(command: str, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "ptxstatic", command, *args, "--format", "json"], capture_output=True,
                       text=True)
    assert p.returncode in (0, 2), p.stderr
    doc = json.loads(p.stdout)
    schema = json_schema(command)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    assert doc["schema"] == 1 and doc["command"] == command
    return doc


def test_parse_one_file_and_many_have_the_same_shape(tmp_path: Path):
    one = document("parse", str(EXAMPLE))
    assert [k["kernel"] for k in one["kernels"]] == ["saxpy", "block_reduce", "finish_reduce"]
    assert len(one["files"]) == 1 and one["errors"] == []
    bad = tmp_path / "bad.ptx"
    bad.write_text(EXAMPLE.read_text().replace("ld.param.u32 \t%r6, [saxpy_param_0];", "ld.param.u32 %r6 [x];"))
    two = document("parse", str(EXAMPLE), str(bad))
    assert len(two["files"]) == 2
    assert [(e["file"], e["line"]) for e in two["errors"]] == [(str(bad), 89)]
    assert two["errors"][0]["detail"].strip().endswith("^")


def test_analyze_lists_kernels_with_demangled_names():
    doc = document("analyze", str(TEMPLATES), "--call-graph")
    names = {k["display_name"] for k in doc["kernels"]}
    assert "void tmpl_block_sum<float, 256>(float const*, float*, int)" in names
    assert all(k["file"] == str(TEMPLATES) for k in doc["kernels"])
    assert doc["files"][0]["target"] == ["sm_80"]


def test_blocks_features_and_predict_follow_their_schemas():
    blocks = document("blocks", str(EXAMPLE), "-k", "saxpy", *LAUNCH)
    assert blocks["kernels"][0]["counts"]["saxpy"]["2"] == 1000  # loop body: one per element
    features = document("features", str(EXAMPLE), "-k", "saxpy", *LAUNCH)
    assert features["kernels"][0]["features"]["ctas"] == 4
    one = document("predict", str(EXAMPLE), "-k", "saxpy", *LAUNCH)
    every = document("predict", str(EXAMPLE))
    assert [k["kernel"] for k in one["kernels"]] == ["saxpy"]
    assert [k["kernel"] for k in every["kernels"]] == ["saxpy", "block_reduce", "finish_reduce"]
    document("predict", str(EXAMPLE), "--gpu", "h100")  # a GPU with published figures and no models


def test_rules_follow_their_schema():
    from ptxstatic.rules.catalog import all_rules

    doc = document("rules")
    assert [r["code"] for r in doc["rules"]] == [r.code for r in all_rules()] and doc["kernels"] == []


OWN_FIELDS = {"parse": {"files": []}, "analyze": {"files": []}, "rules": {"rules": []},
              "evaluate": {"evaluation": {"title": "t", "samples": 0, "dvfs": {}, "absolute": {}, "notes": []}},
              "collect": {"run": {"written": 0, "already": 0}, "dataset": {}}}


@pytest.mark.parametrize("command", ["parse", "analyze", "blocks", "features", "predict", "rules", "evaluate",
                                     "collect"])
def test_the_schemas_reject_a_document_of_another_shape(command):
    schema = json_schema(command)
    good = {"schema": 1, "command": command, "tool": {"name": "ptxstatic", "version": "1"}, "kernels": [],
            "errors": [], **OWN_FIELDS.get(command, {})}
    jsonschema.validate(good, schema, cls=jsonschema.Draft202012Validator)
    for broken in ({**good, "schema": 2}, {k: v for k, v in good.items() if k != "errors"},
                   {**good, "kernels": [{"kernel": "k"}]}, {**good, "errors": ["text"]}, [good]):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema, cls=jsonschema.Draft202012Validator)
