"""How often the search bound of builder._dla_gpu_layers_timed skips a build that FP16 GPU layers would win.

    python benchmarks/dla_gpu_layers_bound.py [--candidates 60]

A DLA INT8 build is timed with its GPU layers in FP16 only where builder.fp16_may_win says so (an INT8 <->
FP16 copy between GPU layers, or an INT8 GPU conv padding its channels per group; builder.py module notes). This builds both for random MobileNetV3 candidates, the exported
fixtures (tests/fixtures/exports) and the zoo networks with GPU fallback, on the Xavier and Orin DLAs, and
prints how many FP16 wins the bound would have skipped (it should be 0) and how many builds it saves.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

import dlasim
from dlasim import builder
from dlasim.build_options import BuildOptions
from dlasim.nas import mobilenet_v3_space
from dlasim.passes import cached_plan
from dlasim.simulate import estimate_plan

ROOT = Path(__file__).resolve().parent.parent
ZOO = ("yolov4", "yolov4_csp", "yolov4x_mish", "yolov3", "ssd_mobilenet_v1", "retinanet_resnext50_fpn", "unet",
       "lightweight_openpose", "super_resolution")


def graphs(n: int, tmp: Path) -> list:
    sp = mobilenet_v3_space()
    out = [sp.build(r) for r in sp.sample(n, seed=1234)]
    for gz in sorted((ROOT / "tests" / "fixtures" / "exports").glob("*.onnx.gz")):
        if "dynamic" in gz.name:
            continue
        dst = tmp / gz.name[:-3]
        dst.write_bytes(gzip.decompress(gz.read_bytes()))
        out.append(dlasim.load(str(dst)))
    return out + [dlasim.load(f"zoo:{m}") for m in ZOO]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=60)
    a = ap.parse_args(argv)
    o = BuildOptions.of(device="dla", precision="int8")
    builds = wins = missed = saved = 0
    with tempfile.TemporaryDirectory() as tmp:
        for g in graphs(a.candidates, Path(tmp)):
            for hw in ("orin-agx", "xavier-agx"):
                plat = dlasim.hardware(hw)
                int8 = estimate_plan(cached_plan(g, plat, o))
                fp16 = estimate_plan(cached_plan(g, plat, o, gpu_precision="fp16"))
                gate = builder.fp16_may_win(int8)
                builds += 1
                if fp16.total_ms < int8.total_ms:
                    wins += 1
                    if not gate:
                        missed += 1
                        print(f"  skipped a win: {g.name} on {hw}: {int8.total_ms:.4f} -> {fp16.total_ms:.4f} ms")
                elif not gate:
                    saved += 1
    print(f"{builds} DLA INT8 builds: FP16 GPU layers win {wins}, the bound skips {missed} of those and saves "
          f"{saved} alternative builds")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
