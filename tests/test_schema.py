"""The JSON documents match the committed JSON Schemas (generated from dlasim/schema.py); cause codes are the
documented ones."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from dlasim.explainer import texts
from dlasim import schema as S
from dlasim.cli import main

ROOT = Path(__file__).resolve().parents[1]
HAX = ROOT / "validation" / "data" / "haxconn"
TREX = ROOT / "validation" / "data" / "trex" / "a100-resnet50" / "fp16"


def out_of(capsys, *argv) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_committed_schemas_are_the_generated_ones():
    for name, schema in S.schemas().items():
        path = ROOT / "docs" / "schema" / f"{name}.schema.json"
        assert json.loads(path.read_text()) == schema, f"regenerate: python -m dlasim.schema ({path.name})"


CASES = [
    ("estimate", ["estimate", "zoo:googlenet", "--hw", "xavier-agx", "--fp16"]),
    ("estimate", ["estimate", "zoo:resnet50", "--hw", "a100", "--int8", "--sparsity=force", "--batch=8"]),
    ("estimate", ["estimate", "zoo:yolov4", "--hw", "orin-agx:30w", "--useDLACore=1", "--int8", "--verbose"]),
    ("explain", ["explain", "zoo:resnet18", "--hw", "orin-agx", "--int8", "--sparsity=force"]),
    ("explain", ["explain", "zoo:mobilenet_v2", "--hw", "a100", "--device", "gpu", "--precision", "fp32"]),
    ("explain-measured", ["explain", str(HAX / "prototxt" / "googlenet.prototxt"), "--device", "gpu",
                          "--measured", str(HAX / "profiles" / "googlenet_gpu_mark_at_-1.profile")]),
    ("explain-measured", ["explain", str(HAX / "prototxt" / "googlenet.prototxt"), "--device", "dla",
                          "--measured", str(HAX / "profiles" / "googlenet_dla_mark_at_-1.profile")]),
    ("compare", ["compare", "zoo:resnet18", "--vary", "precision=fp16,int8"]),
    ("compare", ["compare", "zoo:googlenet", "--vary", "device=dla,gpu", "--hw", "orin-agx"]),
    ("compare", ["compare", "zoo:resnet18-qat", "--hw", "a100", "--device", "gpu", "--int8",
                 "--vary", "model=zoo:resnet18-qat-residual,zoo:resnet18-qat"]),
    ("profile", ["profile", str(TREX / "resnet.onnx.engine.profile.json"), "--layer-info",
                 str(TREX / "resnet.onnx.engine.graph.json")]),
    ("inspect", ["inspect", "zoo:resnet18"]),
    ("concurrent", ["concurrent", "zoo:resnet18", "--hw", "orin-agx", "--int8"]),
    ("concurrent", ["concurrent", "zoo:googlenet", "--cut", "inception_4a/output", "--stages", "dla0,gpu",
                    "--hw", "xavier-agx", "--fp16"]),
    ("concurrent", ["concurrent", "--hw", "xavier-nx", "--processes", "one", "--engine", "zoo:resnet18,device=gpu",
                    "--engine", "zoo:mobilenet_v2,device=dla1,batch=2"]),
    ("concurrent-advice", ["concurrent", "zoo:resnet18", "zoo:googlenet", "--hw", "orin-agx", "--advise",
                           "--latency-ms", "20", "--batches", "1,4"]),
    ("sweep", ["sweep", "zoo:resnet18", "--hw", "orin-agx", "--no-progress", "--vary", "precision=fp16,int8",
               "--vary", "batch=1,2"]),
    ("sweep", ["sweep", "zoo:resnet18", "--hw", "orin-agx", "--no-progress", "--vary", "hw=orin-agx,a100",
               "--vary", "device=dla"]),         # the A100 has no DLA: a point with an error and no latency
]


@pytest.mark.parametrize("name,argv", CASES)
def test_real_outputs_validate(capsys, name, argv):
    doc = out_of(capsys, *argv)
    S.DOCUMENTS[name].model_validate(doc)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schema" / f"{name}.schema.json").read_text())
    jsonschema.validate(doc, schema)


def test_schema_rejects_drift(capsys):
    doc = out_of(capsys, "estimate", "zoo:resnet18")
    for broken in ({**doc, "surprise": 1}, {**doc, "schema_version": "0"},
                   {**doc, "steps": [{**doc["steps"][0], "kind": "magic"}]},
                   {k: v for k, v in doc.items() if k != "throughput_qps"}):
        with pytest.raises(ValidationError):
            S.EstimateDoc.model_validate(broken)


def test_concurrent_schema_rejects_drift(capsys):
    doc = out_of(capsys, "concurrent", "zoo:resnet18", "--hw", "orin-agx")
    assert doc["schema_version"] == "1" and doc["warnings"] == [] or isinstance(doc["warnings"], list)
    e0 = doc["engines"][0]
    cause = {**e0["causes"][0], "code": "slow"}
    for broken in ({**doc, "extra": 1}, {**doc, "processes": "some"}, {**doc, "engines": []},
                   {**doc, "engines": [{**e0, "causes": [cause]}]}, {**doc, "engines": [{**e0, "unit": "tpu"}]},
                   {k: v for k, v in doc.items() if k != "timeline"}):
        with pytest.raises(ValidationError):
            S.ConcurrentDoc.model_validate(broken)


def test_concurrent_cause_codes_are_the_documented_ones():
    import inspect
    from dlasim.concurrent import model
    used = set(re.findall(r'Cause\("([a-z_]+)"', inspect.getsource(model)))
    used |= set(re.findall(r'"(gpu_share|dla_share)"', inspect.getsource(model)))
    assert used == set(S.CONCURRENT_CODES)
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    section = text[text.index("`concurrent` (schema: "):]
    for code in S.CONCURRENT_CODES:
        assert f'"{code}"' in section[:1500], code


def test_cause_codes_are_documented():
    used = set(texts.CAUSES)
    assert used <= set(S.CAUSE_CODES + S.MEASURED_CODES)
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    section = text[text.index("## Cause vocabulary"):]
    section = section[: section.index("\n## ", 5)] if "\n## " in section[5:] else section
    for code in S.CAUSE_CODES + S.MEASURED_CODES:
        assert re.search(rf"`{code}`", section), code


def test_code_points_at_the_design_notes_in_the_repository():
    for path in (ROOT / "dlasim").rglob("*.py"):
        for line in path.read_text().splitlines():
            if "DESIGN.md" in line:
                assert "docs/DESIGN.md" in line, f"{path.relative_to(ROOT)}: {line.strip()}"


def test_sweep_document_is_versioned_with_its_warnings(capsys):
    """`dlasim sweep --format json` is a document like the others: schema_version first, warnings last."""
    doc = out_of(capsys, "sweep", "zoo:resnet18", "--hw", "orin-agx", "--no-progress", "--vary", "batch=1,2",
                 "--workspace=1024")
    assert list(doc)[0] == "schema_version" and doc["schema_version"] == "1" and list(doc)[-1] == "warnings"
    assert any("--workspace" in w for w in doc["warnings"])        # an ignored trtexec flag, named
    assert [p["batch"] for p in doc["points"]] == [1, 2]
    with pytest.raises(ValidationError):
        S.SweepDoc.model_validate({k: v for k, v in doc.items() if k != "schema_version"})

