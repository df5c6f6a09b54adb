"""Kernel timing for the H200 measurement scripts in this folder (run on the device, next to them).

CUDA-graph replay: `reps` calls captured in one graph after three warm-up calls on a side stream, the graph
replayed `replays` times, each replay's event time over `reps`; the median (ms per call). trtexec enqueues a
TensorRT engine as a CUDA graph by default (reference/gpu_tensorrt.md s4.1). Clocks are not locked.
"""
import statistics

import torch


def graph_ms(fn, reps: int, replays: int) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / reps)
    return statistics.median(times)
