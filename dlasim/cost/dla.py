"""DLA cost model: convolution core (MAC atoms, stripes, CBUF), SDP / PDP / CDP, DMA traffic.

Sources (reference/dla.md):
- s1.2: one atomic op per cycle = 1x1x`atomic_c` input channels against `atomic_k` kernels (32 INT8 /
  16 FP16 on v1), so cycles = ceil(C/atomic_c) * ceil(K/atomic_k) * N*P*Q * R*S; a stripe of output pixels
  shares one weight load and a weight load takes 16 cycles, so fewer than 16 pixels per stripe (FC at
  batch 1) caps efficiency at 6.25%; image-input mode keeps the first layer near 50%; a depthwise conv runs
  on the MAC array (one channel per group: mostly padding) unless the DLA has a depthwise processor (Orin,
  s6.1), which runs it at `depthwise_macs_per_cycle`.
- s1.3 / s0.1 fact 9: SDP 16 elem/cycle (bias, BN, ReLU, eltwise), 4 elem/cycle through the LUT (sigmoid,
  tanh); CACC -> SDP 16 elem/cycle; PDP 8 and CDP 8 elem/cycle. A standalone PDP / CDP layer reads its
  input through its own read DMA, 8 B/cycle peak ("8 INT8 or 4 FP16 elements", s1.3), so in FP16 it
  streams at most 4 elem/cycle (read_limited_rate); a pool fused behind a conv takes the SDP output on the
  fly and reads nothing (s1.3 fused operation).
- s1.5: DRAM traffic per the NVDLA performance spreadsheet, per image: input + weights + output when both
  fit the CBUF; otherwise whichever of "re-read the input per weight chunk" and "re-read the weights per
  input chunk" moves fewer bytes. time = max(MAC cycles, DRAM cycles), plus weight fetches the MAC array
  waits for when the CBUF cannot double-buffer a kernel group (conv_traffic).
- s1.4: feature maps in memory pad C to a 32-byte atom (kCHW16 FP16 / kCHW32 INT8).
- s1.2 "FC / batch" [SPEC]: only direct convolution (CDMA_DC) supports multi-batch, at most `multi_batch_max`
  (32, s1.1 nv_full maxBatch) images per hardware operation; image-input mode is not direct convolution, so
  it runs one image per operation. A conv step pays its per-layer overhead once per hardware operation
  (hw_ops).
- s3.6 / s0.1 fact 15: Orin (v2) 2:4 structured sparsity, INT8 convolutions with C > 64 only; s0.1 fact 3
  and s2: 105 sparse TOPS = 2x the dense rate. Modelled as an atomic op covering twice the input channels
  (ceil(C / 2 atomic_c) channel atoms, so C <= 64 gains nothing, as the C > 64 rule says [INF]) and
  2:4-compressed weights (geometry.sparse_weight_bytes) in DRAM and the CBUF; the time is still
  max(MAC, SDP, DRAM), so memory- or output-bound layers gain little ("speedup scales with how math-bound
  the layer is", s3.6).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from .. import rules
from ..hardware import Dla, Platform
from ..ir import Graph
from ..ops import LUT_OPS, SHUFFLES
from ..plan import Step
from .parts import StepCost, elems, entry, finish
from .geometry import ConvShape, shape_key, sparse_weight_bytes



def dram_bandwidth(plat: Platform) -> float:
    """Bytes/s the DLA's DMA moves to and from DRAM: `dram_bytes_per_cycle` at the DLA clock, at most the
    platform's DRAM peak (the EMC clock's, under a power mode).

    dla.md s1.5: the NVDLA primer pairs each configuration with a DRAM bandwidth at 1 GHz (2048 MACs / 512 KB
    CBUF with 20 GB/s, i.e. 20 bytes per DLA cycle). dlasim reads that as a DLA-side rate per DLA cycle [I]:
    one DLA reaches a fraction of the DRAM peak (seed 000 on AGX Xavier: about 29 GB/s of 136.5), so its DMA,
    not the DRAM, sets it, and the same core on a board with less DRAM (Xavier NX) keeps it at its own clock.
    None: the DRAM peak (the spreadsheet's optimal case)."""
    dla = plat.dla
    peak = plat.memory.dram_bandwidth_bytes_per_s
    if dla.dram_bytes_per_cycle is None:
        return peak
    return min(dla.dram_bytes_per_cycle * dla.clock_hz, peak)


def _bpe(precision: str) -> int:
    return 1 if precision == "int8" else 2


def _atom_bytes(numel_per_c: int, c: int, bpe: int) -> int:
    """Bytes of a feature map with C padded to the 32-byte memory atom (dla.md s1.4)."""
    return numel_per_c * math.ceil(c * bpe / 32) * 32


def _fmap_bytes(shape, bpe: int) -> int:
    if len(shape) < 2:
        return math.prod(shape) * bpe
    return _atom_bytes(math.prod(shape) // shape[1], shape[1], bpe)


def _fmaps_bytes(tensors, bpe: int) -> int:
    """_fmap_bytes summed over tensors (a loop: cheaper than sum() over a generator for one or two)."""
    total = 0
    for t in tensors:
        total += _fmap_bytes(t.shape, bpe)
    return total


def read_limited_rate(unit_rate: float, read_bytes_per_cycle: float | None, bpe: int) -> float:
    """Elements per cycle of a standalone PDP / CDP layer: its unit rate, capped by what its read DMA
    delivers (dla.md s1.3 / s0.1 fact 9: PDP and CDP read DMA peak 8 B/cycle, "8 INT8 or 4 FP16 elements")."""
    if read_bytes_per_cycle is None:
        return unit_rate
    return min(unit_rate, read_bytes_per_cycle / bpe)


def hwc4_channels(c: int) -> int:
    """Channels per pixel of a kDLA_HWC4 image input: C in {1, 3, 4} -> C' in {1, 4, 4} (dla.md s3.4)."""
    return 1 if c == 1 else 4


def on_depthwise_processor(cs: ConvShape, dla: Dla) -> bool:
    return bool(dla.depthwise_macs_per_cycle) and cs.depthwise and not cs.transposed


def sparse_eligible(step: Step, cs: ConvShape, dla: Dla) -> tuple[bool, str]:
    """(True, "") if the DLA runs this conv step with 2:4 sparse weights, else (False, why not).

    dla.md s3.6 [SPEC]: Orin DLA only ("Structured sparsity is a new feature of ... the DLAs in Orin"), INT8
    convolutions only, 2:4 "along the C dimension" with C > 64 (the kernel's input channels, C/groups); the
    precisions and ops are hardware_specs/rules/sparsity.toml [dla], the channel minimum the spec's."""
    r = rules.RULES.sparsity
    if not dla.sparse_int8_conv:
        return False, f"DLA {dla.version} has no 2:4 structured sparsity (Orin's DLA v2 has)"
    if step.precision not in r.dla_precisions:
        only = " or ".join(p.upper() for p in sorted(r.dla_precisions))
        return False, (f"runs {step.precision.upper()}{' (' + step.reason + ')' if step.reason else ''}; "
                       f"DLA 2:4 sparsity is {only} only")
    op = step.anchor.op
    if op not in r.dla_ops:
        return False, f"{op}: DLA 2:4 sparsity applies to convolutions only"
    if on_depthwise_processor(cs, dla):
        return False, "depthwise convolution (1 input channel per kernel, on the depthwise processor)"
    cg = cs.c // cs.groups
    if cg <= dla.sparse_min_channels:
        return False, f"{cg} input channels per kernel, the DLA needs C > {dla.sparse_min_channels}"
    return True, ""


def image_mode(cs: ConvShape, image_input: bool) -> bool:
    """Image-input mode: the network's first conv reading its 1-4 channel input as kDLA_HWC4 (s1.2
    image-input mode; Step.image_input, set by passes/reformat.py)."""
    return image_input and cs.c <= 4 and not cs.transposed


def hw_ops(cs: ConvShape, dla: Dla, image_input: bool) -> int:
    """Hardware operations a conv step of batch N needs (s1.2 [SPEC]: only direct convolution runs several
    images per operation, up to multi_batch_max; image-input mode one image per operation)."""
    if dla.multi_batch_max is None:
        return 1
    if image_mode(cs, image_input):
        return cs.n
    return math.ceil(cs.n / dla.multi_batch_max)


def conv_cycles(cs: ConvShape, dla: Dla, precision: str, image_input: bool,
                sparse: bool = False) -> tuple[float, float]:
    """(MAC-array cycles, ideal dense cycles) of a convolution on the DLA (dla.md s1.2). With 2:4 `sparse`
    weights an atomic op covers 2 x atomic_c input channels (s3.6, the module docstring)."""
    ak = dla.atomic_k(precision)
    ideal = cs.macs / (dla.mac_atomic_c * ak)
    ac = dla.mac_atomic_c * (2 if sparse else 1)
    if image_mode(cs, image_input):
        return ideal / dla.image_mode_utilization, ideal
    if on_depthwise_processor(cs, dla):
        # Orin's depthwise processor (s6.1 block list), at its own rate, no MAC atoms
        return cs.macs / dla.depthwise_macs_per_cycle, ideal
    pix = cs.n * (cs.h * cs.w if cs.transposed else cs.p * cs.q)
    stripe_max = 2 * dla.stripe_atomic_ops
    per_block = max(pix, math.ceil(pix / stripe_max) * dla.weight_reload_cycles)
    g = cs.groups
    cg, kg = cs.c // g, cs.k // g
    blocks = min(g * math.ceil(cg / ac) * math.ceil(kg / ak), math.ceil(cs.c / ac) * math.ceil(cs.k / ak))
    return blocks * cs.r * cs.s * per_block, ideal


def conv_traffic(cs: ConvShape, dla: Dla, bpe: int, out_bytes: int, extra_in_bytes: int,
                 sparse: bool = False, image: bool = False) -> tuple[int, int, int]:
    """(DRAM bytes, of which CBUF refetch, weight bytes fetched while the MAC array waits) of one conv layer.

    The NVDLA spreadsheet's per-frame traffic (dla.md s1.5), applied to each of the N images: input +
    weights + output when they fit the CBUF, else the cheaper of "re-read the input per weight chunk" and
    "re-read the weights per input chunk". Weights that fit next to the input rows stay in the CBUF for the
    whole batch. When weights are re-read per image, the banks left beside the input (whole 32 KB banks, the
    unit of the s3.3 CBUF check) must hold two kernel groups (s1.4: 16 FP16 / 32 INT8 kernels) for the next
    group to be fetched while the current one computes; with room for only one, every weight fetch stalls
    the MAC array (s1.2: weights stay in the MAC cells for a stripe, the data and weight buffers are
    circular). Those bytes are returned as the third value. `sparse`: the weights are 2:4-compressed.
    `image`: an image-input-mode conv reads its input in the image format (kDLA_HWC4, hwc4_channels per
    pixel), not channel-padded to a 32-byte atom.
    """
    px = hwc4_channels(cs.c) * bpe                   # bytes per pixel of an image input
    x_img = cs.h * cs.w * px if image else _atom_bytes(cs.h * cs.w, cs.c, bpe)
    x_in = cs.n * x_img
    images = cs.n
    if cs.h * cs.w == 1 and cs.p * cs.q == 1:
        # FC: multi-batch mode interleaves the batch inside each stripe (s1.2), one weight pass for all
        x_img, images = x_in, 1
    per_kernel = (cs.c // cs.groups) * cs.r * cs.s
    kernel_bytes = sparse_weight_bytes(per_kernel, bpe) if sparse else per_kernel * bpe
    wt = cs.k * kernel_bytes
    base = x_in + wt + out_bytes + extra_in_bytes
    cbuf = dla.cbuf_bytes
    rows = min(cs.r, cs.h) * cs.w
    x_min = rows * px if image else _atom_bytes(rows, cs.c, bpe)
    if x_img + wt <= cbuf or wt <= cbuf - x_min:
        return base, 0, 0
    group_bytes = dla.atomic_k("int8" if bpe == 1 else "fp16") * kernel_bytes
    wt_min = min(group_bytes, cbuf // 2)
    x_chunks = math.ceil(x_img / max(cbuf - wt_min, 1))
    stream_weights = math.ceil(wt / max(cbuf - x_min, 1)) * x_img + wt     # input re-read per weight chunk
    stream_input = x_img + x_chunks * wt                                    # weights re-read per input chunk
    best = images * min(stream_weights, stream_input) + out_bytes + extra_in_bytes
    stalled = 0
    if stream_input < stream_weights:
        bank = cbuf // dla.cbuf_banks
        group_banks = math.ceil(wt_min / bank)
        data_banks = min(math.ceil(x_img / bank), dla.cbuf_banks - group_banks)
        if dla.cbuf_banks - data_banks < 2 * group_banks:
            stalled = images * x_chunks * wt
    return best, best - base, stalled


def layer_cost(step: Step, g: Graph, plat: Platform, cs: ConvShape | None, sparsity: str = "disable") -> StepCost:
    """`cs`: the step's convolution shape (geometry.step_conv_shape), None for a step that is not a conv."""
    dla = plat.dla
    if cs is not None:
        dense = _conv_cost(step, plat, cs, False)
        if sparsity == "disable":
            return dense
        ok, why = sparse_eligible(step, cs, dla)
        if not ok:
            dense.parts = replace(dense.parts, sparse="ineligible", sparse_reason=why)
            return dense
        sp = _conv_cost(step, plat, cs, True)
        times = dict(dense_s=dense.total_s, sparse_s=sp.total_s)
        if sp.total_s < dense.total_s:
            sp.parts = replace(sp.parts, sparse="used", **times)
            return sp
        dense.parts = replace(dense.parts, sparse="too_small", sparse_reason=_no_gain(dense), **times)
        return dense
    return _sdp_cost(step, g, plat)


def _no_gain(c: StepCost) -> str:
    """Why 2:4 weights do not shorten an eligible layer: what bounds it is not its MACs."""
    if c.memory_s >= c.compute_s:
        return "DRAM traffic, not MACs, sets its time"
    return "its output rate through the SDP/PDP, not its MACs, sets its time"


# _conv_cost results by everything they depend on (platform, conv shape, precision and the step's facts
# below), so the repeated blocks of a network, and the same layers in another candidate, are priced once.
# Bounded: emptied when full. The platform is matched by identity (frozen) and kept by the entry.
_CONV: dict = {}
CONV_CACHE_SIZE = 8192


def clear_caches() -> None:
    _CONV.clear()


def _conv_cost(step: Step, plat: Platform, cs: ConvShape, sparse: bool) -> StepCost:
    p = step.precision
    bpe = _bpe(p)
    out_bytes = _fmaps_bytes(step.outputs, bpe)
    residual = _fmaps_bytes(step.inputs[1:], bpe)
    image = step.image_input
    uses_lut = not LUT_OPS.isdisjoint([l.op for l in step.members])
    pool = step.fused_pool is not None
    key = (id(plat), shape_key(cs), p, out_bytes, residual, image, uses_lut, pool, sparse)
    hit = _CONV.get(key)
    if hit is None or hit[0] is not plat:
        if len(_CONV) >= CONV_CACHE_SIZE:
            _CONV.clear()
        hit = _CONV[key] = entry(plat, _conv_cost_of(plat, cs, p, out_bytes, residual, image, uses_lut, pool, sparse))
    # a new record with the cached parts, shared (CostParts is frozen); layer_cost replaces them with the
    # sparsity outcome
    return StepCost(*hit[1:])


def _conv_cost_of(plat: Platform, cs: ConvShape, p: str, out_bytes: int, residual: int, image: bool,
                  uses_lut: bool, pool: bool, sparse: bool) -> StepCost:
    """One conv step's cost from its shape, precision, output and residual bytes, whether it reads the
    network input in image-input mode (kDLA_HWC4), runs the LUT or a fused pool, and 2:4 weights."""
    dla = plat.dla
    bpe = _bpe(p)
    hz = dla.clock_hz
    bw = dram_bandwidth(plat)
    mac_cycles, ideal = conv_cycles(cs, dla, p, image, sparse)
    conv_out = cs.n * cs.k * cs.p * cs.q
    sdp_rate = dla.sdp_eltwise_elems_per_cycle if uses_lut else dla.sdp_elems_per_cycle
    sdp_cycles = conv_out / sdp_rate
    pdp_cycles = conv_out / dla.pdp_elems_per_cycle if pool else 0.0
    cycles = max(mac_cycles, sdp_cycles, pdp_cycles)
    traffic, refetch, stalled = conv_traffic(cs, dla, bpe, out_bytes, residual, sparse, image_mode(cs, image))
    eff = dla.mac_eff(p)
    stall_s = stalled / bw
    compute = cycles / (hz * eff) + stall_s
    # cycles above the ideal (of the sparse rate when sparse) are channel padding on the MAC array; on the
    # depthwise processor, its rate
    run = ideal / 2 if sparse else ideal
    pad_s = 0.0 if on_depthwise_processor(cs, dla) else max(mac_cycles - run, 0) / (hz * eff)
    pad_s = pad_s if mac_cycles >= sdp_cycles else 0.0
    # compute_bound (explainer/gap.py), two mechanisms of its own: (1) the cycles the step runs beyond the MAC
    # array's padded work, at a slower unit's rate (the depthwise processor's, or the SDP/PDP output rate when it
    # outpaces the MACs; dla.md s1.3), and (2) the MAC efficiency below 1 on the ideal cycles
    unit_rate_s = (cycles - run) / (hz * eff) - pad_s
    efficiency_s = run / hz * (1.0 / eff - 1.0)
    rate_loss_s = unit_rate_s + efficiency_s
    ops = hw_ops(cs, dla, image)
    return finish(compute, traffic / bw, dla.layer_overhead_s * ops, cs.macs, traffic,
                  ideal_s=ideal / hz, padding_s=pad_s, rate_loss_s=rate_loss_s, refetch_s=refetch / bw,
                  weight_stall_s=stall_s,
                  output_bound=sdp_cycles > mac_cycles or pdp_cycles > mac_cycles)


def _sdp_cost(step: Step, g: Graph, plat: Platform) -> StepCost:
    """Standalone SDP / PDP / CDP / shuffle layers (dla.md s1.3, s6.1: bandwidth-bound at their rates).

    An SDP pass streams its output's elements at the SDP rate (16 elem/cycle on v1; 4 through the LUT or
    with an element-wise operand, the Y block, s0.1 fact 9) and reads every operand from memory: a tensor that several
    members read (SiLU's x as the multiply's operand after the add or LUT that also reads it) is read once
    per use (s1.3: the second operand comes from memory)."""
    dla = plat.dla
    bpe = _bpe(step.precision)
    hz = dla.clock_hz
    bw = dram_bandwidth(plat)
    out_bytes = _fmaps_bytes(step.outputs, bpe)
    anchor = step.anchor
    op = anchor.op if anchor is not None else step.op
    if op == "Concat":
        # producers write into the concatenated buffer; nothing moves (TensorRT concat elimination)
        return finish(0.0, 0.0, dla.layer_overhead_s, 0, 0, in_place=True)
    uses = Counter(n for layer in step.members for n in layer.inputs)
    in_bytes = reads = 0
    for t in {t.name: t for t in step.inputs}.values():
        k = max(1, uses[t.name])
        reads += k
        in_bytes += k * _fmap_bytes(t.shape, bpe)
    n = elems(step.outputs)
    if op in ("MaxPool", "AveragePool"):
        rate, n = read_limited_rate(dla.pdp_elems_per_cycle, dla.pdp_read_bytes_per_cycle, bpe), elems(step.inputs)
    elif op == "LRN":
        rate = read_limited_rate(dla.cdp_elems_per_cycle, dla.pdp_read_bytes_per_cycle, bpe)
    elif op in SHUFFLES:
        rate = float("inf")          # a DMA copy: bytes only
    elif op == "Softmax" or reads > 1 or not LUT_OPS.isdisjoint([l.op for l in step.members]):
        rate = dla.sdp_eltwise_elems_per_cycle
    else:
        rate = dla.sdp_elems_per_cycle
    nbytes = in_bytes + out_bytes
    return finish(n / rate / hz, nbytes / bw, dla.layer_overhead_s, 0, nbytes)


def launch_cost(step: Step, plat: Platform) -> StepCost:
    """One DLA loadable submission and completion (seed 000 '{conv1}' row; dla.md s3.4)."""
    return finish(0.0, 0.0, plat.dla.subgraph_overhead_s)
