"""The timer of the H200 measurement scripts (gpu_grid.py, measure_kernels.py): CUDA-graph replay.

`calls` calls of `fn` are captured in one CUDA graph after 3 warm-up calls on a side stream; the graph is
replayed `replays` times between CUDA events, and the result is the median replay time / `calls`, in ms. Graph
replay leaves out the host's per-call launch cost, as trtexec enqueues a TensorRT engine (CUDA graphs are its
default, reference/gpu_tensorrt.md s4.1). Needs torch with CUDA; imported by those scripts only.
"""
import statistics

import torch


def graph_ms(fn, calls: int, replays: int) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / calls)
    return statistics.median(times)
