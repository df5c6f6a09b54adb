"""Explain and compare: why a speedup falls short of the naive expectation, and what would recover it.

- `compare(model, hw, vary)` estimates one model under each value of one option (precision, sparsity,
  device, batch, hw) and splits the gap between the naive speedup (peak MAC-rate ratio, 2x for 2:4, b1/b2
  for batch) and the predicted one into the stable cause codes of DESIGN.md ("Cause vocabulary").
- `explain(model, hw)` splits one configuration's time into a waterfall from the ideal (all MACs at the
  peak of one DLA core or the GPU) to the prediction, in the same codes.
- Both add recovery advice: each change (native I/O formats, Mish -> ReLU, MatMul -> 1x1 conv, run on the
  GPU, norm / pooling rewrites, channels rounded for 2:4 tiles, a larger batch) is applied to a copy of the
  network or options and re-estimated through `dlasim.estimate`; only changes that predict a gain are kept.

Sources (../reference): dla.md s1.2 (MAC atoms: padding, peak = atomic C x K x clock), s1.5 (CBUF refetch),
s3.1 (one network per DLA core, FP16/INT8 only), s3.4 (fallback, subgraphs, reformats, native I/O formats),
s4.1 (MatMul as a 1x1 conv with constant weights, ReduceMean -> AveragePool); gpu_tensorrt.md s1.1 (GPU
peaks), s2.1/s2.3 (2:4 rules; why sparsity often gives no speedup), s3.1 (reformats), s5.1 (launch
overhead), s5.3 (tile and wave quantization); seeds 000-003 (the user reports these answer).
"""
from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from dataclasses import dataclass, field

import dlasim

from . import ops
from .cost.geometry import conv_shape
from .cost.gpu import C_ALIGN
from .errors import DlasimError
from .hardware import Platform, hardware
from .ir import Graph, Layer, Tensor
from .passes.fold import FOLDABLE
from .passes.reformat import parse_io_formats
from .report import Estimate, StepRow

VARY_KEYS = ("precision", "sparsity", "device", "batch", "hw")
DEFAULTS = dict(device="dla", precision="fp16", batch=None, gpu_fallback=True, sparsity="disable", dla_core=0,
                shapes=None, input_formats=None, output_formats=None)
KIND_CODES = ("reformat", "transition", "overhead")
WHAT = {
    "reformat": "reformat copies (format or precision changes at engine and subgraph boundaries)",
    "transition": "GPU<->DLA hand-overs",
    "overhead": "fixed launch and per-layer costs",
    "fallback": "layers that fall back to the GPU",
    "memory_bound": "DRAM waits of memory-bound layers (beyond their compute)",
    "compute_bound": "losses to kernel efficiency below the peak MAC rate",
    "cbuf_refetch": "CBUF refetches (weights or inputs read again because they do not fit the convolution buffer)",
    "channel_padding": "MACs wasted on channel padding to the MAC atom or GEMM tile",
    "tile_quantization": "partly empty GEMM tiles",
    "wave_quantization": "partly empty waves of CTAs",
    "sparse_ineligible": "layers not eligible for 2:4 sparse kernels",
    "sparse_too_small": "layers where the dense kernel is as fast as the 2:4 sparse one",
    "precision_unsupported": "layers that run FP16 though INT8 was asked",
    "other": "smaller causes together",
}
WHY = {
    "reformat": "copies move bytes, not MACs",
    "transition": "hand-overs are copies plus a synchronisation",
    "overhead": "fixed costs do not shrink",
    "fallback": "the GPU runs them, not the accelerator the expectation assumed",
    "memory_bound": "bytes, not MACs, set their time",
    "compute_bound": "kernels do not reach peak",
    "cbuf_refetch": "the re-reads are bytes, not MACs",
    "channel_padding": "the padded MACs cost time too",
    "tile_quantization": "empty tile slots cost time too",
    "wave_quantization": "the last wave runs partly idle",
    "sparse_ineligible": "they stay dense",
    "sparse_too_small": "TensorRT keeps the faster dense kernel",
    "precision_unsupported": "those layers get no INT8 speed-up",
    "other": "",
}


# ---- peaks and the naive expectation ----------------------------------------------------------------


def run_precision(hw: Platform, device: str, precision: str) -> str:
    """The precision `device` runs for a requested one (the DLA runs FP16 or INT8 only, dla.md s3.1)."""
    if device == "dla":
        p = "int8" if precision in ("int8", "best") else "fp16"
        have = [q for q in hw.dla.precisions if q != "fp32" and hw.dla.macs_per_cycle(q)]
        return p if p in have else have[0]
    return "int8" if precision == "best" else precision


def peak_macs_per_s(hw: Platform, device: str, precision: str) -> float:
    """Dense peak: one DLA core = atomic C x atomic K x clock (dla.md s1.2; TensorRT runs a network on one
    core, s3.1); GPU = SMs x FMA/clk/SM x clock (gpu_tensorrt.md s1.1)."""
    p = run_precision(hw, device, precision)
    if device == "dla":
        return hw.dla.macs_per_cycle(p) * hw.dla.clock_hz
    return hw.gpu.sm_count * hw.gpu.fma_per_clk_per_sm(p) * hw.gpu.clock_hz


def ideal_speedup(key: str, a, b, hw: Platform, opts: dict, hw_b: Platform | None = None) -> float:
    """Naive speedup from value a to b: peak ratio for precision/device/hw, 2.0 for dense -> 2:4, b1/b2."""
    dev, prec = opts["device"], opts["precision"]
    if key == "precision":
        return peak_macs_per_s(hw, dev, b) / peak_macs_per_s(hw, dev, a)
    if key == "device":
        return peak_macs_per_s(hw, b, prec) / peak_macs_per_s(hw, a, prec)
    if key == "hw":
        return peak_macs_per_s(hw_b, dev, prec) / peak_macs_per_s(hw, dev, prec)
    if key == "batch":
        return a / b
    sa, sb = a != "disable", b != "disable"
    return 2.0 if sb and not sa else 0.5 if sa and not sb else 1.0


@dataclass(frozen=True)
class _Ctx:
    """One configuration's naive expectation: every MAC at the device's peak (doubled when 2:4 is asked)."""
    graph: Graph
    hw: Platform
    device: str
    precision: str               # what the device runs for the requested precision
    sparse: bool
    peak: float                  # dense MAC/s

    @classmethod
    def of(cls, graph: Graph, hw: Platform, opts: dict) -> "_Ctx":
        dev, prec = opts["device"], opts["precision"]
        return cls(graph, hw, dev, run_precision(hw, dev, prec), opts["sparsity"] != "disable",
                   peak_macs_per_s(hw, dev, prec))

    def ideal_ms(self, macs: int, sparse: bool | None = None) -> float:
        sp = self.sparse if sparse is None else sparse
        return macs / (self.peak * (2.0 if sp else 1.0)) * 1e3


# ---- one step's time, split into the ideal and the causes -------------------------------------------


def outcome(row: StepRow, ctx: _Ctx) -> str | None:
    """The one cause that explains a whole step, if there is one (its kind, fallback, sparse, precision)."""
    if row.kind != "layer":
        return row.kind
    if ctx.device == "dla" and row.device == "gpu":
        return "fallback"
    if row.precision != ctx.precision and ctx.precision == "int8":
        return "precision_unsupported"
    if ctx.sparse and row.macs and row.parts.get("sparse") != "used":
        return "sparse_too_small" if row.parts.get("sparse") == "too_small" else "sparse_ineligible"
    return None


def step_parts(row: StepRow, ctx: _Ctx) -> dict[str, float]:
    """A step's time (ms) as {"ideal": ..., cause code: ...}; the values sum to row.time_ms.

    Layer steps: time = max(compute, memory, floor) + overhead (cost/__init__.finish). The compute part is
    the ideal plus losses (DLA padding_s: channel padding, dla.md s1.2; GPU tile/wave/K efficiencies,
    gpu_tensorrt.md s5.3); memory beyond compute is CBUF refetch (refetch_s, dla.md s1.5) then memory_bound;
    floor and overhead are overhead. The remainder (kernel efficiency) is compute_bound.
    """
    t = row.time_ms
    if row.kind != "layer":
        return {row.kind: t}
    ideal = ctx.ideal_ms(row.macs)
    if ctx.device == "dla" and row.device == "gpu":
        return {"ideal": ideal, "fallback": t - ideal}
    p = row.parts
    out = {"ideal": ideal}
    state = p.get("sparse", "off")
    if ctx.sparse and row.macs and state != "used":
        out["sparse_too_small" if state == "too_small" else "sparse_ineligible"] = ideal
    dense_run = p["ideal_s"] * 1e3 if "ideal_s" in p else ctx.ideal_ms(row.macs, sparse=False)
    run = dense_run / 2 if state == "used" else dense_run
    if row.precision != ctx.precision and row.macs:
        out["precision_unsupported"] = run - sum(out.values())
    out.update(_compute_losses(row, ctx, run))
    excess = max(0.0, row.memory_ms - row.compute_ms)
    out["cbuf_refetch"] = min(p.get("refetch_s", 0.0) * 1e3, excess)
    out["memory_bound"] = excess - out["cbuf_refetch"]
    out["overhead"] = row.overhead_ms + p.get("floor_s", 0.0) * 1e3
    out["compute_bound"] += t - sum(out.values())          # rounding and unnamed parts: exact sum
    return out


def _compute_losses(row: StepRow, ctx: _Ctx, run: float) -> dict[str, float]:
    """compute_ms - ideal at the run precision, split: DLA padding_s; GPU tile/wave/channel factors by log."""
    loss = row.compute_ms - run
    p = row.parts
    if row.device == "dla":
        pad = p.get("padding_s", 0.0) * 1e3
        return {"channel_padding": pad, "compute_bound": loss - pad}
    pre = "sparse_" if p.get("sparse") == "used" else ""
    if pre + "tile_eff" not in p or loss <= 0 or run <= 0:
        return {"compute_bound": loss}
    factors = {"channel_padding": _channel_align(row, ctx) / p.get(pre + "k_eff", 1.0),
               "tile_quantization": 1.0 / p[pre + "tile_eff"], "wave_quantization": 1.0 / p[pre + "wave_eff"]}
    logs = {k: math.log(f) for k, f in factors.items() if f > 1.0 + 1e-12}
    total = math.log(row.compute_ms / run)
    scale = loss / max(total, sum(logs.values()), 1e-12)
    out = {k: v * scale for k, v in logs.items()}
    out["compute_bound"] = loss - sum(out.values())
    return out


def _channel_align(row: StepRow, ctx: _Ctx) -> float:
    """GEMM-K padding of the input channels to the tensor-core alignment (gpu_tensorrt.md s5.3)."""
    try:
        layer = next(l for l in ctx.graph.layers if l.name in row.layers and l.op in ("Conv", "ConvTranspose",
                                                                                     "Gemm", "MatMul"))
        cs = conv_shape(layer, ctx.graph)
    except (StopIteration, KeyError, IndexError, TypeError):
        return 1.0
    if cs is None:
        return 1.0
    cg, a = cs.c // cs.groups, C_ALIGN.get(row.precision, 1)
    return math.ceil(cg / a) * a / cg if cg else 1.0


# ---- matching steps across variants -----------------------------------------------------------------

_COPY = re.compile(r"^(.*) (reformat|transition) \((\w+):(\w+) -> (\w+):(\w+)\)$")


def _keys(row: StepRow) -> list[str]:
    if row.kind == "layer":
        return [f"L:{n}" for n in row.layers] or [f"N:{row.name}"]
    m = _COPY.match(row.name)
    return [f"C:{m.group(2)}:{m.group(1)}" if m else f"N:{row.name}"]


def match_steps(a: list[StepRow], b: list[StepRow]) -> list[tuple[list[StepRow], list[StepRow]]]:
    """Groups of steps of two estimates that cover the same original layers (or copy the same tensor)."""
    nodes = [(0, r) for r in a] + [(1, r) for r in b]
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: dict[str, int] = {}
    for i, (_, r) in enumerate(nodes):
        for k in _keys(r):
            if k in seen:
                parent[find(i)] = find(seen[k])
            else:
                seen[k] = i
    groups: dict[int, tuple[list, list]] = {}
    for i, (side, r) in enumerate(nodes):
        groups.setdefault(find(i), ([], []))[side].append(r)
    return list(groups.values())


# ---- causes --------------------------------------------------------------------------------------


def gap_by_cause(groups, ctx1: _Ctx, ctx2: _Ctx, ideal: float) -> dict[str, float]:
    """second_total - first_total / ideal, split per matched group into cause codes.

    A group the second variant runs for one reason (a copy, a fallback, a layer kept dense or in FP16)
    counts whole under that code; otherwise each code gets its part in the second variant minus its part
    in the first scaled by the ideal speedup. Unmatched steps count whole. The values sum to the gap.
    """
    gap: dict[str, float] = {}
    for rows1, rows2 in groups:
        why = {outcome(r, ctx2) for r in rows2} if rows2 else {outcome(r, ctx1) for r in rows1}
        if len(why) == 1 and None not in why:
            code = why.pop()
            gap[code] = gap.get(code, 0.0) + sum(r.time_ms for r in rows2) - sum(r.time_ms for r in rows1) / ideal
            continue
        for rows, ctx, w in ((rows2, ctx2, 1.0), (rows1, ctx1, -1.0 / ideal)):
            for r in rows:
                for code, ms in step_parts(r, ctx).items():
                    code = "compute_bound" if code == "ideal" else code
                    gap[code] = gap.get(code, 0.0) + w * ms
    return gap


def totals_by_cause(rows: list[StepRow], ctx: _Ctx) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        for code, ms in step_parts(r, ctx).items():
            out[code] = out.get(code, 0.0) + ms
    return out


def _examples(rows: list[StepRow], ctx: _Ctx, code: str, n: int = 3) -> str:
    """'; N step(s), e.g. a (why), b' naming the steps that carry most of `code` (and why, for whole-step
    causes, the most common reasons)."""
    if code in ("reformat", "transition"):
        k = sum(r.kind == code for r in rows)
        return f"; {k} step(s)" if k else ""
    if code in OUTCOME_CODES:
        hits = sorted((r for r in rows if outcome(r, ctx) == code), key=lambda r: -r.time_ms)
    else:
        parts = [(step_parts(r, ctx).get(code, 0.0), r) for r in rows]
        hits = [r for ms, r in sorted(parts, key=lambda x: -x[0]) if ms > 1e-9]
    if not hits:
        return ""
    names = []
    for r in hits[:n]:
        ck = _channels(r, ctx) if code in ("sparse_too_small", "sparse_ineligible", "tile_quantization",
                                           "wave_quantization", "channel_padding") else None
        names.append((r.layers[0] if r.layers else r.name) + (f" ({ck[0]}->{ck[1]} ch)" if ck else ""))
    more = f" and {len(hits) - n} more" if len(hits) > n else ""
    text = f"; {len(hits)} step(s), e.g. {', '.join(names)}{more}"
    if code in ("sparse_too_small", "sparse_ineligible"):
        by_ch = Counter(f"{c}->{k}" for c, k in filter(None, (_channels(r, ctx) for r in hits)))
        text += "; channels C->K: " + ", ".join(f"{ck} ({k})" for ck, k in by_ch.most_common(8))
    if code in ("fallback", "precision_unsupported", "sparse_ineligible"):
        why = Counter(r.parts.get("sparse_reason", "") if code == "sparse_ineligible" else r.reason for r in hits)
        text += " (" + "; ".join(f"{w} ({k})" for w, k in why.most_common(3) if w) + ")"
    return text


def _channels(row: StepRow, ctx: _Ctx) -> tuple[int, int] | None:
    for l in ctx.graph.layers:
        if l.name in row.layers and l.op in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
            cs = conv_shape(l, ctx.graph)
            return (cs.c, cs.k) if cs else None
    return None


def _si(n: float) -> str:
    return next((f"{n / v:.3g}{u}" for u, v in (("G", 1e9), ("M", 1e6), ("k", 1e3)) if abs(n) >= v), f"{n:.3g}")


OUTCOME_CODES = ("fallback", "precision_unsupported", "sparse_too_small", "sparse_ineligible")


def amounts(rows: list[StepRow], ctx: _Ctx) -> dict[str, float]:
    """Per code, what a reader expects to see: the time of the steps a whole-step cause covers (fallback,
    sparse, precision), otherwise the summed part (copies, launches, losses)."""
    out = totals_by_cause(rows, ctx)
    for code in OUTCOME_CODES:
        out[code] = sum(r.time_ms for r in rows if outcome(r, ctx) == code)
    return out


def _cause(code: str, ms: float, gap: float, text: str) -> dict:
    return {"code": code, "ms": ms, "share": ms / gap if abs(gap) > 1e-12 else 0.0, "text": text}


def _ranked(causes: list[dict], gap: float, minor: float) -> list[dict]:
    """Largest first; entries under `minor` x |gap| fold into one "other" entry (last) so the list still sums."""
    keep = [c for c in causes if abs(c["ms"]) >= minor * abs(gap) and abs(c["ms"]) > 1e-9 and c["code"] != "other"]
    rest = sum(c["ms"] for c in causes) - sum(c["ms"] for c in keep)
    if abs(rest) > 1e-9:
        keep.append(_cause("other", rest, gap, f"smaller causes and the ideal-rate rest together: {rest:.4f} ms"))
    return sorted(keep, key=lambda c: (c["code"] == "other", -c["ms"]))


# ---- configurations and rewrites ------------------------------------------------------------------


@dataclass(frozen=True)
class _Config:
    graph: Graph
    hw: Platform
    opts: dict                   # estimate options (shapes already applied to graph)

    def estimate(self, label: str = "", graph: Graph | None = None, **change) -> Estimate:
        return dlasim.estimate(graph or self.graph, self.hw, label=label, **{**self.opts, **change})


def _setup(model, hw, opts: dict) -> _Config:
    unknown = set(opts) - set(DEFAULTS)
    if unknown:
        raise DlasimError(f"unknown option(s): {', '.join(sorted(unknown))} (known: {', '.join(DEFAULTS)})")
    o = {**DEFAULTS, **{k: v for k, v in opts.items() if v is not None}}
    g = dlasim.load(model, shapes=o.pop("shapes"), batch=o["batch"])
    return _Config(g, hardware(hw), o)


def _prune(g: Graph) -> Graph:
    """Drop layers whose outputs nobody reads (after a rewrite cut them off)."""
    while True:
        used = {t for l in g.layers for t in l.inputs} | set(g.outputs)
        dead = [l for l in g.layers if not any(t in used for t in l.outputs)]
        if not dead:
            return g
        gone = {id(l) for l in dead}
        g.layers = [l for l in g.layers if id(l) not in gone]
        g._producer = g._consumers = None


def _rebuilt(g: Graph) -> Graph:
    g._producer = g._consumers = None
    return _prune(g).validate().infer_shapes()


def relu_for_mish(g: Graph) -> tuple[Graph, int]:
    """Copy with Mish (one op, or Softplus -> Tanh -> Mul(x, .)) replaced by one Relu (seed 002)."""
    g = g.copy()
    n, drop = 0, set()
    for l in g.layers:
        if l.op == "Mish":
            l.op, l.attrs, n = "Relu", {}, n + 1
        elif l.op == "Mul" and len(l.inputs) == 2:
            for x, y in (l.inputs, l.inputs[::-1]):
                tanh = g.producer(y)
                sp = g.producer(tanh.inputs[0]) if tanh is not None and tanh.op == "Tanh" else None
                if sp is not None and sp.op == "Softplus" and sp.inputs[0] == x \
                        and len(g.consumers(sp.outputs[0])) == 1 and len(g.consumers(y)) == 1:
                    drop |= {sp.name, tanh.name}
                    l.op, l.inputs, l.attrs, n = "Relu", [x], {}, n + 1
                    break
    g.layers = [l for l in g.layers if l.name not in drop]
    return _rebuilt(g), n


def constant_matmul(g: Graph, names: set[str]) -> Graph:
    """Copy where the second operand of each named MatMul is a constant (weights): a 1x1 conv on DLA."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            src = g.tensors[l.inputs[1]]
            w = f"{l.name}.weight"
            g.tensors[w] = Tensor(w, src.shape, src.dtype, const=True)
            l.inputs[1] = w
    return _rebuilt(g)


def batchnorm_for_norms(g: Graph, names: set[str]) -> Graph:
    """Copy with the named Group/InstanceNormalization layers as BatchNormalization (same shapes)."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            c = g.tensors[l.inputs[0]].shape[1]
            params = []
            for p in ("scale", "bias", "mean", "var"):
                params.append(f"{l.name}.bn_{p}")
                g.tensors[params[-1]] = Tensor(params[-1], (c,), const=True)
            l.op, l.inputs, l.attrs = "BatchNormalization", [l.inputs[0]] + params, {"epsilon": 1e-5}
    return _rebuilt(g)


def avgpool_for_global(g: Graph, names: set[str]) -> Graph:
    """Copy with each named GlobalAveragePool as AveragePool over the whole H x W (dla.md s4.1)."""
    g = g.copy()
    for l in g.layers:
        if l.name in names:
            h, w = g.tensors[l.inputs[0]].shape[2:4]
            l.op, l.attrs = "AveragePool", {"kernel_shape": [h, w], "strides": [h, w], "pads": [0, 0, 0, 0]}
    return _rebuilt(g)


def cascade_maxpool(g: Graph, names: set[str]) -> Graph:
    """Copy with each named stride-1 'same' MaxPool k (k = 4n+1) as n cascaded 5x5 pools (SPPF identity)."""
    g = g.copy()
    layers = []
    for l in g.layers:
        k = ops.conv_params(l.attrs)[0][0]
        if l.name not in names:
            layers.append(l)
            continue
        x = l.inputs[0]
        for i in range((k - 1) // 4):
            last = i == (k - 1) // 4 - 1
            out = l.outputs[0] if last else f"{l.name}.5x5_{i}"
            if not last:
                g.tensors[out] = Tensor(out, g.tensors[x].shape)
            layers.append(Layer(f"{l.name}.5x5_{i}", "MaxPool", [x], [out],
                                {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2]}))
            x = out
    g.layers = layers
    return _rebuilt(g)


def sparse_width(c: int) -> int:
    """Channels rounded up so 2:4 sparse tiles fill: a multiple of 128 and at least 256 (seed 001)."""
    return max(256, -(-c // 128) * 128)


def widen_channels(g: Graph, width) -> Graph | None:
    """Copy whose conv output channels K become width(K) (graph outputs keep theirs); downstream weights,
    per-channel parameters and Split sizes follow and shapes are re-inferred. None if the widths would
    not stay consistent (e.g. an element-wise op mixing widths)."""
    g = g.copy()
    try:
        splits = _split_sources(g)
        for l in g.layers:
            x = g.tensors[l.inputs[0]].shape if l.inputs and l.inputs[0] else None
            if l.op == "Conv":
                _widen_conv(g, l, x, width, splits)
            elif l.op == "Split" and l.attrs.get("split") and sum(l.attrs["split"]) != x[1]:
                l.attrs["split"] = [width(s) for s in l.attrs["split"]]
            elif l.op in ops.NORMS | {"PRelu"}:
                for t in l.inputs[1:]:
                    if t and g.tensors[t].const and len(g.tensors[t].shape) == 1:
                        g.tensors[t].shape = (x[1],)
            elif l.op in ("Gemm", "MatMul") and g.tensors[l.inputs[1]].const and len(x) > 1:
                w = g.tensors[l.inputs[1]]
                fan_in = math.prod(x[1:]) if l.op == "Gemm" else x[-1]
                w.shape = (w.shape[0], fan_in) if l.attrs.get("transB") else (fan_in,) + tuple(w.shape[1:])
            elif l.op in ops.ELEMENTWISE:
                cs = {g.tensors[t].shape[1] for t in l.inputs if t and len(g.tensors[t].shape) > 1
                      and not g.tensors[t].const}
                if len(cs) > 1:
                    return None
            outs = ops.infer(l, [g.tensors[t].shape for t in l.inputs if t])
            for t, s in zip(l.outputs, outs):
                g.tensors[t].shape = tuple(int(d) for d in s)
    except (DlasimError, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    return g


def _split_sources(g: Graph) -> dict[str, Layer]:
    """{conv name: the Split that cuts its output} through channel-preserving layers (BN, SiLU, ...)."""
    out = {}
    for sp in (l for l in g.layers if l.op == "Split" and l.attrs.get("split")):
        p = g.producer(sp.inputs[0])
        while p is not None and p.op != "Conv" and (p.op in ops.SAME_SHAPE or p.op in ops.ELEMENTWISE):
            p = g.producer(p.inputs[0])
        if p is not None and p.op == "Conv":
            out[p.name] = sp
    return out


def _widen_conv(g: Graph, l: Layer, x, width, splits) -> None:
    w = g.tensors[l.inputs[1]]
    k, groups = w.shape[0], int(l.attrs.get("group", 1))
    c_old = w.shape[1] * groups
    if groups > 1 and groups == c_old:                      # depthwise follows its input
        k, groups = x[1] * (k // c_old), x[1]
        l.attrs["group"] = groups
    elif l.outputs[0] not in g.outputs:
        sp = splits.get(l.name)
        k = sum(width(s) for s in sp.attrs["split"]) if sp and sum(sp.attrs["split"]) == k else width(k)
    if x[1] % groups:
        raise ValueError("groups")
    w.shape = (k, x[1] // groups) + tuple(w.shape[2:])
    for b in l.inputs[2:]:
        if b:
            g.tensors[b].shape = (k,)


# ---- advice ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Change:
    change: str                  # stable id of the suggestion
    text: str                    # what to do, with the reason
    graph: Graph | None = None   # rewritten network (None: the same)
    opts: dict = field(default_factory=dict)
    per_image: bool = False      # compare per-image time (batch changes)


def _fallback_layers(est: Estimate, g: Graph, ops_: set[str]) -> list[Layer]:
    names = {f["name"] for f in est.fallback if f["op"] in ops_}
    return [l for l in g.layers if l.name in names]


def _resolve(g: Graph, t: str) -> str:
    """The tensor a network output aliases after no-op folding (passes/fold.py)."""
    while True:
        l = g.producer(t)
        data = g.data_inputs(l) if l is not None else []
        same = len(data) == 1 and data[0].shape == g.tensors[t].shape
        if l is None or len(data) != 1 or not (l.op in FOLDABLE or (same and l.op in ("Reshape", "Flatten",
                                                                                       "Squeeze", "Unsqueeze"))):
            return t
        t = data[0].name


def advise_io_formats(cfg: _Config, est: Estimate, codes: list[str]) -> list[_Change]:
    """Native DLA/GPU I/O formats remove the boundary reformats (dla.md s3.4 "I/O formats on DLA")."""
    if "reformat" not in codes[:3]:
        return []
    copies = {}
    for r in est.steps:
        m = _COPY.match(r.name) if r.kind == "reformat" else None
        if m:
            copies.setdefault(m.group(1), (f"{m.group(3)}:{m.group(4)}", f"{m.group(5)}:{m.group(6)}"))
    g = cfg.graph
    have_in = parse_io_formats(cfg.opts.get("input_formats"), "--inputIOFormats") or [("fp32", "linear")]
    have_out = parse_io_formats(cfg.opts.get("output_formats"), "--outputIOFormats") or [("fp32", "linear")]
    ins, outs = [], []
    for i, t in enumerate(g.inputs):
        fmt = copies[t][1] if t in copies else ":".join(have_in[min(i, len(have_in) - 1)])
        shape = g.tensors[t].shape
        if t in copies and est.device == "dla" and len(shape) == 4 and shape[1] <= 4:
            fmt = fmt.split(":")[0] + ":dla_hwc4"          # image input: first layer a conv (dla.md s3.4)
        ins.append(fmt)
    for i, t in enumerate(g.outputs):
        src = copies.get(_resolve(g, t))
        outs.append(src[0] if src else ":".join(have_out[min(i, len(have_out) - 1)]))
    if not any(t in copies for t in g.inputs) and not any(_resolve(g, t) in copies for t in g.outputs):
        return []
    i, o = ",".join(ins), ",".join(outs)
    return [_Change("io_formats", f"give the engine its native I/O formats (--inputIOFormats={i} "
                    f"--outputIOFormats={o}) so no reformat runs at the engine boundary; produce and consume "
                    f"these formats in pre/post-processing", opts={"input_formats": i, "output_formats": o})]


def advise_gpu(cfg: _Config, est: Estimate, codes: list[str]) -> list[_Change]:
    """A tiny network on the DLA is dominated by launch and copies; the GPU may be faster (seed 003)."""
    if est.device != "dla" or cfg.hw.gpu is None:
        return []
    kinds = est.by_kind()
    fixed = sum(kinds.get(k, 0.0) for k in KIND_CODES)
    ideal = _Ctx.of(cfg.graph, cfg.hw, cfg.opts).ideal_ms(est.macs)
    if fixed < max(ideal, 0.5 * est.total_ms):
        return []
    return [_Change("run_on_gpu", f"the network is tiny ({_si(est.macs)} MACs, {ideal:.3f} ms at the DLA's peak) "
                    f"and DLA launch and copies take {fixed:.3f} ms of {est.total_ms:.3f} ms: run it on the GPU",
                    opts={"device": "gpu"})]


def _names(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def _pick_mish(g: Graph, est: Estimate, hw: Platform) -> list[str]:
    return [l.name for l in _fallback_layers(est, g, {"Mish", "Softplus"})]


def _pick_matmul(g: Graph, est: Estimate, hw: Platform) -> list[str]:
    return [l.name for l in _fallback_layers(est, g, {"MatMul", "Gemm"}) if not g.tensors[l.inputs[1]].const]


def _pick_norms(g: Graph, est: Estimate, hw: Platform) -> list[str]:
    return [l.name for l in _fallback_layers(est, g, {"GroupNormalization", "InstanceNormalization"})]


def _pick_global_pool(g: Graph, est: Estimate, hw: Platform) -> list[str]:
    lim = hw.dla.support.pool_window_max
    return [l.name for l in _fallback_layers(est, g, {"GlobalAveragePool"})
            if len(g.tensors[l.inputs[0]].shape) == 4 and max(g.tensors[l.inputs[0]].shape[2:]) <= lim]


def _pick_big_pool(g: Graph, est: Estimate, hw: Platform) -> list[str]:
    out = []
    for l in _fallback_layers(est, g, {"MaxPool"}):
        k, s, p, _ = ops.conv_params(l.attrs)
        if k[0] == k[1] > hw.dla.support.pool_window_max and (k[0] - 1) % 4 == 0 and s == (1, 1) \
                and set(p) == {k[0] // 2}:
            out.append(l.name)
    return out


# (change, which fallback layers it applies to, rewrite(graph, names), what to do): dla.md s4.1 recipes,
# dla_support.REWRITES, seeds 002 and 003
DLA_REWRITES = (
    ("mish_to_relu", _pick_mish, lambda g, names: relu_for_mish(g)[0],
     "replace Mish ({names} fall back) with ReLU or LeakyReLU (TAO force_relu; retrain) so the DLA is not split "
     "into islands"),
    ("matmul_to_conv", _pick_matmul, constant_matmul,
     "make the second operand of {names} a constant (weights) so TensorRT runs it as a 1x1 convolution on the DLA"),
    ("norm_to_batchnorm", _pick_norms, batchnorm_for_norms,
     "use BatchNormalization instead of Group/InstanceNormalization in {names} so it runs on the DLA"),
    ("global_pool_to_avgpool", _pick_global_pool, avgpool_for_global,
     "write the GlobalAveragePool {names} as AveragePool with the kernel = H x W so it runs in the DLA's PDP"),
    ("cascade_maxpool", _pick_big_pool, cascade_maxpool,
     "write the large stride-1 MaxPool {names} as cascaded 5x5 MaxPools (same result, as YOLOv5 SPPF) so it "
     "fits the DLA's pooling window"),
)


def advise_dla_rewrites(cfg: _Config, est: Estimate, codes: list[str]) -> list[_Change]:
    """Network rewrites that keep fallback layers on the DLA, one by one and (when several apply) together."""
    if est.device != "dla" or not est.fallback:
        return []
    out, together, texts = [], cfg.graph, []
    for change, pick, rewrite, text in DLA_REWRITES:
        names = pick(cfg.graph, est, cfg.hw)
        if not names:
            continue
        try:
            g, together = rewrite(cfg.graph, set(names)), rewrite(together, set(names))
        except (DlasimError, KeyError, IndexError, TypeError, ValueError):
            continue
        texts.append(text.format(names=_names(names)))
        out.append(_Change(change, texts[-1], graph=g))
    if len(out) > 1:
        out.append(_Change("dla_rewrites", "apply these rewrites together: " + "; ".join(texts), graph=together))
    return out


def advise_channels(cfg: _Config, est: Estimate, codes: list[str]) -> list[_Change]:
    """2:4 kernels need wide layers (gpu_tensorrt.md s2.3; seed 001: C, K >= 256 and multiples of 128)."""
    ctx = _Ctx.of(cfg.graph, cfg.hw, cfg.opts)
    if not ctx.sparse:
        return []
    bad = [r for r in est.steps if outcome(r, ctx) in ("sparse_too_small", "sparse_ineligible")
           and (ck := _channels(r, ctx)) and any(c != sparse_width(c) for c in ck)]
    if not bad:
        return []
    names = ", ".join(f"{r.layers[0]} ({'->'.join(map(str, _channels(r, ctx)))})" for r in bad[:6])
    names += f" and {len(bad) - 6} more" if len(bad) > 6 else ""
    out = []
    cheap = lambda c: sparse_width(c) if sparse_width(c) <= 1.5 * c else c      # noqa: E731
    for what, width in (("round conv channels up", sparse_width),
                        ("round up the channels where that costs <= 1.5x the MACs", cheap)):
        g = widen_channels(cfg.graph, width)
        if g is not None and g.macs != cfg.graph.macs:
            out.append(_Change("round_channels", f"{what} to multiples of 128 and >= 256 (e.g. 288 -> 384) so 2:4 "
                               f"sparse tiles fill; layers whose channel counts keep sparsity from paying: {names}",
                               graph=g))
    return out


def advise_batch(cfg: _Config, est: Estimate, codes: list[str]) -> list[_Change]:
    """Fixed costs and partly empty waves amortise over a larger batch (gpu_tensorrt.md s5.3, dla.md s3.4)."""
    return [_Change("batch", f"raise the batch to {est.batch * m}", opts={"batch": est.batch * m}, per_image=True)
            for m in (2, 4)]


ADVISORS = (advise_io_formats, advise_dla_rewrites, advise_gpu, advise_channels, advise_batch)


def _evaluate(ch: _Change, cfg: _Config, base: Estimate) -> tuple[dict, Estimate] | None:
    """Re-estimate the changed network/options; an advice item if the predicted time is lower (> 0.1%)."""
    try:
        e = cfg.estimate(graph=ch.graph, **ch.opts)
    except DlasimError:
        return None
    pred = e.total_ms / e.batch * base.batch if ch.per_image else e.total_ms
    gain = base.total_ms - pred
    if gain <= 1e-3 * base.total_ms:
        return None
    if ch.per_image:
        text = (f"{ch.text}: {e.total_ms / e.batch:.3f} ms per image instead of {base.total_ms / base.batch:.3f} ms "
                f"({e.total_ms:.3f} ms per batch-{e.batch} inference)")
    else:
        text = f"{ch.text}: predicted {pred:.3f} ms instead of {base.total_ms:.3f} ms"
    return {"change": ch.change, "text": text, "predicted_ms": pred, "gain_ms": gain,
            "gain_pct": 100.0 * gain / base.total_ms}, e


def _changes(cfg: _Config, est: Estimate, codes: list[str], skip=()) -> list[_Change]:
    return [ch for make in ADVISORS for ch in make(cfg, est, codes) if ch.change not in skip]


def advise(cfg: _Config, est: Estimate, codes: list[str], skip: tuple = ()) -> list[tuple[dict, _Change, Estimate]]:
    """Recovery advice, each re-estimated: (item, change, new estimate) per change id (its best variant),
    largest gain first."""
    best: dict[str, tuple] = {}
    for ch in _changes(cfg, est, codes, skip):
        res = _evaluate(ch, cfg, est)
        if res and res[0]["gain_ms"] > best.get(ch.change, ({"gain_ms": 0.0},))[0]["gain_ms"]:
            best[ch.change] = (res[0], ch, res[1])
    return sorted(best.values(), key=lambda b: -b[0]["gain_ms"])


def _twin(ch: _Change, firsts: list[_Change]) -> _Change | None:
    """The first variant's version of a change: same id (same batch for batch changes); a pure network
    rewrite applies as is."""
    same = [c for c in firsts if c.change == ch.change and (ch.change != "batch" or c.opts == ch.opts)]
    return same[0] if same else (ch if not ch.opts else None)


def _speedup_after(found, cfg1: _Config, e1: Estimate, codes: list[str], ideal: float) -> list[dict]:
    """Compare advice: the same change applied to the first variant too, and the speedup it would give."""
    firsts = _changes(cfg1, e1, codes)
    items = []
    for item, ch, e2 in found:
        twin = _twin(ch, firsts)
        try:
            s = cfg1.estimate(graph=twin.graph, **twin.opts).total_ms / e2.total_ms if twin else None
        except DlasimError:
            s = None
        if s is not None:
            item = {**item, "speedup_after": s,
                    "text": f"{item['text']}; the speedup would be {s:.2f}x (naive {ideal:.2f}x)"}
        items.append(item)
    return items


# ---- compare ----------------------------------------------------------------------------------------


def _label(key: str, v) -> str:
    return f"batch {v}" if key == "batch" else str(v)


def _shown(key: str, label: str) -> str:
    if key == "sparsity":
        return "dense" if label == "disable" else f"2:4 ({label})"
    return label.upper() if key in ("precision", "device") else label


@dataclass
class CompareResult:
    key: str
    labels: list[str]
    variants: list[Estimate]
    speedup: float
    ideal_speedup: float
    causes: list[dict]
    diff: list[dict]
    advice: list[dict]
    speedups: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"vary": self.key,
                "variants": [{**e.to_dict(), "label": lab, "total_ms": e.total_ms}
                             for lab, e in zip(self.labels, self.variants)],
                "speedup": self.speedup, "ideal_speedup": self.ideal_speedup, "speedups": self.speedups,
                "gap_ms": self.gap_ms, "causes": self.causes, "diff": self.diff, "advice": self.advice}

    @property
    def gap_ms(self) -> float:
        a, b = self.variants[0].total_ms, self.variants[1].total_ms
        return b - a / self.ideal_speedup

    def render(self, top: int = 8) -> str:
        e0 = self.variants[0]
        lines = [f"{e0.model} on {e0.hardware}  device={e0.device} precision={e0.precision} batch={e0.batch}"
                 f"  vary {self.key}"]
        for lab, e in zip(self.labels, self.variants):
            kinds = ", ".join(f"{k} {v:.3f}" for k, v in e.by_kind().items())
            lines.append(f"  {lab:<12} {e.total_ms:10.4f} ms   ({kinds})")
        a, b = (_shown(self.key, x) for x in self.labels[:2])
        lines.append(f"speedup {a} -> {b}: {self.speedup:.2f}x   naive expectation {self.ideal_speedup:.2f}x   "
                     f"{b} is {abs(self.gap_ms):.3f} ms {'slower' if self.gap_ms >= 0 else 'faster'} than expected")
        if self.causes:
            lines.append("why (ms against the expectation, share of the difference):")
            lines += [f"  {c['code']:<22} {c['ms']:9.3f} ms {c['share']:6.0%}  {c['text']}" for c in self.causes]
        if self.diff:
            lines.append(f"largest changes ({a} -> {b}):")
            for d in self.diff[:top]:
                ms = " -> ".join("-" if v is None else f"{v:.4f}" for v in d["ms"])
                ratio = f"{d['ratio']:.2f}x" if d["ratio"] is not None else "new/removed"
                lines.append(f"  {d['name'][:56]:<56} {d['kind']:<10} {ms} ms  ({ratio})")
        lines += _advice_lines(self.advice)
        return "\n".join(lines)

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["name", "kind"] + [f"ms_{lab}" for lab in self.labels[:2]] + ["delta_ms", "ratio"])
        for d in self.diff:
            w.writerow([d["name"], d["kind"]] + ["" if v is None else f"{v:.6f}" for v in d["ms"]]
                       + [f"{d['delta_ms']:.6f}", "" if d["ratio"] is None else f"{d['ratio']:.4f}"])
        return buf.getvalue()


def _advice_lines(advice: list[dict]) -> list[str]:
    if not advice:
        return []
    return ["what would recover it (re-estimated):"] + [
        f"  - {a['text']}  [-{a['gain_ms']:.3f} ms, -{a['gain_pct']:.0f}%]" for a in advice]


def step_diff(groups) -> list[dict]:
    """Per matched group: times in both variants, change and ratio; changed ones, largest change first."""
    rows = []
    for rows1, rows2 in groups:
        t1 = sum(r.time_ms for r in rows1) if rows1 else None
        t2 = sum(r.time_ms for r in rows2) if rows2 else None
        delta = (t2 or 0.0) - (t1 or 0.0)
        if abs(delta) <= 1e-9 and rows1 and rows2:
            continue
        ref = (rows2 or rows1)[0]
        name = " + ".join(dict.fromkeys(n for r in (rows2 or rows1) for n in (r.layers or [r.name])))
        rows.append({"name": name if ref.kind == "layer" else ref.name, "kind": ref.kind, "ms": [t1, t2],
                     "delta_ms": delta, "ratio": t1 / t2 if t1 is not None and t2 else None})
    return sorted(rows, key=lambda d: -abs(d["delta_ms"]))


def _compare_text(code: str, ms: float, a1: float, a2: float, labels, t2: float, examples: str, ideal: float) -> str:
    l1, l2 = labels
    if code in KIND_CODES or abs(a1) > 1e-9:
        text = f"{WHAT[code]} take {a1:.3f} ms in {l1} and {a2:.3f} ms in {l2} ({a2 / t2:.0%} of {l2} time)"
    else:
        text = f"{WHAT[code]} take {a2:.3f} ms in {l2} ({a2 / t2:.0%} of its time)"
    text += examples
    if ms < 0:
        return text + "; this part did better than the naive expectation"
    return text + (f"; {WHY[code]}, so they do not scale by the naive {ideal:.2g}x" if WHY.get(code) else "")


def compare(model, hw="xavier-agx", vary: dict | None = None, **opts) -> CompareResult:
    """Estimate each value of one option and attribute the gap to the naive speedup to causes.

    vary: {KEY: [v1, v2, ...]} with KEY in precision, sparsity, device, batch, hw (hw values are platform
    names or name:mode). speedup = first total / second total; causes, diff and advice explain first ->
    second (advice is re-estimated on the second variant); `speedups` has first / each for more values.
    """
    vary = dict(vary or {})
    if len(vary) != 1 or next(iter(vary)) not in VARY_KEYS:
        raise DlasimError(f"compare: vary exactly one of {', '.join(VARY_KEYS)}, got {list(vary) or 'nothing'}")
    key, values = next(iter(vary.items()))
    values = list(values)
    if len(values) < 2:
        raise DlasimError(f"compare: give at least two values for {key}")
    base = _setup(model, hw, opts)
    cfgs = [_Config(base.graph, hardware(v), base.opts) if key == "hw" else
            _Config(base.graph, base.hw, {**base.opts, key: int(v) if key == "batch" else v}) for v in values]
    labels = [_label(key, v) for v in values]
    ests = [c.estimate(label=lab) for c, lab in zip(cfgs, labels)]
    ideal = ideal_speedup(key, values[0], values[1], cfgs[0].hw, cfgs[0].opts, cfgs[1].hw)
    ctx1, ctx2 = (_Ctx.of(c.graph, c.hw, c.opts) for c in cfgs[:2])
    e1, e2 = ests[:2]
    groups = match_steps(e1.steps, e2.steps)
    gap = gap_by_cause(groups, ctx1, ctx2, ideal)
    total_gap = e2.total_ms - e1.total_ms / ideal
    am1, am2 = amounts(e1.steps, ctx1), amounts(e2.steps, ctx2)
    shown = [_shown(key, lab) for lab in labels[:2]]
    causes = [_cause(code, ms, total_gap, _compare_text(code, ms, am1.get(code, 0.0), am2.get(code, 0.0), shown,
                                                        e2.total_ms, _examples(e2.steps, ctx2, code), ideal))
              for code, ms in gap.items()]
    causes = _ranked(causes, total_gap, 0.005)
    codes = [c["code"] for c in causes]
    found = advise(cfgs[1], e2, codes, skip=("batch",) if key == "batch" else ())
    advice = _speedup_after(found, cfgs[0], e1, codes, ideal)
    return CompareResult(key, labels, ests, e1.total_ms / e2.total_ms, ideal, causes, step_diff(groups), advice,
                         [e1.total_ms / e.total_ms for e in ests])


# ---- explain ----------------------------------------------------------------------------------------


@dataclass
class ExplainResult:
    estimate: Estimate
    ideal_ms: float
    ideal_basis: str
    causes: list[dict]
    advice: list[dict]

    @property
    def total_ms(self) -> float:
        return self.estimate.total_ms

    def to_dict(self) -> dict:
        e = self.estimate
        return {"model": e.model, "hardware": e.hardware, "device": e.device, "precision": e.precision,
                "batch": e.batch, "sparsity": e.sparsity, "total_ms": e.total_ms, "ideal_ms": self.ideal_ms,
                "ideal_basis": self.ideal_basis, "gap_ms": e.total_ms - self.ideal_ms, "causes": self.causes,
                "advice": self.advice, "estimate": e.to_dict()}

    def render(self, top: int = 8) -> str:
        e = self.estimate
        lines = [f"{e.model} on {e.hardware}  device={e.device} precision={e.precision} batch={e.batch}"
                 + (f" sparsity={e.sparsity}" if e.sparsity != "disable" else ""),
                 f"predicted {e.total_ms:.4f} ms   ideal {self.ideal_ms:.4f} ms ({self.ideal_basis})",
                 f"DLA subgraphs: {e.dla_subgraphs}   transitions: {e.transitions}   GPU fallback layers: "
                 f"{len(e.fallback)}",
                 "where the time above ideal goes:"]
        lines += [f"  {c['code']:<22} {c['ms']:9.4f} ms {c['share']:6.0%}  {c['text']}" for c in self.causes[:top]]
        if len(self.causes) > top:
            rest = sum(c["ms"] for c in self.causes[top:])
            lines.append(f"  {'(the rest)':<22} {rest:9.4f} ms")
        lines += _advice_lines(self.advice)
        return "\n".join(lines)


def _explain_text(code: str, ms: float, steps_ms: float, total: float, examples: str) -> str:
    if code in OUTCOME_CODES:
        text = f"{WHAT[code]} take {steps_ms:.3f} ms ({steps_ms / total:.0%} of the total), {ms:+.3f} ms against " \
               f"the ideal{examples}"
    else:
        text = f"{WHAT[code]}: {ms:.3f} ms ({ms / total:.0%} of the total){examples}"
    return text + (f"; {WHY[code]}" if WHY.get(code) else "")


def explain(model, hw="xavier-agx", **opts) -> ExplainResult:
    """One configuration: the waterfall from the ideal (all MACs at one DLA core's or the GPU's peak in the
    requested precision, doubled for 2:4) to the prediction, split into causes, plus re-estimated advice.
    The cause entries sum to predicted - ideal."""
    cfg = _setup(model, hw, opts)
    e = cfg.estimate()
    ctx = _Ctx.of(cfg.graph, cfg.hw, cfg.opts)
    ideal = ctx.ideal_ms(e.macs)
    parts = totals_by_cause(e.steps, ctx)
    parts["other"] = parts.pop("ideal", 0.0) - ideal
    gap = e.total_ms - ideal
    shown = amounts(e.steps, ctx)
    causes = [_cause(code, ms, gap, _explain_text(code, ms, shown.get(code, ms), e.total_ms,
                                                  _examples(e.steps, ctx, code)))
              for code, ms in parts.items()]
    causes = _ranked(causes, gap, 0.001)
    where = "one DLA core" if ctx.device == "dla" else "the GPU"
    basis = (f"{_si(e.macs)} MACs at {_si(ctx.peak * (2 if ctx.sparse else 1))} MAC/s, {where}, "
             f"{ctx.precision.upper()}" + (", 2:4 sparse" if ctx.sparse else ""))
    return ExplainResult(e, ideal, basis, causes, [a[0] for a in advise(cfg, e, [c["code"] for c in causes])])
