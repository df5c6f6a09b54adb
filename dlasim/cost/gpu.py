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
- Kernel classes (`kernel_class`): conv (implicit GEMM, R x S > 1), conv1x1, gemm (FC/MatMul with at least a
  CTA tile of rows), gemv (FC/MatMul with fewer rows than the smallest CTA tile: a weight stream, priced by
  bytes, not tiles), depthwise, reduce (global pools, reductions) and eltwise (every other memory-bound layer:
  pointwise, windowed pools, softmax, normalisation, resize). Each class has a floor and
  an efficiency (conv: `conv_tensor_efficiency`, a tensor-core share, class_tensor_efficiency); a class without
  its own spec values uses the generic ones (hardware.Gpu). The per-class
  values are fitted by validation/fit_specs.py on the H200 kernel grid (validation/h200/gpu_grid_results.json).
- L2 residency (s1.1 L2 sizes; s6.4: "29-39 MB casts show 5.2-5.4 TB/s, i.e. above HBM peak = L2 hits"):
  when a step's activations (inputs and outputs, weights not counted) fit in `l2_usable_fraction` of the L2,
  they move at `l2_bandwidth_bytes_per_s` instead of DRAM bandwidth (the producer has just written them; the
  write-back of dirty lines overlaps later kernels and is not charged). GPUs without these fields: no L2 term.
- s5 modelling note ("per-kernel latency floor (ramp-up/tail of even a tiny kernel)"): where a spec sets
  `tensor_latency_s`, a tensor-core kernel pays it once on top of its tiles x waves (latency + throughput),
  and a GEMV on top of its weight stream; the class floors stay the shortest kernels. Fitted on Xavier's GoogLeNet rows, where one efficiency
  alone under-predicts the small convs and over-predicts the large ones.
- Tile operand limit (`tile_rate_share`, NVIDIA matmul guide s2.3 via s5.3): where a spec sets
  `operand_bytes_per_clk_per_sm`, a tm x tn tile's rate is capped by its operand loads (tm + tn elements per
  tm x tn FMAs per K step); fitted on Xavier's GoogLeNet rows, where small convs on narrow tiles run below the
  rate of the large ones.
- SM-side streaming limit (`sm_stream_scale`): a memory-bound kernel moves at most
  stream_bytes_per_clk_per_sm x SMs x clock (the SMs issue the loads and stores); its rate is
  min(class share x DRAM bandwidth, that rate x class share / memory_efficiency), i.e. the class shares are scaled
  by min(1, SM rate / (memory_efficiency x DRAM bandwidth)). On AGX Xavier streaming kernels reach ~35% of DRAM
  peak, fitted as a per-SM rate (validation/fit_specs.py), which sets the rate of a board with fewer or slower
  SMs on a narrower bus (Xavier NX) from its SM count and clock, not its DRAM. The GEMV weight stream keeps its
  own DRAM share (Xavier's FC row runs faster than the SM streaming rate). GPUs without the field: no SM limit.
- s5.1: per-kernel launch overhead (CUDA graphs, as trtexec runs).
- s5.2 fusions that make two layers one kernel (passes/fuse.py pair_kernels): INT8 depthwise + pointwise
  (DepSep, CC >= 7.2) and INT8 conv + pooling (ConvActPool): the first layer's output stays on chip (no
  DRAM bytes on either side) and the second pays no launch and no floor.
- s2.1 / s2.3: 2:4 sparsity only for constant conv/FC weights, C % 4 == 0, not grouped, FP16/INT8, on
  GPUs with sparse tensor cores; sparse kernels use large tiles; TensorRT times both and keeps the faster.
"""
from __future__ import annotations

import functools
import math

from .. import rules
from ..hardware import Gpu, Platform
from ..ir import Graph
from ..ops import MATMULS, REDUCTIONS
from ..plan import Step, joins_bindings
from .parts import StepCost, Tiling, elems, entry, finish
from .geometry import ConvShape, shape_key, sparse_weight_bytes
from .peaks import gpu_peak_macs_per_s

BYTES = {"fp32": 4, "fp16": 2, "int8": 1}
C_ALIGN = {"fp32": 1, "fp16": 8, "int8": 32}


def padded_channels(c: int, precision: str) -> int:
    """Input channels after tensor-core alignment: FP16 pads to 8, INT8 to 32 (NHWC8 / NC/32HW32); an image
    input of <= 4 channels pads to 4 and runs TensorRT's first-layer kernel (gpu_tensorrt.md s5.3: "C=3 image
    input is padded to 4 ... handled by a special first-layer kernel", tactic ...k64r7s7c4...)."""
    a = 4 if c <= 4 and precision != "fp32" else C_ALIGN[precision]
    return -(-c // a) * a


def gemm_time(m: int, n: int, k: int, gpu: Gpu, precision: str, tiles: list[list[int]],
              rate_scale: float = 1.0, efficiency: float | None = None) -> tuple[float, Tiling | None]:
    """Best time over the CTA tiles for an M x N x K GEMM, with its tile and wave efficiencies (None: no tiles)."""
    sms = gpu.sm_count * gpu.ctas_per_sm
    fma_s = gpu.fma_per_clk_per_sm(precision) * gpu.clock_hz * rate_scale
    eff = gpu.tensor_efficiency if efficiency is None else efficiency
    feed = (gpu.operand_bytes_per_clk_per_sm * gpu.clock_hz / BYTES[precision]
            if gpu.operand_bytes_per_clk_per_sm else 0.0)
    t, best = _best_tile(m, n, k, sms, fma_s * eff, tuple(map(tuple, tiles)), feed)
    if best is None:
        return t, None
    tm, tn, tk, nt, waves, kp = best
    # rate_eff: the kernel's rate over the (2:4: doubled) GPU peak, efficiency x CTAs per SM x the tile's operand
    # share: with tile, wave and K efficiency and the channel alignment it makes up time / ideal
    # (explainer/gap.py splits the time by them)
    return t, Tiling(m * n / (nt * tm * tn), nt / (waves * sms), k / kp,
                     eff * gpu.ctas_per_sm * (tile_rate_share(tm, tn, fma_s * eff, feed) if feed else 1.0))


def tile_rate_share(tm: int, tn: int, rate: float, feed: float) -> float:
    """The share of `rate` (FMA/s per SM) a tm x tn CTA tile sustains when its operands stream into shared
    memory at `feed` elements/s per SM (operand_bytes_per_clk_per_sm x clock / bytes per element; 0: no limit).

    Each K step of the tile loads (tm + tn) x tk operand elements for tm x tn x tk FMAs, so the loads allow
    feed x tm x tn / (tm + tn) FMA/s: larger tiles reuse each loaded element more (NVIDIA Matrix Multiplication
    Background User's Guide s2.3 "Typical tile dimensions in cuBLAS and performance", cited in gpu_tensorrt.md
    s5.3) and a narrow tile, e.g. the 256 x 64 tile of a 64-channel conv, runs below the rate of a 256 x 128 one.
    E.g. feed 1e12 elements/s, rate 6e13: 256 x 128 -> 1e12 x 85.33 / 6e13 = 1.0 (capped), 256 x 64 -> 0.853,
    64 x 32 -> 0.356."""
    if not feed:
        return 1.0
    return min(1.0, feed * tm * tn / (tm + tn) / rate)


# A pure function of its arguments (all values, no spec objects), so a cached result is never stale. The
# convolutions of a network, and of the candidates of an architecture search, share few GEMM shapes.
@functools.lru_cache(maxsize=4096)
def _best_tile(m: int, n: int, k: int, sms: int, rate: float,
               tiles: tuple[tuple[int, int, int], ...], feed: float = 0.0) -> tuple[float, tuple | None]:
    """(time, (tm, tn, tk, tiles, waves, padded K)) of the fastest tile at `rate` FMA/s per SM, its operand
    loads at `feed` elements/s per SM (tile_rate_share), None if none."""
    best_t, best = math.inf, None
    for tm, tn, tk in tiles:
        nt = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(nt / sms)
        kp = math.ceil(k / tk) * tk
        t = waves * tm * tn * kp / (rate * tile_rate_share(tm, tn, rate, feed))
        if t < best_t:
            best_t, best = t, (tm, tn, tk, nt, waves, kp)
    return best_t, best


TENSOR_CLASSES = ("conv", "conv1x1", "gemm")       # tensor-core implicit-GEMM kernels (tiles and waves)


def kernel_class(op: str, cs: ConvShape | None, precision: str, gpu: Gpu) -> str:
    """The kernel class of a GPU layer (module docstring): conv, conv1x1, gemm, gemv, depthwise, reduce, eltwise.

    `cs`: the step's convolution shape (geometry.step_conv_shape), None for a layer that is not a conv/FC/MatMul.
    An FC/MatMul whose GEMM has fewer rows (M) than the smallest CTA tile of its precision would leave most of
    every tile empty; it runs as a GEMV-like weight stream (the H200 grid: F.linear 25088->4096 takes 51-52 us at
    every batch 1-32, 4.0 TB/s of weights, validation/h200/gpu_grid_results.json)."""
    if cs is None:
        return "reduce" if op in REDUCTIONS else "eltwise"
    if cs.depthwise:
        return "depthwise"
    if op in MATMULS:
        rows = cs.n * cs.p * cs.q
        return "gemv" if rows < min(t[0] for t in gpu.cta_tiles(precision)) else "gemm"
    if cs.r == 1 and cs.s == 1 and not cs.transposed:
        return "conv1x1"
    return "conv"


def class_floor(gpu: Gpu, cls: str) -> float:
    """The floor of a kernel class (gpu_tensorrt.md s6.1, s6.2, s6.5): tensor-core classes `kernel_floor_s`,
    memory-bound ones `memory_kernel_floor_s`, unless the class has its own value."""
    own = None      # the class's own floor in the spec (None there: the class's default)
    if cls == "conv1x1":
        own = gpu.conv1x1_floor_s
    elif cls == "gemm":
        own = gpu.gemm_floor_s
    elif cls == "gemv":
        own = gpu.gemv_floor_s
    elif cls == "depthwise":
        own = gpu.depthwise_floor_s
    elif cls == "reduce":
        own = gpu.reduce_floor_s
    if own is not None:
        return own
    return gpu.kernel_floor_s if cls in TENSOR_CLASSES or cls == "gemv" else gpu.memory_kernel_floor_s


def class_efficiency(gpu: Gpu, cls: str) -> float:
    """The share of DRAM bandwidth a class's memory traffic reaches (`memory_efficiency` for streaming
    kernels). Tensor-core classes take their compute share from `tensor_efficiency`; conv1x1 has its own
    bandwidth share (a 1x1 conv moves its bytes slower than a ReLU: the H200 grid)."""
    own = {"conv1x1": gpu.conv1x1_efficiency, "gemv": gpu.gemv_efficiency, "depthwise": gpu.depthwise_efficiency,
           "reduce": gpu.reduce_efficiency}.get(cls)
    return gpu.memory_efficiency if own is None else own


def class_tensor_efficiency(gpu: Gpu, cls: str) -> float:
    """The share of the tensor-core peak a class's tiles sustain: `conv_tensor_efficiency` for implicit-GEMM
    convolutions with an R x S > 1 filter where the spec sets it (the H200 grid: cuDNN 3x3 convs reach 35-55% of
    peak per added MAC where cuBLAS GEMMs reach ~66%, validation/h200/gpu_grid_results.json conv3x3), else
    `tensor_efficiency` (every class on a spec without it)."""
    if cls == "conv" and gpu.conv_tensor_efficiency is not None:
        return gpu.conv_tensor_efficiency
    return gpu.tensor_efficiency


def sm_stream_scale(plat: Platform) -> float:
    """min(1, SM streaming rate / (memory_efficiency x DRAM bandwidth)): the factor by which the SMs, not the
    DRAM, limit memory-bound kernels (module docstring). 1.0 when the spec sets no per-SM streaming rate or
    has no GPU (the DLA-only NVDLA configurations: their copies are not GPU kernels).
    E.g. Xavier NX: 6 SMs x 1109.25 MHz x 4.36 B/clk = 29.0 GB/s against 0.8552 x 59.7 GB/s = 51.1 GB/s -> 0.568."""
    gpu = plat.gpu
    if gpu is None or gpu.stream_bytes_per_clk_per_sm is None:
        return 1.0
    sm_rate = gpu.stream_bytes_per_clk_per_sm * gpu.sm_count * gpu.clock_hz
    return min(1.0, sm_rate / (gpu.memory_efficiency * plat.memory.dram_bandwidth_bytes_per_s))


def memory_time(act_bytes: float, const_bytes: float, eff: float, plat: Platform,
                sm_limited: bool = True) -> tuple[float, float]:
    """(seconds, share of the activation bytes served by the L2) to move a step's bytes at a class's bandwidth
    share `eff` (class_efficiency). Activations fit in the L2 when act_bytes <= l2_usable_fraction x l2_bytes
    (module docstring); then they move at l2_bandwidth_bytes_per_s scaled by eff / memory_efficiency (a class
    reaches the same fraction of the streaming kernels' L2 rate as of their DRAM rate). Weights
    (`const_bytes`) always come from DRAM. `sm_limited`: the share is scaled by sm_stream_scale."""
    gpu = plat.gpu
    if sm_limited:
        eff = eff * sm_stream_scale(plat)
    l2 = plat.memory.l2_bytes
    dram_bw = plat.memory.dram_bandwidth_bytes_per_s * eff
    if gpu.l2_bandwidth_bytes_per_s is None or gpu.l2_usable_fraction is None or not l2 or \
            act_bytes > gpu.l2_usable_fraction * l2:
        return (act_bytes + const_bytes) / dram_bw, 0.0
    return act_bytes / (gpu.l2_bandwidth_bytes_per_s * eff / gpu.memory_efficiency) + const_bytes / dram_bw, 1.0


def sparse_eligible(step: Step, g: Graph, cs: ConvShape, gpu: Gpu, precision: str) -> tuple[bool, str]:
    """TensorRT's 2:4 rules (gpu_tensorrt.md s2.1; hardware_specs/rules/sparsity.toml [gpu]): returns
    (eligible, reason when not)."""
    r = rules.RULES.sparsity
    a = step.anchor
    if not gpu.sparse_tensor_cores:
        return False, f"{gpu.arch} has no sparse tensor cores"
    if precision not in r.gpu_precisions:
        return False, f"sparse math needs {' or '.join(p.upper() for p in sorted(r.gpu_precisions))}"
    if a.op not in r.gpu_ops or not g.tensors[a.inputs[1]].const:
        return False, "no constant weights"
    if cs.groups > r.gpu_groups_max:
        return False, "grouped/depthwise convolution (TensorRT does not consider sparse kernels)"
    if (cs.c // cs.groups) % r.gpu_channel_multiple:
        return False, f"input channels {cs.c} not divisible by {r.gpu_channel_multiple}"
    return True, ""


# conv_cost results by everything they depend on (the platform, the conv shape and the step's facts that
# _conv_cost_of and sparse_eligible read: precision, anchor op, output precision, the element counts of the
# first input, the other inputs and the outputs, constant weights, the on-chip pairing, SIMT, sparsity), so the
# repeated blocks of a network, and the same layers in another candidate, are priced once. Bounded: emptied
# when full. The platform and the sparsity rules (rules.RULES.sparsity) are matched by identity (both frozen)
# and kept by the entry. The StepCost handed out is a new record; its CostParts and Tilings are the cached
# ones, read-only (cost/parts.py), as on the DLA.
_CONV: dict = {}
CONV_CACHE_SIZE = 8192


def clear_caches() -> None:
    _CONV.clear()


def conv_cost(step: Step, g: Graph, gpu: Gpu, plat: Platform, cs: ConvShape, sparsity: str) -> StepCost:
    """A GPU conv/FC/MatMul step's cost (_conv_cost_of), reused for a step with the same facts."""
    a = step.anchor
    ins = step.inputs
    pair = step.input_on_chip
    key = (id(plat), shape_key(cs), step.precision, a.op, step.out_precision, elems(ins[:1]), elems(ins[1:]),
           elems(step.outputs), g.tensors[a.inputs[1]].const if len(a.inputs) > 1 else None,
           step.output_on_chip is not None, pair.partner if pair is not None else None, step.simt, sparsity)
    hit = _CONV.get(key)
    sparse_rules = rules.RULES.sparsity       # what sparse_eligible reads besides the step (immutable)
    if hit is None or hit[1] is not plat or hit[0] is not sparse_rules:
        if len(_CONV) >= CONV_CACHE_SIZE:
            _CONV.clear()
        hit = _CONV[key] = (sparse_rules,) + entry(plat, _conv_cost_of(step, g, gpu, plat, cs, sparsity))
    return StepCost(*hit[2:])


def _conv_cost_of(step: Step, g: Graph, gpu: Gpu, plat: Platform, cs: ConvShape, sparsity: str) -> StepCost:
    """The cost itself: reads only the facts conv_cost keys it by."""
    p = step.precision
    op = step.anchor.op
    cls = kernel_class(op, cs, p, gpu)
    b = BYTES[p]
    bo = BYTES[step.out_precision or p]     # an INT8 conv that no Q follows writes FP16 (passes/qdq.py)
    in_bytes = elems(step.inputs[:1]) * b + elems(step.inputs[1:]) * bo
    out_bytes = elems(step.outputs) * bo
    w_elems = cs.k * (cs.c // cs.groups) * cs.r * cs.s
    w_bytes = w_elems * b
    if op == "Einsum" or op == "MatMul" and not g.tensors[step.anchor.inputs[1]].const:
        w_bytes = 0          # both operands are activations (attention MatMul), read as inputs: in in_bytes
    macs = cs.macs
    peak = gpu_peak_macs_per_s(gpu, p)
    ideal = macs / peak
    floor = class_floor(gpu, cls)
    launch, paired = gpu.launch_overhead_s, {}
    if step.output_on_chip is not None:
        # one kernel with its reader (passes/fuse.py: DepSep, ConvActPool): the output stays on chip
        out_bytes = 0
    if step.input_on_chip is not None:
        # the pointwise half of the DepSep kernel: its input never left the chip, and it is the same kernel
        # as the depthwise half, which paid the launch and the floor
        in_bytes -= elems(step.inputs[:1]) * b
        floor, launch = 0.0, 0.0
        paired["fused_with"] = step.input_on_chip.partner
    if cls == "depthwise":
        # depthwise: CUDA-core kernel, memory bound in practice (gpu_tensorrt.md s5.2): its class bandwidth share
        compute = macs / (gpu.sm_count * gpu.cuda_core_fma_per_clk_per_sm * gpu.clock_hz * (2 if p != "fp32" else 1))
        mem, _ = memory_time(in_bytes + out_bytes, w_bytes, class_efficiency(gpu, cls), plat)
        return finish(compute, mem, launch, macs, in_bytes + out_bytes + w_bytes, floor,
                      ideal_s=ideal, kernel_class=cls, **paired)
    if cls == "gemv":
        # too few rows for a CTA tile: a weight stream at the class's DRAM share; the MACs at the tensor rate
        compute = macs / (peak * gpu.tensor_efficiency)
        mem, _ = memory_time(in_bytes + out_bytes, w_bytes, class_efficiency(gpu, cls), plat, sm_limited=False)
        ramp = gpu.tensor_latency_s or 0.0             # the same kernel ramp/tail as a tensor-core kernel
        return finish(compute, mem + ramp, gpu.launch_overhead_s, macs, in_bytes + out_bytes + w_bytes, floor,
                      ideal_s=ideal, kernel_class=cls, stream_ramp_s=ramp)
    share = class_efficiency(gpu, cls)
    if step.simt:
        # an FP32 image-input conv on a TF32 GPU: CUDA-core implicit GEMM (passes/place.py), no tensor tiles
        compute = macs / (gpu.sm_count * gpu.cuda_core_fma_per_clk_per_sm * gpu.clock_hz * gpu.tensor_efficiency)
        mem, _ = memory_time(in_bytes + out_bytes, w_bytes, share, plat)
        return finish(compute, mem, gpu.launch_overhead_s, macs, in_bytes + out_bytes + w_bytes, floor,
                      ideal_s=ideal, simt=True, kernel_class=cls)
    cg = padded_channels(cs.c // cs.groups, p)
    m = cs.n * (cs.h * cs.w if cs.transposed else cs.p * cs.q)
    n, k = cs.k // cs.groups, cg * cs.r * cs.s
    eff = class_tensor_efficiency(gpu, cls)
    dense, tiling = gemm_time(m, n, k, gpu, p, gpu.cta_tiles(p), efficiency=eff)
    dense *= cs.groups
    if gpu.tensor_latency_s:
        dense += gpu.tensor_latency_s
    compute = dense
    act = in_bytes + out_bytes
    # the 2:4 outcome (CostParts sparse, sparse_reason, dense_s, sparse_s, sparse_tiling)
    state, why, dense_t, sparse_t, stiling = "off", "", 0.0, 0.0, None
    if sparsity != "disable":
        ok, why = sparse_eligible(step, g, cs, gpu, p)
        if not ok:
            state = "ineligible"
        else:
            # sparse tiles run at 2x the dense rate times sparse_efficiency (relative to dense), which
            # grows with the GEMM K over which the sparse prologue/metadata cost is amortised
            s_eff = eff * gpu.sparse_efficiency * k / (k + gpu.sparse_k_half)
            sp, stiling = gemm_time(m, n, k, gpu, p, gpu.sparse_cta_tiles or gpu.cta_tiles(p), 2.0, s_eff)
            sp = sp * cs.groups + (gpu.tensor_latency_s or 0.0)
            sp_bytes = sparse_weight_bytes(w_elems, b)   # half the values + 2 bits of index per kept value
            dense_t = max(dense, memory_time(act, w_bytes, share, plat)[0])
            sparse_t = max(sp, memory_time(act, sp_bytes, share, plat)[0])
            if sparse_t < dense_t:
                compute, w_bytes = sp, sp_bytes
                state = "used"
            else:
                state, why, stiling = "too_small", "the dense kernel is as fast or faster", None
    float_io = 0.0
    if bo != b:      # the bytes the higher-precision output and residual add over INT8 ones
        float_io = (elems(step.outputs) + elems(step.inputs[1:])) * (bo - b) / (
            plat.memory.dram_bandwidth_bytes_per_s * share * sm_stream_scale(plat))
    mem, _ = memory_time(act, w_bytes, share, plat)
    # ramp_s: inside compute_s, the fixed ramp/tail of the kernel
    return finish(compute, mem, launch, macs, act + w_bytes, floor, ideal_s=ideal, tiling=tiling, kernel_class=cls,
                  ramp_s=gpu.tensor_latency_s or 0.0, sparse=state, sparse_reason=why, dense_s=dense_t,
                  sparse_s=sparse_t, sparse_tiling=stiling, float_io_s=float_io, **paired)


def layer_cost(step: Step, g: Graph, plat: Platform, cs: ConvShape | None, sparsity: str = "disable") -> StepCost:
    """`cs`: the step's convolution shape (geometry.step_conv_shape), None for a step that is not a conv."""
    gpu = plat.gpu
    if cs is not None:
        return conv_cost(step, g, gpu, plat, cs, sparsity)
    p = step.precision
    b = BYTES[p]
    anchor = step.anchor
    op = anchor.op if anchor is not None else step.op
    if op == "Concat":
        # TensorRT writes the producers into the concatenated buffer (concat elimination); inputs that
        # live in another buffer (a horizontally fused conv's, or one an earlier Concat holds: passes/fuse.py)
        # are copied in, one copy kernel per tensor (concat_copies)
        copied = step.copied_inputs
        if not copied:
            return finish(0.0, 0.0, 0.0, 0, 0, in_place=True)
        sizes = [2 * b * elems([t]) for t in step.inputs if t.name in copied]
        stream, floored, launches = concat_copies(sizes, plat)
        return finish(0.0, stream, launches, 0, sum(sizes), floored, concat_copy=True, copy_kernels=len(sizes))
    if (op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze") or (op == "Transpose" and transpose_is_view(
            step.inputs[0].shape if step.inputs else (), anchor.attributes.get("perm") if anchor is not None else None))) \
            and not (step.inputs and joins_bindings(g, step.inputs[0].name, [t.name for t in step.outputs])):
        return finish(0.0, 0.0, 0.0, 0, 0, in_place=True)     # a view; between two bindings, a copy kernel below
    cls = kernel_class(op, None, p, gpu)
    nbytes = elems(step.inputs) * b + elems(step.outputs) * BYTES[step.out_precision or p]
    flags = {}
    launch, floor = gpu.launch_overhead_s, class_floor(gpu, cls)
    if step.input_on_chip is not None:
        # the pooling half of a ConvActPool kernel (passes/fuse.py): it reads the conv output on chip and
        # is the same kernel as the conv, which paid the launch and the floor
        nbytes -= elems(step.inputs[:1]) * b
        launch, floor = 0.0, 0.0
        flags = {"fused_with": step.input_on_chip.partner}
    if any("unknown_op" in l.flags for l in step.members):
        # an op dlasim does not know: priced as two passes over its data (conservative) and flagged
        flags = {"unmodelled": True}
        nbytes *= 2
    # reductions, pooling, pointwise, softmax, normalisation, resize, unknown ops: memory-bound kernels of their class
    mem, _ = memory_time(nbytes, 0, class_efficiency(gpu, cls), plat)
    return finish(0.0, mem, launch, 0, nbytes, floor, kernel_class=cls, **flags)


def concat_copies(sizes: list[int], plat: Platform) -> tuple[float, float, float]:
    """(streaming seconds, seconds with each kernel's floor, launch seconds) of the copy kernels that bring a
    Concat's copied inputs into its buffer, `sizes` their read + write bytes.

    TensorRT runs one copy layer per copied tensor (gpu_tensorrt.md s3.2 and s4.2: "<tensor> copy" rows; the
    Xavier GoogLeNet profile, validation/data/haxconn/profiles/googlenet_gpu_mark_at_-1.profile, has one
    "inception_Xy/1x1 copy" row per block, 4.8-12 us each), so each copy is a reformat-like kernel with its own
    floor and launch (cost/copies.py): max(reformat_floor_s, bytes / reformat bandwidth) + launch_overhead_s.
    E.g. H200, two 64 x 16 x 16 FP16 tensors (65536 B read + written each): 2 x max(3.92 us, 65536 B /
    (4.8e12 x 0.1535)) = 7.84 us, plus 2 x 0.84 us of launches."""
    cp = plat.copies
    bw = plat.memory.dram_bandwidth_bytes_per_s * cp.reformat_efficiency * sm_stream_scale(plat)
    stream = sum(n / bw for n in sizes)
    floored = sum(max(cp.reformat_floor_s, n / bw) for n in sizes)
    return stream, floored, len(sizes) * plat.gpu.launch_overhead_s


def transpose_is_view(shape, perm) -> bool:
    """Whether a Transpose moves only size-1 dimensions, so the bytes keep their order and TensorRT's
    shuffle is a reshape (no copy; gpu_tensorrt.md s5.2 "Shuffle + Shuffle", trivial shuffles erased).
    E.g. (197, 1, 768) with perm [1, 0, 2], which torchvision's ViT writes around attention."""
    if not shape:
        return False
    perm = list(perm) if perm else list(range(len(shape)))[::-1]
    kept = [p for p in perm if shape[p] != 1]
    return kept == sorted(kept)
