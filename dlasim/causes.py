"""Explain and compare: why a speedup falls short of the naive expectation, split into cause codes.

- `compare(model, hw, vary)` estimates one model under each value of one option (precision, sparsity,
  device, batch, hw) and splits the gap between the naive speedup (peak MAC-rate ratio, 2x for 2:4, b1/b2
  for batch) and the predicted one into the stable cause codes of docs/DESIGN.md ("Cause vocabulary"), with a
  per-step diff of the two variants (steps matched by the original layers they cover).
- `explain(model, hw)` splits one configuration's time into a waterfall from the ideal (all MACs at the
  peak of one DLA core or the GPU) to the prediction, in the same codes.
- Both end with recovery advice from advice.py (rewrites and option changes, each re-estimated), which gets
  the attribution's `Findings`; this module imports advice.py, never the other way.

Sources (../shared/reference): dla.md s1.2 (MAC atoms: channel padding; peak = atomic C x K x clock), s1.5
(CBUF refetch), s3.1 (one network per DLA core, FP16/INT8 only), s3.4 (fallback, subgraphs, reformats and
hand-overs); gpu_tensorrt.md s1.1 (GPU peaks), s2.1/s2.3 (2:4 rules; why sparsity often gives no speedup),
s3.1 (reformats), s5.1 (launch overhead), s5.3 (tile and wave quantization, tensor-core channel alignment);
seeds 000-003 (the user reports these answer).
"""
from __future__ import annotations

import csv
import io
import math
from collections import Counter
from dataclasses import dataclass, field, replace

from .advice import COPY_NAME, FIXED_KINDS, Config, Findings, advise, listed, si, speedup_after
from .cost.geometry import ConvShape, conv_shape
from .cost.gpu import padded_channels
from .errors import DlasimError
from .hardware import Platform, hardware
from .ir import Graph
from .ops import MAC_OPS
from .report import Estimate, StepRow, throughput_qps

VARY_KEYS = ("precision", "sparsity", "device", "batch", "hw", "model")
VARIED_ADVICE = {"batch": ("batch",), "precision": ("int8_weights",)}   # advice that would change the varied key
OUTCOME_CODES = ("fallback", "precision_unsupported", "sparse_too_small", "sparse_ineligible")  # whole steps
SPARSE_CODES = ("sparse_too_small", "sparse_ineligible")
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


@dataclass(frozen=True)
class Expectation:
    """One configuration's naive expectation: every MAC at the device's peak (doubled when 2:4 is asked)."""
    graph: Graph
    device: str
    precision: str               # what the device runs for the requested precision
    sparse: bool
    peak: float                  # dense MAC/s

    @classmethod
    def of(cls, cfg: Config) -> "Expectation":
        dev, prec = cfg.opts["device"], cfg.opts["precision"]
        return cls(cfg.graph, dev, run_precision(cfg.hw, dev, prec), cfg.opts["sparsity"] != "disable",
                   peak_macs_per_s(cfg.hw, dev, prec))

    @property
    def rate(self) -> float:
        """The expected MAC/s: the dense peak, doubled for 2:4."""
        return self.peak * (2.0 if self.sparse else 1.0)

    def ideal_ms(self, macs: int) -> float:
        return macs / self.rate * 1e3


def ideal_speedup(key: str, a, b, ctx1: Expectation, ctx2: Expectation) -> float:
    """Naive speedup from value a to b: the ratio of the expected MAC rates (peaks; 2x for 2:4), b1/b2 for
    the batch (a time is that of the whole batch)."""
    if key == "batch":
        return a / b
    if key == "model":          # two networks: the ratio of their MACs at the expected rates
        return ctx2.rate / ctx1.rate * ctx1.graph.macs / max(ctx2.graph.macs, 1)
    return ctx2.rate / ctx1.rate


# ---- one step's time, split into the ideal and the causes -------------------------------------------


def outcome(row: StepRow, ctx: Expectation) -> str | None:
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


def step_parts(row: StepRow, ctx: Expectation) -> dict[str, float]:
    """A step's time (ms) as {"ideal": ..., cause code: ..., "other": ...}, each from its own mechanism.

    Layer steps: time = max(compute, memory, floor) + overhead (cost/__init__.finish), and each term is split
    by the cost record's own parts:
    - ideal: the step's MACs at the expected rate; sparse_* the 2:4 rate not obtained (dense at the expected
      precision minus the ideal); precision_unsupported the dense ideal at the precision the step runs minus
      the one expected (peaks, dla.md s1.2, gpu_tensorrt.md s1.1);
    - compute above the run ideal: DLA padding_s (channel padding, dla.md s1.2), weight_stall_s (CBUF refetch,
      s1.5), rate_loss_s (MAC efficiency, depthwise/SDP rates); GPU tile, wave and K efficiencies, channel
      alignment and the kernel rate (rate_eff) as factors of compute / ideal (gpu_tensorrt.md s5.3), split in
      proportion to their logarithms;
    - memory above compute: refetch_s (cbuf_refetch), float_io_s (the FP16/FP32 output and residual bytes of
      an INT8 layer no Q follows, precision_unsupported, passes/qdq.py), the rest of the DRAM time
      memory_bound; floor and overhead: overhead, and so is a GPU kernel's fixed ramp/tail (ramp_s inside
      compute, stream_ramp_s inside a GEMV's memory time; cost/gpu.py tensor_latency_s).
    "other" is what these parts leave unexplained (time minus their sum): not forced to zero, so a cost
    term the split does not know shows up there (tests check it stays small).
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
    used = state == "used"
    dense_exp = row.macs / ctx.peak * 1e3                  # dense, at the expected precision's peak
    if ctx.sparse and row.macs and not used:
        out["sparse_too_small" if state == "too_small" else "sparse_ineligible"] = dense_exp - ideal
    dense_run = p["ideal_s"] * 1e3 if "ideal_s" in p else dense_exp
    if row.precision != ctx.precision and row.macs:
        out["precision_unsupported"] = (dense_run - dense_exp) / (2 if used else 1)
    run = dense_run / 2 if used else dense_run
    for code, ms in _compute_losses(row, ctx, run).items():
        out[code] = out.get(code, 0.0) + ms
    excess = max(0.0, row.memory_ms - row.compute_ms)
    refetch = min(p.get("refetch_s", 0.0) * 1e3, excess)
    wide = min(p.get("float_io_s", 0.0) * 1e3, excess - refetch)
    out["cbuf_refetch"] = out.get("cbuf_refetch", 0.0) + refetch
    if wide:
        out["precision_unsupported"] = out.get("precision_unsupported", 0.0) + wide
    stream_ramp = min(p.get("stream_ramp_s", 0.0) * 1e3, excess - refetch - wide)   # a GEMV's ramp (cost/gpu.py)
    out["memory_bound"] = excess - refetch - wide - stream_ramp
    out["overhead"] = out.get("overhead", 0.0) + row.overhead_ms + p.get("floor_s", 0.0) * 1e3 + stream_ramp
    out["other"] = t - sum(out.values())
    return out


def _compute_losses(row: StepRow, ctx: Expectation, run: float) -> dict[str, float]:
    """compute_ms - ideal at the run precision, by mechanism. DLA: padding_s, weight_stall_s, rate_loss_s.
    GPU implicit GEMM: compute / run = channel alignment / k_eff x 1 / tile_eff x 1 / wave_eff x 1 / rate_eff;
    each factor takes its share of the loss by its logarithm (the shares of log(compute / run), which is
    what they sum to only when the factors are the whole cost model). Other steps (no tiles): the whole
    compute above the run ideal is the kernel's rate below the peak, compute_bound."""
    loss = row.compute_ms - run
    p = row.parts
    if row.device == "dla":
        if "rate_loss_s" not in p:
            return {"compute_bound": loss}
        return {"channel_padding": p.get("padding_s", 0.0) * 1e3, "cbuf_refetch": p.get("weight_stall_s", 0.0) * 1e3,
                "compute_bound": p["rate_loss_s"] * 1e3}
    pre = "sparse_" if p.get("sparse") == "used" else ""
    if pre + "tile_eff" not in p or pre + "rate_eff" not in p or run <= 0 or row.compute_ms <= 0:
        return {"compute_bound": loss}
    ramp = p.get("ramp_s", 0.0) * 1e3          # the kernel's fixed ramp/tail inside compute: overhead
    body = row.compute_ms - ramp
    factors = {"channel_padding": _channel_align(row, ctx) / p.get(pre + "k_eff", 1.0),
               "tile_quantization": 1.0 / p[pre + "tile_eff"], "wave_quantization": 1.0 / p[pre + "wave_eff"],
               "compute_bound": 1.0 / p[pre + "rate_eff"]}
    total = math.log(body / run)
    out = {"overhead": ramp} if ramp else {}
    if abs(total) < 1e-12:
        return out
    out.update({k: (body - run) * math.log(f) / total for k, f in factors.items() if abs(f - 1.0) > 1e-12})
    return out


def _channel_align(row: StepRow, ctx: Expectation) -> float:
    """GEMM-K padding of the input channels to the tensor-core alignment (gpu_tensorrt.md s5.3)."""
    cs = _conv(row, ctx)
    if cs is None:
        return 1.0
    cg = cs.c // cs.groups
    return padded_channels(cg, row.precision) / cg if cg else 1.0


def _conv(row: StepRow, ctx: Expectation) -> ConvShape | None:
    """Geometry of the step's convolution-like layer (the first in graph order), if it has one."""
    layer = next((l for l in ctx.graph.layers if l.name in row.layers and l.op in MAC_OPS), None)
    try:
        return conv_shape(layer, ctx.graph) if layer else None
    except (KeyError, IndexError, TypeError):
        return None


def _channels(row: StepRow, ctx: Expectation) -> tuple[int, int] | None:
    """(C, K) of the step's convolution-like layer."""
    cs = _conv(row, ctx)
    return (cs.c, cs.k) if cs else None


# ---- matching steps across variants -----------------------------------------------------------------


def _keys(row: StepRow) -> list[str]:
    """What a step covers: its original layers, or the tensor a copy moves."""
    if row.kind == "layer":
        return [f"L:{n}" for n in row.layers] or [f"N:{row.name}"]
    m = COPY_NAME.match(row.name)
    return [f"C:{m.group(2)}:{m.group(1)}" if m else f"N:{row.name}"]


def match_steps(a: list[StepRow], b: list[StepRow]) -> list[tuple[list[StepRow], list[StepRow]]]:
    """Groups of steps of two estimates that cover the same original layers (or copy the same tensor): the
    connected components of steps linked through their keys (the variants may fuse differently), in the
    order of their first step."""
    rows = [(0, r) for r in a] + [(1, r) for r in b]
    parent = list(range(len(rows)))                   # union-find over row indices

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}                         # key -> first row holding it
    for i, (_, r) in enumerate(rows):
        for k in _keys(r):
            parent[find(i)] = find(first.setdefault(k, i))
    parts: dict[int, list[int]] = {}
    for i in range(len(rows)):
        parts.setdefault(find(i), []).append(i)
    parts = sorted(parts.values())                      # each part ascending; parts by their first row
    return [tuple([rows[i][1] for i in part if rows[i][0] == side] for side in (0, 1)) for part in parts]


# ---- causes --------------------------------------------------------------------------------------


def gap_by_cause(groups, ctx1: Expectation, ctx2: Expectation, ideal: float) -> dict[str, float]:
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
                    code = "other" if code == "ideal" else code       # the ideals differ only by rounding
                    gap[code] = gap.get(code, 0.0) + w * ms
    return gap


def totals_by_cause(rows: list[StepRow], ctx: Expectation) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        for code, ms in step_parts(r, ctx).items():
            out[code] = out.get(code, 0.0) + ms
    return out


def _examples(rows: list[StepRow], ctx: Expectation, code: str, n: int = 3) -> str:
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
    shaped = code in SPARSE_CODES + ("tile_quantization", "wave_quantization", "channel_padding")
    chans = [_channels(r, ctx) if shaped else None for r in hits]
    names = [(r.layers[0] if r.layers else r.name) + (f" ({ck[0]}->{ck[1]} ch)" if ck else "")
             for r, ck in zip(hits, chans)]
    text = f"; {len(hits)} step(s), e.g. {listed(names, n)}"
    if code in SPARSE_CODES:
        by_ch = Counter(f"{c}->{k}" for c, k in filter(None, chans))
        text += "; channels C->K: " + ", ".join(f"{ck} ({k})" for ck, k in by_ch.most_common(8))
    if code in ("fallback", "precision_unsupported") + SPARSE_CODES:
        why = Counter(r.parts.get("sparse_reason", "") if code in SPARSE_CODES else r.reason for r in hits)
        text += " (" + "; ".join(f"{w} ({k})" for w, k in why.most_common(3) if w) + ")"
    return text + (_wide_io(rows, ctx, n) if code == "precision_unsupported" else "")


def _wide_io(rows: list[StepRow], ctx: Expectation, n: int = 3) -> str:
    """INT8 layers that write (and read their fused residual in) FP16/FP32 because no Q follows them
    (passes/qdq.py rule 3): their extra DRAM time, the part of precision_unsupported they carry."""
    hits = [(step_parts(r, ctx).get("precision_unsupported", 0.0), r) for r in rows
            if r.kind == "layer" and r.parts.get("float_io_s") and outcome(r, ctx) is None]
    hits = sorted([h for h in hits if h[0] > 1e-9], key=lambda h: -h[0])
    if not hits:
        return ""
    ms = sum(h[0] for h in hits)
    why = "; ".join(f"{w} ({k})" for w, k in Counter(r.reason for _, r in hits).most_common(2))
    return (f"; {len(hits)} INT8 layer(s) write wider outputs / read wider residuals ({why}): {ms:.3f} ms of "
            f"DRAM time, e.g. {listed([r.layers[0] if r.layers else r.name for _, r in hits], n)}")


def amounts(rows: list[StepRow], ctx: Expectation) -> dict[str, float]:
    """Per code, what a reader expects to see: the time of the steps a whole-step cause covers (fallback,
    sparse, precision), otherwise the summed part (copies, launches, losses)."""
    out = totals_by_cause(rows, ctx)
    wide = sum(step_parts(r, ctx).get("precision_unsupported", 0.0) for r in rows
               if r.kind == "layer" and r.parts.get("float_io_s") and outcome(r, ctx) is None)
    for code in OUTCOME_CODES:
        out[code] = sum(r.time_ms for r in rows if outcome(r, ctx) == code)
    out["precision_unsupported"] += wide
    return out


def _cause(code: str, ms: float, gap: float, text: str) -> dict:
    return {"code": code, "ms": ms, "share": ms / gap if abs(gap) > 1e-12 else 0.0, "text": text}


def _ranked(causes: list[dict], gap: float, minor: float, unexplained: float = 0.0) -> list[dict]:
    """Largest first; entries under `minor` x |gap| and the unexplained rest (the "other" entry given)
    fold into one "other" entry (last) so the list still sums."""
    keep = [c for c in causes if abs(c["ms"]) >= minor * abs(gap) and abs(c["ms"]) > 1e-9 and c["code"] != "other"]
    rest = sum(c["ms"] for c in causes) - sum(c["ms"] for c in keep)
    if abs(rest) > 1e-9:
        keep.append(_cause("other", rest, gap, f"smaller causes together {rest - unexplained:.4f} ms, left "
                                               f"unexplained by the mechanisms {unexplained:.4f} ms"))
    return sorted(keep, key=lambda c: (c["code"] == "other", -c["ms"]))


def findings(ctx: Expectation, est: Estimate, codes: list[str]) -> Findings:
    """What advice.py needs from the attribution of one configuration's estimate."""
    dense = [(r.layers[0], *ck) for r in est.steps if outcome(r, ctx) in SPARSE_CODES and (ck := _channels(r, ctx))]
    return Findings(codes, ctx.ideal_ms(est.macs), dense)


# ---- compare ----------------------------------------------------------------------------------------


def _label(key: str, v) -> str:
    if key == "model":
        return str(v).removeprefix("zoo:") if isinstance(v, str) else getattr(v, "name", str(v))
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
    unexplained_ms: float = 0.0       # what the causes' own mechanisms leave of the gap

    def to_dict(self) -> dict:
        return {"vary": self.key,
                "variants": [{**e.to_dict(), "label": lab, "total_ms": e.total_ms}
                             for lab, e in zip(self.labels, self.variants)],
                "speedup": self.speedup, "ideal_speedup": self.ideal_speedup, "speedups": self.speedups,
                "gap_ms": self.gap_ms, "unexplained_ms": self.unexplained_ms, "causes": self.causes, "diff": self.diff, "advice": self.advice}

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
            lines.append(f"  {lab:<12} {e.total_ms:10.4f} ms {throughput_qps(e.batch, e.total_ms):10.1f} qps   ({kinds})")
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
    if code in FIXED_KINDS or abs(a1) > 1e-9:
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
    base = Config.load(model, hw, opts)
    cfgs = [replace(base, hw=hardware(v)) if key == "hw" else
            Config.load(v, hw, opts) if key == "model" else
            replace(base, opts={**base.opts, key: int(v) if key == "batch" else v}) for v in values]
    labels = [_label(key, v) for v in values]
    ests = [c.estimate(label=lab) for c, lab in zip(cfgs, labels)]
    ctx1, ctx2 = Expectation.of(cfgs[0]), Expectation.of(cfgs[1])
    ideal = ideal_speedup(key, values[0], values[1], ctx1, ctx2)
    e1, e2 = ests[:2]
    groups = match_steps(e1.steps, e2.steps)
    gap = gap_by_cause(groups, ctx1, ctx2, ideal)
    total_gap = e2.total_ms - e1.total_ms / ideal
    am1, am2 = amounts(e1.steps, ctx1), amounts(e2.steps, ctx2)
    shown = [_shown(key, lab) for lab in labels[:2]]
    causes = [_cause(code, ms, total_gap, _compare_text(code, ms, am1.get(code, 0.0), am2.get(code, 0.0), shown,
                                                        e2.total_ms, _examples(e2.steps, ctx2, code), ideal))
              for code, ms in gap.items()]
    unexplained = gap.get("other", 0.0)
    causes = _ranked(causes, total_gap, 0.005, unexplained)
    codes = [c["code"] for c in causes]
    advised = advise(cfgs[1], e2, findings(ctx2, e2, codes), skip=VARIED_ADVICE.get(key, ()))
    advice = speedup_after(advised, cfgs[0], e1, findings(ctx1, e1, codes), ideal)
    return CompareResult(key, labels, ests, e1.total_ms / e2.total_ms, ideal, causes, step_diff(groups), advice,
                         [e1.total_ms / e.total_ms for e in ests], unexplained)


# ---- explain ----------------------------------------------------------------------------------------


@dataclass
class ExplainResult:
    estimate: Estimate
    ideal_ms: float
    ideal_basis: str
    causes: list[dict]
    advice: list[dict]
    sparse_gains: list[dict] = field(default_factory=list)
    unexplained_ms: float = 0.0       # what the causes' own mechanisms leave of the gap (step_parts "other")

    @property
    def total_ms(self) -> float:
        return self.estimate.total_ms

    def to_dict(self) -> dict:
        e = self.estimate
        return {"model": e.model, "hardware": e.hardware, "device": e.device, "precision": e.precision,
                "batch": e.batch, "sparsity": e.sparsity, "total_ms": e.total_ms, "ideal_ms": self.ideal_ms,
                "ideal_basis": self.ideal_basis, "gap_ms": e.total_ms - self.ideal_ms,
                "unexplained_ms": self.unexplained_ms, "causes": self.causes,
                "sparse_gains": self.sparse_gains, "advice": self.advice, "estimate": e.to_dict()}

    def render(self, top: int = 8) -> str:
        e = self.estimate
        lines = [f"{e.model} on {e.hardware}  device={e.device} precision={e.precision} batch={e.batch}"
                 + (f" sparsity={e.sparsity}" if e.sparsity != "disable" else ""),
                 f"predicted {e.total_ms:.4f} ms ({throughput_qps(e.batch, e.total_ms):.1f} qps)   ideal "
                 f"{self.ideal_ms:.4f} ms ({self.ideal_basis})",
                 f"DLA subgraphs: {e.dla_subgraphs}   transitions: {e.transitions}   GPU fallback layers: "
                 f"{len(e.fallback)}",
                 "where the time above ideal goes:"]
        lines += [f"  {c['code']:<22} {c['ms']:9.4f} ms {c['share']:6.0%}  {c['text']}" for c in self.causes[:top]]
        if len(self.causes) > top:
            rest = sum(c["ms"] for c in self.causes[top:])
            lines.append(f"  {'(the rest)':<22} {rest:9.4f} ms")
        if self.sparse_gains:
            saved = sum(d["dense_ms"] - d["sparse_ms"] for d in self.sparse_gains)
            names = ", ".join(f"{d['name']} ({d['channels']} ch) {d['dense_ms']:.3f} -> {d['sparse_ms']:.3f} ms"
                              for d in self.sparse_gains[:top])
            lines.append(f"2:4 sparse weights: {len(self.sparse_gains)} layer(s) gain {saved:.3f} ms against dense, "
                         f"largest: {names}")
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
    cfg = Config.load(model, hw, opts)
    e = cfg.estimate()
    ctx = Expectation.of(cfg)
    ideal = ctx.ideal_ms(e.macs)
    parts = totals_by_cause(e.steps, ctx)
    unexplained = parts.pop("other", 0.0) + parts.pop("ideal", 0.0) - ideal
    parts["other"] = unexplained
    gap = e.total_ms - ideal
    shown = amounts(e.steps, ctx)
    causes = [_cause(code, ms, gap, _explain_text(code, ms, shown.get(code, ms), e.total_ms,
                                                  _examples(e.steps, ctx, code)))
              for code, ms in parts.items()]
    causes = _ranked(causes, gap, 0.001, unexplained)
    where = "one DLA core" if ctx.device == "dla" else "the GPU"
    basis = (f"{si(e.macs)} MACs at {si(ctx.rate)} MAC/s, {where}, {ctx.precision.upper()}"
             + (", 2:4 sparse" if ctx.sparse else ""))
    advised = advise(cfg, e, findings(ctx, e, [c["code"] for c in causes]))
    return ExplainResult(e, ideal, basis, causes, [item for item, _, _ in advised], sparse_gains(e.steps, ctx),
                         unexplained)


def sparse_gains(rows: list[StepRow], ctx: Expectation) -> list[dict]:
    """The steps that run 2:4 sparse weights, with their dense and sparse times (the cost models' dense_s and
    sparse_s), largest gain first."""
    out = []
    for r in rows:
        p = r.parts
        if p.get("sparse") == "used" and "dense_s" in p:
            ck = _channels(r, ctx)
            out.append({"name": r.layers[0] if r.layers else r.name, "channels": f"{ck[0]}->{ck[1]}" if ck else "?",
                        "dense_ms": p["dense_s"] * 1e3, "sparse_ms": p["sparse_s"] * 1e3})
    return sorted(out, key=lambda d: d["sparse_ms"] - d["dense_ms"])
