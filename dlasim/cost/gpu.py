"""GPU cost model: implicit-GEMM convolution on tensor cores, memory-bound kernels, 2:4 sparsity.

Sources (reference/gpu_tensorrt.md):
- s5.3: conv as implicit GEMM (M = N*P*Q, N = K, K = C*R*S); CTA tiles from TensorRT's tactic names;
  tiles = ceil(M/Mt)*ceil(N/Nt), waves = ceil(tiles / (SMs * CTAs per SM)): tile and wave quantization.
- s1.1 notes: peak = SMs x FMA/clk/SM x clock per precision; FP16 channels pad to 8, INT8 to 32 (s5.3).
- s6.5 / s7 fact 11: time = max(floor, FLOPs / effective peak, bytes / bandwidth): per-kernel floor.
  Two floors, by kernel class (`kernel_floor`): tensor-core conv/GEMM kernels have `kernel_floor_s`
  (s6.2 / s6.5: a sub-wave GEMM or a batch-1 cuDNN conv stays at ~6-13 us on H200); memory-bound kernels
  (pooling, pointwise, softmax, normalisation, resize, depthwise, unknown ops) have `memory_kernel_floor_s`
  (s6.1: a 1 MiB ReLU costs 1.56 us in a CUDA graph on H200; the Xavier GoogLeNet profile,
  validation/data/haxconn/profiles/googlenet_gpu_mark_at_-1.profile, has most pools and prob at 7-12 us,
  small pool_proj / 5x5 convs at 15-38 us). Reformat copies keep `copies.reformat_floor_s` (cost/copies.py).
- s5.1: per-kernel launch overhead (CUDA graphs, as trtexec runs).
- s2.1 / s2.3: 2:4 sparsity only for constant conv/FC weights, C % 4 == 0, not grouped, FP16/INT8, on
  GPUs with sparse tensor cores; sparse kernels use large tiles; TensorRT times both and keeps the faster.
"""
from __future__ import annotations

import functools
import math

from ..hardware import Gpu, Platform
from ..ir import Graph
from ..plan import Step
from . import StepCost, elems, finish
from .geometry import ConvShape, step_conv_shape

BYTES = {"fp32": 4, "fp16": 2, "int8": 1}
C_ALIGN = {"fp32": 1, "fp16": 8, "int8": 32}


def padded_channels(c: int, precision: str) -> int:
    """Input channels after tensor-core alignment: FP16 pads to 8, INT8 to 32 (NHWC8 / NC/32HW32); an image
    input of <= 4 channels pads to 4 and runs TensorRT's first-layer kernel (gpu_tensorrt.md s5.3: "C=3 image
    input is padded to 4 ... handled by a special first-layer kernel", tactic ...k64r7s7c4...)."""
    a = 4 if c <= 4 and precision != "fp32" else C_ALIGN[precision]
    return -(-c // a) * a


def gemm_time(m: int, n: int, k: int, gpu: Gpu, precision: str, tiles: list[list[int]],
              rate_scale: float = 1.0, efficiency: float | None = None) -> tuple[float, dict]:
    """Best time over the CTA tiles for an M x N x K GEMM, with tile and wave efficiencies."""
    sms = gpu.sm_count * gpu.ctas_per_sm
    fma_s = gpu.fma_per_clk_per_sm(precision) * gpu.clock_hz * rate_scale
    eff = gpu.tensor_efficiency if efficiency is None else efficiency
    t, best = _best_tile(m, n, k, sms, fma_s * eff, tuple(map(tuple, tiles)))
    if best is None:
        return t, {}
    tm, tn, tk, nt, waves, kp = best
    # rate_eff: the kernel's rate over the (2:4: doubled) GPU peak, efficiency x CTAs per SM: with tile, wave and K
    # efficiency and the channel alignment it makes up time / ideal (causes.py splits the time by them)
    return t, {"tile": [tm, tn, tk], "tile_eff": m * n / (nt * tm * tn), "wave_eff": nt / (waves * sms),
               "k_eff": k / kp, "rate_eff": eff * gpu.ctas_per_sm}


# A pure function of its arguments (all values, no spec objects), so a cached result is never stale. The
# convolutions of a network, and of the candidates of an architecture search, share few GEMM shapes.
@functools.lru_cache(maxsize=4096)
def _best_tile(m: int, n: int, k: int, sms: int, rate: float,
               tiles: tuple[tuple[int, int, int], ...]) -> tuple[float, tuple | None]:
    """(time, (tm, tn, tk, tiles, waves, padded K)) of the fastest tile at `rate` FMA/s, None if none."""
    best_t, best = math.inf, None
    for tm, tn, tk in tiles:
        nt = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(nt / sms)
        kp = math.ceil(k / tk) * tk
        t = waves * tm * tn * kp / rate
        if t < best_t:
            best_t, best = t, (tm, tn, tk, nt, waves, kp)
    return best_t, best


def kernel_floor(gpu: Gpu, cs: ConvShape | None) -> float:
    """The floor of a GPU layer's kernel class (gpu_tensorrt.md s6.1, s6.2, s6.5; the module docstring).

    `cs` is the step's convolution shape (geometry.step_conv_shape), None for a layer that is not a
    conv/FC/MatMul. Conv, deconv, FC and MatMul run tensor-core implicit-GEMM kernels: `kernel_floor_s`.
    Depthwise convs (CUDA-core, memory bound, s5.2) and every other layer: `memory_kernel_floor_s`."""
    if cs is None or cs.depthwise:
        return gpu.memory_kernel_floor_s
    return gpu.kernel_floor_s


def step_kernel_floor(step: Step, g: Graph, gpu: Gpu) -> float:
    """kernel_floor of a GPU layer step (what dlasim.measured compares a measured row against)."""
    return kernel_floor(gpu, step_conv_shape(step, g))


def sparse_eligible(step: Step, g: Graph, cs: ConvShape, gpu: Gpu, precision: str) -> tuple[bool, str]:
    """TensorRT's 2:4 rules (gpu_tensorrt.md s2.1): returns (eligible, reason when not)."""
    a = step.anchor
    if not gpu.sparse_tensor_cores:
        return False, f"{gpu.arch} has no sparse tensor cores"
    if precision not in ("fp16", "int8"):
        return False, "sparse math needs FP16 or INT8"
    if a.op not in ("Conv", "Gemm", "MatMul") or not g.tensors[a.inputs[1]].const:
        return False, "no constant weights"
    if cs.groups > 1:
        return False, "grouped/depthwise convolution (TensorRT does not consider sparse kernels)"
    if (cs.c // cs.groups) % 4:
        return False, f"input channels {cs.c} not divisible by 4"
    return True, ""


def conv_cost(step: Step, g: Graph, gpu: Gpu, plat: Platform, cs: ConvShape, sparsity: str) -> StepCost:
    p = step.precision
    bw = plat.memory.dram_bandwidth_bytes_per_s * gpu.memory_efficiency
    b = BYTES[p]
    bo = BYTES[step.out_precision or p]     # an INT8 conv that no Q follows writes FP16 (passes/qdq.py)
    in_bytes = elems(step.inputs[:1]) * b + elems(step.inputs[1:]) * bo
    out_bytes = elems(step.outputs) * bo
    w_elems = cs.k * (cs.c // cs.groups) * cs.r * cs.s
    macs = cs.macs
    peak = gpu.sm_count * gpu.fma_per_clk_per_sm(p) * gpu.clock_hz
    ideal = macs / peak
    if cs.depthwise:
        # depthwise: CUDA-core kernel, memory bound in practice (gpu_tensorrt.md s5.2): the memory floor
        compute = macs / (gpu.sm_count * gpu.cuda_core_fma_per_clk_per_sm * gpu.clock_hz * (2 if p != "fp32" else 1))
        nbytes = in_bytes + out_bytes + w_elems * b
        return finish(compute, nbytes / bw, gpu.launch_overhead_s, macs, nbytes, kernel_floor(gpu, cs),
                      ideal_s=ideal)
    if step.attrs.get("simt"):
        # an FP32 image-input conv on a TF32 GPU: CUDA-core implicit GEMM (passes/place.py), no tensor tiles
        compute = macs / (gpu.sm_count * gpu.cuda_core_fma_per_clk_per_sm * gpu.clock_hz * gpu.tensor_efficiency)
        nbytes = in_bytes + out_bytes + w_elems * b
        return finish(compute, nbytes / bw, gpu.launch_overhead_s, macs, nbytes, kernel_floor(gpu, cs),
                      ideal_s=ideal, kernel="simt")
    cg = padded_channels(cs.c // cs.groups, p)
    m = cs.n * (cs.h * cs.w if cs.transposed else cs.p * cs.q)
    n, k = cs.k // cs.groups, cg * cs.r * cs.s
    dense, info = gemm_time(m, n, k, gpu, p, gpu.cta_tiles(p))
    dense *= cs.groups
    compute, w_bytes = dense, w_elems * b
    parts = {"ideal_s": ideal, **info, "sparse": "off"}
    if sparsity != "disable":
        ok, why = sparse_eligible(step, g, cs, gpu, p)
        if not ok:
            parts.update(sparse="ineligible", sparse_reason=why)
        else:
            # sparse tiles run at 2x the dense rate times sparse_efficiency (relative to dense), which
            # grows with the GEMM K over which the sparse prologue/metadata cost is amortised
            eff = gpu.tensor_efficiency * gpu.sparse_efficiency * k / (k + gpu.sparse_k_half)
            sp, sinfo = gemm_time(m, n, k, gpu, p, gpu.sparse_cta_tiles or gpu.cta_tiles(p), 2.0, eff)
            sp *= cs.groups
            sp_bytes = w_bytes // 2 + w_bytes // 16      # half the values + 2-bit metadata per kept value
            dense_t = max(dense, (in_bytes + out_bytes + w_bytes) / bw)
            sparse_t = max(sp, (in_bytes + out_bytes + sp_bytes) / bw)
            parts.update(dense_s=dense_t, sparse_s=sparse_t, sparse_tile=sinfo.get("tile"))
            if sparse_t < dense_t:
                compute, w_bytes = sp, sp_bytes
                parts.update(sparse="used", **{f"sparse_{k_}": v for k_, v in sinfo.items()})
            else:
                parts.update(sparse="too_small", sparse_reason="the dense kernel is as fast or faster")
    residual = elems(step.inputs[1:]) * bo
    if bo != b:      # the bytes the higher-precision output and residual add over INT8 ones
        parts["float_io_s"] = (elems(step.outputs) + elems(step.inputs[1:])) * (bo - b) / bw
    nbytes = in_bytes + out_bytes + w_bytes
    return finish(compute, nbytes / bw, gpu.launch_overhead_s, macs, nbytes, kernel_floor(gpu, cs),
                  residual_bytes=residual, **parts)


def layer_cost(step: Step, g: Graph, plat: Platform, sparsity: str = "disable") -> StepCost:
    gpu = plat.gpu
    cs = step_conv_shape(step, g)
    if cs is not None:
        return conv_cost(step, g, gpu, plat, cs, sparsity)
    p = step.precision
    b = BYTES[p]
    bw = plat.memory.dram_bandwidth_bytes_per_s * gpu.memory_efficiency
    anchor = step.anchor
    op = anchor.op if anchor is not None else step.op
    if op == "Concat":
        # TensorRT writes the producers into the concatenated buffer (concat elimination); inputs that
        # live in a horizontally fused conv's buffer (passes/fuse.py) are copied in, as a reformat kernel
        # copies: read + write over the reformat bandwidth, with its floor (cost/copies.py)
        copied = step.attrs.get("copied_inputs")
        if not copied:
            return finish(0.0, 0.0, 0.0, 0, 0, in_place=True)
        cp = plat.copies
        nbytes = 2 * b * elems([t for t in step.inputs if t.name in copied])
        return finish(0.0, nbytes / (plat.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency),
                      gpu.launch_overhead_s, 0, nbytes, cp.reformat_floor_s, concat_copy=True)
    if op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze") or (op == "Transpose" and transpose_is_view(
            step.inputs[0].shape if step.inputs else (), anchor.attrs.get("perm") if anchor is not None else None)):
        return finish(0.0, 0.0, 0.0, 0, 0, in_place=True)
    nbytes = elems(step.inputs) * b + elems(step.outputs) * BYTES[step.out_precision or p]
    flags = {}
    if any("unknown_op" in l.flags for l in step.members):
        # an op dlasim does not know: priced as two passes over its data (conservative) and flagged
        flags = {"unmodelled": True}
        nbytes *= 2
    # pooling, pointwise, softmax, normalisation, resize, unknown ops: memory-bound kernels with their floor
    return finish(0.0, nbytes / bw, gpu.launch_overhead_s, 0, nbytes, kernel_floor(gpu, None), **flags)


def transpose_is_view(shape, perm) -> bool:
    """Whether a Transpose moves only size-1 dimensions, so the bytes keep their order and TensorRT's
    shuffle is a reshape (no copy; gpu_tensorrt.md s5.2 "Shuffle + Shuffle", trivial shuffles erased).
    E.g. (197, 1, 768) with perm [1, 0, 2], which torchvision's ViT writes around attention."""
    if not shape:
        return False
    perm = list(perm) if perm else list(range(len(shape)))[::-1]
    kept = [p for p in perm if shape[p] != 1]
    return kept == sorted(kept)
