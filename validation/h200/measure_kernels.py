#!/usr/bin/env python3
"""H200 kernel measurements that calibrate dlasim's GPU model beyond validation/data/h200 (run on the device).

Sections:
  P  GEMM throughput per precision (TF32 for fp32, fp16, int8 via torch._int_mm) on conv-like and square shapes
  M  memory-bound kernels in fp16 channels-last: ReLU, residual Add, 3x3/s2 max pool, global average pool
  W  depthwise 3x3 convolution (cuDNN, fp16 channels-last)

Timing: graph_timer.py (CUDA-graph replay, median of 15 replays of 20 captured calls / 20), as trtexec
enqueues a TensorRT engine (CUDA graphs are its default, reference/gpu_tensorrt.md s4.1). Clocks are not locked.
Usage on the device: python validation/h200/measure_kernels.py  (writes $OUT/h200_kernels.json)
"""
import json
import os

import torch
import torch.nn.functional as F

import graph_timer                  # validation/h200/graph_timer.py (the script's folder is on sys.path)

OUT = os.environ.get("OUT", "./out")
os.makedirs(OUT, exist_ok=True)
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def graph_ms(fn):
    return graph_timer.graph_ms(fn, calls=20, replays=15)


res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
       "gemm": [], "memory": [], "depthwise": []}

GEMMS = [(4096, 4096, 4096), (8192, 2048, 4096), (3136, 256, 2304), (50176, 256, 2304), (12544, 512, 4608),
         (50176, 1024, 9216), (196, 1024, 9216)]
for m, n, k in GEMMS:
    row = {"m": m, "n": n, "k": k}
    for prec in ("fp32", "fp16", "int8"):
        try:
            if prec == "int8":
                a = torch.randint(-8, 8, (m, k), device=dev, dtype=torch.int8)
                b = torch.randint(-8, 8, (k, n), device=dev, dtype=torch.int8)
                fn = lambda: torch._int_mm(a, b)
            else:
                dt = torch.float32 if prec == "fp32" else torch.float16
                a = torch.randn(m, k, device=dev, dtype=dt)
                b = torch.randn(k, n, device=dev, dtype=dt)
                fn = lambda: a @ b
            ms = graph_ms(fn)
            row[f"{prec}_ms"] = ms
            row[f"{prec}_tops"] = 2 * m * n * k / ms / 1e9
        except Exception as e:  # an unsupported shape or dtype is recorded, not fatal
            row[f"{prec}_error"] = repr(e)[:200]
    res["gemm"].append(row)
    print("gemm", row, flush=True)

SHAPES = [(1, 64, 112, 112), (1, 256, 56, 56), (8, 256, 56, 56), (32, 256, 56, 56), (32, 512, 28, 28),
          (1, 1024, 14, 14), (64, 128, 112, 112)]
for shape in SHAPES:
    x = torch.randn(*shape, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    y = torch.randn_like(x)
    nbytes = x.numel() * 2
    kernels = {
        "relu": (lambda: F.relu(x), 2 * nbytes),
        "add": (lambda: x + y, 3 * nbytes),
        "maxpool3s2": (lambda: F.max_pool2d(x, 3, 2, 1), nbytes + nbytes // 4),
        "global_avgpool": (lambda: F.adaptive_avg_pool2d(x, 1), nbytes),
    }
    for name, (fn, moved) in kernels.items():
        ms = graph_ms(fn)
        res["memory"].append({"op": name, "shape": list(shape), "ms": ms, "bytes": moved,
                              "gb_per_s": moved / ms / 1e6})
    w = torch.randn(shape[1], 1, 3, 3, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    ms = graph_ms(lambda: F.conv2d(x, w, padding=1, groups=shape[1]))
    res["depthwise"].append({"shape": list(shape), "ms": ms, "bytes": 2 * nbytes,
                             "gb_per_s": 2 * nbytes / ms / 1e6})
    print("shape", shape, "done", flush=True)

with open(os.path.join(OUT, "h200_kernels.json"), "w") as f:
    json.dump(res, f, indent=1)
print(json.dumps(res)[:3000])
