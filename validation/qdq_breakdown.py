"""Q/DQ ResNet-18 on the A100: the engines' Reformat layers (explicit Q/DQ copies) against the predicted ones.

For each trex engine (validation/data/trex/a100-resnet50/{qat,qat-residual,qat-residual-qgap}) this prints
the per-layer profile's Reformat rows (LayerType "Reformat" in the engine graph JSON: Q/DQ copies and
format changes) and layer rows against the predicted reformat and layer steps of the zoo network with the
same Q/DQ placement (dlasim/zoo/quantized.py). Profile rows are per-layer timings of a profiled run; their
sum exceeds the GPU compute median (per-layer profiling cost), so the totals are shown both ways.
Nothing here is fitted. Run: python validation/qdq_breakdown.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dlasim  # noqa: E402
from dlasim.trtexec import parse_metadata  # noqa: E402

TREX = ROOT / "validation" / "data" / "trex" / "a100-resnet50"
VARIANTS = {"qat": "resnet-qat", "qat-residual": "resnet-qat-residual",
            "qat-residual-qgap": "resnet-qat-residual-qgap"}


def measured(variant: str) -> dict:
    stem = TREX / variant / f"{VARIANTS[variant]}.onnx.engine"
    rows = json.loads(Path(f"{stem}.profile.json").read_text())[1:]
    kinds = {l["Name"]: l["LayerType"] for l in json.loads(Path(f"{stem}.graph.json").read_text())["Layers"]}
    median = parse_metadata(Path(f"{stem}.profile.metadata.json"))["gpu_compute_ms"]["median"]
    reformats = [r for r in rows if kinds.get(r["name"]) == "Reformat"]
    return {"median_ms": median, "profile_ms": sum(r["averageMs"] for r in rows),
            "reformat_ms": sum(r["averageMs"] for r in reformats), "reformats": len(reformats)}


def main() -> None:
    print(f"{'variant':<19} {'measured':>9} {'profile':>8} {'predicted':>9}   {'reformats: measured':>20}  "
          f"{'predicted':>15}")
    for v in VARIANTS:
        m = measured(v)
        e = dlasim.estimate(f"zoo:resnet18-{v}", "a100", device="gpu", precision="int8", batch=32)
        n = sum(r.kind == "reformat" for r in e.steps)
        print(f"{v:<19} {m['median_ms']:9.3f} {m['profile_ms']:8.3f} {e.total_ms:9.3f}   "
              f"{m['reformat_ms']:9.3f} ms ({m['reformats']:2d})  {e.by_kind().get('reformat', 0.0):9.3f} ms ({n:2d})")


if __name__ == "__main__":
    main()
