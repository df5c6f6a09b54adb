#!/usr/bin/env python3
"""A grid of H200 kernel times per kernel class, for dlasim's GPU model (run on the lent device).

Classes (every row records its shape, batch, bytes moved at least once and MACs, so a fit needs no re-derivation):
  conv1x1    cuDNN 1x1 convolution, fp16 channels-last (stride 1 and 2), batch 1-32
  conv3x3    cuDNN 3x3 convolution, fp16 channels-last (stride 1 and 2), batch 1-32
  depthwise  cuDNN 3x3 depthwise convolution, fp16 channels-last, batch 1-32
  fc         fully connected layer (torch.nn.functional.linear, fp16; cuBLAS GEMV at batch 1, GEMM above)
  fc_int8    the same shapes through torch._int_mm (int8 x int8 -> int32; needs M > 16, so batch 32 only)
  eltwise    ReLU and residual Add in fp16 channels-last, from a few KB to well past the L2
  pool       global average pool, fp16 channels-last

Shapes are those of ResNet/MobileNet/VGG-style layers. cudnn.benchmark is on, so cuDNN times its algorithms and
keeps the fastest, as TensorRT does with its tactics (reference/gpu_tensorrt.md s3).
Timing: graph_timer.py (CUDA-graph replay, median of 9 replays of 10 captured calls / 10), as trtexec enqueues
engines (s4.1).
Clocks are not locked. Usage on the device: python validation/h200/gpu_grid.py  (writes $OUT/gpu_grid_results.json)
"""
import json
import os
import time

import torch
import torch.nn.functional as F

import graph_timer                  # validation/h200/graph_timer.py (the script's folder is on sys.path)

OUT = os.environ.get("OUT", "./out")
os.makedirs(OUT, exist_ok=True)
dev = torch.device("cuda")
torch.backends.cudnn.benchmark = True
CL = torch.channels_last


def graph_ms(fn):
    return graph_timer.graph_ms(fn, calls=10, replays=9)


props = torch.cuda.get_device_properties(0)
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "cudnn": torch.backends.cudnn.version(), "sm_count": props.multi_processor_count,
       "l2_bytes": getattr(props, "L2_cache_size", None), "rows": []}
t0 = time.time()


def record(row):
    res["rows"].append(row)


BATCHES = (1, 2, 4, 8, 16, 32)
# (cin, cout, hw, stride): ResNet-50 / MobileNet-like layers
CONV1 = [(64, 256, 56, 1), (256, 64, 56, 1), (256, 512, 56, 2), (512, 128, 28, 1), (128, 512, 28, 1),
         (1024, 256, 14, 1), (256, 1024, 14, 1), (2048, 512, 7, 1), (512, 2048, 7, 1), (32, 192, 112, 1),
         (960, 160, 7, 1)]
CONV3 = [(64, 64, 56, 1), (128, 128, 28, 1), (256, 256, 14, 1), (512, 512, 7, 1), (128, 128, 56, 2),
         (3, 64, 224, 2), (256, 256, 28, 2), (64, 128, 112, 1)]
DW = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (192, 28, 1), (384, 14, 1), (576, 14, 1), (960, 7, 1),
      (512, 14, 1), (1024, 7, 1)]

for kind, table, k in (("conv1x1", CONV1, 1), ("conv3x3", CONV3, 3)):
    for cin, cout, hw, stride in table:
        for n in BATCHES:
            x = torch.randn(n, cin, hw, hw, device=dev, dtype=torch.float16).to(memory_format=CL)
            w = torch.randn(cout, cin, k, k, device=dev, dtype=torch.float16).to(memory_format=CL)
            fn = lambda x=x, w=w: F.conv2d(x, w, stride=stride, padding=k // 2)
            ms = graph_ms(fn)
            ho = (hw + 2 * (k // 2) - k) // stride + 1
            record({"kind": kind, "n": n, "cin": cin, "cout": cout, "h": hw, "w": hw, "k": k,
                    "stride": stride, "ms": ms, "macs": n * cout * ho * ho * cin * k * k,
                    "in_bytes": x.numel() * 2, "out_bytes": n * cout * ho * ho * 2,
                    "weight_bytes": w.numel() * 2})
            del x, w
    print(kind, "done", round(time.time() - t0, 1), "s", flush=True)

for c, hw, stride in DW:
    for n in BATCHES:
        x = torch.randn(n, c, hw, hw, device=dev, dtype=torch.float16).to(memory_format=CL)
        w = torch.randn(c, 1, 3, 3, device=dev, dtype=torch.float16).to(memory_format=CL)
        ms = graph_ms(lambda x=x, w=w: F.conv2d(x, w, stride=stride, padding=1, groups=c))
        ho = (hw + 2 - 3) // stride + 1
        record({"kind": "depthwise", "n": n, "cin": c, "cout": c, "h": hw, "w": hw, "k": 3, "stride": stride,
                "ms": ms, "macs": n * c * ho * ho * 9, "in_bytes": x.numel() * 2,
                "out_bytes": n * c * ho * ho * 2, "weight_bytes": w.numel() * 2})
print("depthwise done", round(time.time() - t0, 1), "s", flush=True)

# (in_features, out_features): classifier heads of ResNet, MobileNet, VGG/AlexNet
FC = [(512, 1000), (1280, 1000), (2048, 1000), (4096, 4096), (9216, 4096), (25088, 4096), (4096, 1000),
      (1024, 1024), (768, 3072)]
for fin, fout in FC:
    w = torch.randn(fout, fin, device=dev, dtype=torch.float16)
    for n in BATCHES:
        x = torch.randn(n, fin, device=dev, dtype=torch.float16)
        ms = graph_ms(lambda x=x, w=w: F.linear(x, w))
        record({"kind": "fc", "n": n, "cin": fin, "cout": fout, "ms": ms, "macs": n * fin * fout,
                "in_bytes": x.numel() * 2, "out_bytes": n * fout * 2, "weight_bytes": w.numel() * 2})
    xi = torch.randint(-8, 8, (32, fin), device=dev, dtype=torch.int8)
    wi = torch.randint(-8, 8, (fin, fout), device=dev, dtype=torch.int8)
    try:
        ms = graph_ms(lambda: torch._int_mm(xi, wi))
        record({"kind": "fc_int8", "n": 32, "cin": fin, "cout": fout, "ms": ms, "macs": 32 * fin * fout,
                "in_bytes": xi.numel(), "out_bytes": 32 * fout * 4, "weight_bytes": wi.numel()})
    except Exception as e:  # an unsupported shape is recorded, not fatal
        record({"kind": "fc_int8", "n": 32, "cin": fin, "cout": fout, "error": repr(e)[:200]})
print("fc done", round(time.time() - t0, 1), "s", flush=True)

# elementwise and pooling: (c, hw) at every batch, from ~6 KB to ~400 MB per tensor
ELT = [(64, 7), (256, 7), (256, 14), (256, 28), (256, 56), (512, 56), (256, 112), (1024, 56)]
for c, hw in ELT:
    for n in BATCHES:
        x = torch.randn(n, c, hw, hw, device=dev, dtype=torch.float16).to(memory_format=CL)
        y = torch.randn_like(x)
        nb = x.numel() * 2
        for op, fn, moved in (("relu", lambda x=x: F.relu(x), 2 * nb), ("add", lambda x=x, y=y: x + y, 3 * nb),
                              ("gap", lambda x=x: F.adaptive_avg_pool2d(x, 1), nb)):
            ms = graph_ms(fn)
            record({"kind": "eltwise" if op != "gap" else "pool", "op": op, "n": n, "cin": c, "h": hw, "w": hw,
                    "ms": ms, "bytes": moved, "tensor_bytes": nb})
        del x, y
print("eltwise done", round(time.time() - t0, 1), "s", flush=True)

res["seconds"] = time.time() - t0
with open(os.path.join(OUT, "gpu_grid_results.json"), "w") as f:
    json.dump(res, f, indent=1)
print("rows", len(res["rows"]), "seconds", round(res["seconds"], 1))
