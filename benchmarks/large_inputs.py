"""Do very large inputs work within memory? A long layer chain and a near-2 GiB ONNX file.

    python benchmarks/large_inputs.py [--layers 1000000] [--onnx-gib 1.95] [--skip-chain] [--skip-onnx]

The chain alternates 1x1 convolutions and ReLUs (GraphBuilder) and is estimated on the Orin GPU; the ONNX
file holds one FC weight of the given size inside the file (written to a temporary folder, deleted after).
Each part runs in a fresh process so that its peak RSS is its own; prints wall times and peak RSS.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHAIN = """
import resource, sys, time
sys.path.insert(0, {root!r})
import dlasim
from dlasim import GraphBuilder
t0 = time.perf_counter()
b = GraphBuilder("chain")
x = b.input("x", (1, 8, 8, 8))
for i in range({n}):
    x = b.relu(x) if i % 2 else b.conv(x, 8, 1)
g = b.build([x])
t1 = time.perf_counter()
e = dlasim.estimate(g, "orin-agx", device="gpu")
t2 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"chain of {n} layers: build {{t1 - t0:.1f}} s, estimate {{t2 - t1:.1f}} s, {{len(e.steps)}} steps, "
      f"total {{e.total_ms:.3f}} ms, peak RSS {{rss:.0f}} MB")
"""

ONNX = """
import resource, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from onnx import TensorProto, helper, numpy_helper
rows = int({gib} * (1 << 30) / 4 / 1024)
w = numpy_helper.from_array(np.zeros((rows, 1024), np.float32), "w")
g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)], "big",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, rows])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
with open({path!r}, "wb") as f:
    f.write(m.SerializeToString())
"""

ESTIMATE = """
import resource, sys, time
sys.path.insert(0, {root!r})
import dlasim
t0 = time.perf_counter()
e = dlasim.estimate({path!r}, "h200", device="gpu")
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"ONNX of {{{size} / (1 << 30):.2f}} GiB: estimate {{time.perf_counter() - t0:.1f}} s, "
      f"total {{e.total_ms:.4f}} ms, peak RSS {{rss:.0f}} MB")
"""


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=1_000_000)
    ap.add_argument("--onnx-gib", type=float, default=1.95)
    ap.add_argument("--skip-chain", action="store_true")
    ap.add_argument("--skip-onnx", action="store_true")
    a = ap.parse_args()
    if not a.skip_chain:
        _run(CHAIN.format(root=str(ROOT), n=a.layers))
    if not a.skip_onnx:
        with tempfile.TemporaryDirectory(prefix="dlasim-large-") as d:
            path = os.path.join(d, "big.onnx")
            _run(ONNX.format(root=str(ROOT), gib=a.onnx_gib, path=path))
            _run(ESTIMATE.format(root=str(ROOT), path=path, size=os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
