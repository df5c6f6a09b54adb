"""Recovery advice: changes to the network or the build options, each re-estimated through `dlasim.estimate`.

classify.py and gap.py attribute a configuration's time to cause codes and hand the advisors here what they
need (`Findings`); each advisor proposes `Change`s (a rewritten copy of the network and/or other options), every
change is re-estimated and only those that predict a gain are offered.

Rules and recipes (../shared/reference):
- native I/O formats remove the boundary reformats (dla.md s3.4 "I/O formats on DLA"; DLA-SW FAQ item 3);
  an image input of <= 4 channels whose first layer is a convolution may be DLA_HWC4 (s3.4);
- rewrites that keep fallback layers on the DLA (dla.md s4.1 operator support and reconstruction recipes,
  hardware_specs/rules/rewrites.toml): Mish -> ReLU (seed 002), MatMul with a constant second operand = 1x1 conv,
  Group/InstanceNormalization -> BatchNormalization, GlobalAveragePool -> AveragePool (kernel <= the pooling
  window, jetson_dla_tutorial), a large stride-1 MaxPool -> cascaded 5x5 pools (SPPF identity);
- fewer DLA islands also bring back layers that ran on the GPU only because a core holds at most 16 loadables
  (dla.md s3.1 "Loadables per core"; passes/partition.py); the advice says so when the re-estimate shows it;
- a tiny network is dominated by DLA launch and copies and may be faster on the GPU (seed 003; dla.md s3.4
  "overhead due to small workloads");
- 2:4 sparse kernels pay only on wide layers: channels rounded to multiples of 128 and >= 256
  (gpu_tensorrt.md s2.3 items 1-2, seed 001);
- fixed costs and partly empty waves amortise over a larger batch (gpu_tensorrt.md s5.1, s5.3; dla.md s3.4);
- SiLU on the DLA is a LUT pass plus an element-wise pass that reads x back (dla.md s1.3); ReLU fuses into the
  convolution's SDP pass (s6.1), so replacing it (a retrained network) is re-estimated as an option;
- FP16 weights that stream through the CBUF one kernel group at a time stall the MAC array (cost/dla.py
  conv_traffic); INT8 weights are half the size, so the groups double-buffer (dla.md s1.2, s1.4, s3.3).
"""
from __future__ import annotations

from .. import ops, rules
from ..build_options import io_formats
from ..errors import DlasimError
from ..hardware import Platform
from ..ir import Graph, Layer
from ..passes.reformat import native_format
from ..plan import FallbackKind
from ..report import Estimate
from .advice_qdq import advise_qdq
from .config import FIXED_KINDS, Change, Config, Findings
from .rewrites import (avgpool_for_global, batchnorm_for_norms, cascade_maxpool, constant_matmul, relu_for_mish,
                       relu_for_silu, silu_pairs, sparse_width, widen_channels)
from .texts import listed, si

# ---- advisors: (config, its estimate, findings) -> proposed changes ----------------------------------------


def _resolve(g: Graph, t: str) -> str:
    """The tensor a network output aliases after no-op folding (passes/fold.py)."""
    while True:
        l = g.producer(t)
        data = g.data_inputs(l) if l is not None else []
        same = len(data) == 1 and data[0].shape == g.tensors[t].shape
        if l is None or len(data) != 1 or not (l.op in ops.FOLDABLE or (same and l.op in ops.RESHAPES)):
            return t
        t = data[0].name


def advise_io_formats(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """Native DLA/GPU I/O formats remove the boundary reformats (dla.md s3.4 "I/O formats on DLA")."""
    if "reformat" not in found.codes[:3]:
        return []
    copies = {}
    for r in est.steps:
        if r.kind == "reformat" and r.copy is not None:
            copies.setdefault(r.copy.tensor, (":".join(r.copy.src), ":".join(r.copy.dst)))
    g = cfg.graph
    have_in = io_formats(cfg.opts.get("input_formats"), "--inputIOFormats") or [("fp32", "linear")]
    have_out = io_formats(cfg.opts.get("output_formats"), "--outputIOFormats") or [("fp32", "linear")]
    ins, outs = [], []
    for i, t in enumerate(g.inputs):
        fmt = copies[t][1] if t in copies else ":".join(have_in[min(i, len(have_in) - 1)])
        shape = g.tensors[t].shape
        prec, _, layout = fmt.partition(":")
        if t in copies and est.device == "dla" and len(shape) == 4 and shape[1] <= 4:
            fmt = prec + ":dla_hwc4"                         # image input: first layer a conv (dla.md s3.4)
        elif layout in rules.RULES.formats.internal:         # no I/O format names it (formats.toml): the
            fmt = f"{prec}:{native_format('gpu', prec)}"     # native one, which the kernels read as given
        ins.append(fmt)
    for i, t in enumerate(g.outputs):
        src = copies.get(_resolve(g, t))
        outs.append(src[0] if src else ":".join(have_out[min(i, len(have_out) - 1)]))
    if not any(t in copies for t in g.inputs) and not any(_resolve(g, t) in copies for t in g.outputs):
        return []
    i, o = ",".join(ins), ",".join(outs)
    return [Change("io_formats", f"give the engine its native I/O formats (--inputIOFormats={i} "
                   f"--outputIOFormats={o}) so no reformat runs at the engine boundary; produce and consume "
                   f"these formats in pre/post-processing", opts={"input_formats": i, "output_formats": o})]


def advise_gpu(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """A tiny network on the DLA is dominated by launch and copies (seed 003), and a DLA split into islands
    by fallback pays hand-overs (seed 002): the GPU alone may be faster."""
    if est.device != "dla" or cfg.hw.gpu is None:
        return []
    kinds = est.by_kind()
    fixed = sum(kinds.get(k, 0.0) for k in FIXED_KINDS)
    launch_bound = fixed >= max(found.ideal_ms, 0.5 * est.total_ms)
    if launch_bound and est.dla_subgraphs <= 1:
        text = (f"the network is tiny ({si(est.macs)} MACs, {found.ideal_ms:.3f} ms at the DLA's peak) and DLA "
                f"launch and copies take {fixed:.3f} ms of {est.total_ms:.3f} ms: run it on the GPU")
    elif launch_bound:
        # not a small network: fallback cut it into DLA subgraphs whose launches and hand-overs dominate
        text = (f"DLA launches and copies take {fixed:.3f} ms of {est.total_ms:.3f} ms ({si(est.macs)} MACs, "
                f"{found.ideal_ms:.3f} ms at the DLA's peak): {len(est.fallback)} layers fall back, splitting the "
                f"DLA work into {est.dla_subgraphs} DLA subgraphs with {est.transitions} GPU<->DLA hand-overs: "
                f"run it on the GPU")
    elif {"fallback", "transition"} & set(found.codes[:3]) and est.fallback:
        text = (f"{len(est.fallback)} layers fall back, splitting the DLA work into {est.dla_subgraphs} loadables "
                f"with {est.transitions} GPU<->DLA hand-overs ({kinds.get('transition', 0.0):.3f} ms): run the "
                f"whole network on the GPU if it has the time to spare")
    else:
        return []
    return [Change("run_on_gpu", text, opts={"device": "gpu"})]


def _fallback_layers(est: Estimate, g: Graph, op_types: set[str]) -> list[Layer]:
    names = {f.name for f in est.fallback if f.op in op_types}
    return [l for l in g.layers if l.name in names]


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
        k, s, p, _ = ops.conv_params(l.attributes)
        if k[0] == k[1] > hw.dla.support.pool_window_max and (k[0] - 1) % 4 == 0 and s == (1, 1) \
                and set(p) == {k[0] // 2}:
            out.append(l.name)
    return out


# (change, which fallback layers it applies to, rewrite(graph, names), what to do): dla.md s4.1 recipes,
# hardware_specs/rules/rewrites.toml, seeds 002 and 003
DLA_REWRITES = (
    ("mish_to_relu", _pick_mish, lambda g, names: relu_for_mish(g),
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


def advise_dla_rewrites(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
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
        texts.append(text.format(names=listed(names)))
        out.append(Change(change, texts[-1], graph=g))
    if len(out) > 1:
        out.append(Change("dla_rewrites", "apply these rewrites together: " + "; ".join(texts), graph=together))
    return out


def advise_dla_silu(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """SiLU (x * sigmoid(x)) that runs on the DLA takes a LUT pass and an element-wise pass with x read back
    from memory (cost/dla.py _sdp_cost; dla.md s1.3); ReLU runs in the convolution's own SDP pass (s6.1 fusion).
    Proposed for the SiLUs whose Mul is on the DLA; the re-estimate says what it buys (a retrained network:
    the activation changes the function, as Mish -> ReLU does)."""
    if est.device != "dla":
        return []
    on_dla = {n for r in est.steps if r.kind == "layer" and r.device == "dla" for n in r.layers}
    muls = [mul for _, mul in silu_pairs(cfg.graph) if mul in on_dla]
    if not muls:
        return []
    return [Change("silu_to_relu", f"replace the {len(muls)} SiLU activations on the DLA (x * sigmoid(x): a LUT "
                   f"and an element-wise pass each, e.g. {listed(muls, 3)}) with ReLU, which runs inside the "
                   f"convolution's SDP pass (a retrained network)",
                   graph=relu_for_silu(cfg.graph, set(muls)))]


def advise_channels(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """2:4 kernels need wide layers (gpu_tensorrt.md s2.3; seed 001: C, K >= 256 and multiples of 128)."""
    bad = [(name, c, k) for name, c, k in found.kept_dense if c != sparse_width(c) or k != sparse_width(k)]
    if not bad:
        return []
    names = listed([f"{name} ({c}->{k})" for name, c, k in bad], 6)
    out = []
    cheap = lambda c: sparse_width(c) if sparse_width(c) <= 1.5 * c else c      # noqa: E731
    for what, width in (("round conv channels up", sparse_width),
                        ("round up the channels where that costs <= 1.5x the MACs", cheap)):
        g = widen_channels(cfg.graph, width)
        if g is not None and g.macs != cfg.graph.macs:
            out.append(Change("round_channels", f"{what} to multiples of 128 and >= 256 (e.g. 288 -> 384) so 2:4 "
                              f"sparse tiles fill; layers whose channel counts keep sparsity from paying: {names}",
                              graph=g))
    return out


def advise_int8_weights(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """FP16 DLA convs whose weight fetches stall the MAC array: INT8 halves the weights (cost/dla.py)."""
    if est.device != "dla" or est.precision != "fp16" or "cbuf_refetch" not in found.codes[:3]:
        return []
    stalled = [r.name for r in est.steps if r.parts.weight_stall_s > 0]
    if not stalled:
        return []
    return [Change("int8_weights", f"run in INT8 (calibration or QAT scales): the FP16 weights of {listed(stalled)} "
                   f"stream through the CBUF one kernel group at a time and the MAC array waits for each fetch; "
                   f"INT8 weights are half the size, so the next group loads while the current one computes",
                   opts={"precision": "int8"})]


def advise_batch(cfg: Config, est: Estimate, found: Findings) -> list[Change]:
    """Fixed costs and partly empty waves amortise over a larger batch (gpu_tensorrt.md s5.3, dla.md s3.4)."""
    return [Change("batch", f"raise the batch to {est.batch * m}", opts={"batch": est.batch * m}, per_image=True)
            for m in (2, 4)]


ADVISORS = (advise_io_formats, advise_dla_rewrites, advise_dla_silu, advise_gpu, advise_channels, advise_int8_weights,
            advise_qdq, advise_batch)


# ---- evaluation: re-estimate each change, keep the ones that pay -----------------------------------------


def changes(cfg: Config, est: Estimate, found: Findings, skip=()) -> list[Change]:
    return [ch for make in ADVISORS for ch in make(cfg, est, found) if ch.change not in skip]


def _loadable_note(cfg: Config, base: Estimate, e: Estimate) -> str:
    """'; all N layers that ran on the GPU only because ... go back to the DLA (...)' when the change brings
    back to the DLA layers that the per-core loadable limit had sent to the GPU (dla.md s3.1; the fallback
    reason of passes/partition.py), else ''."""
    limited = {f.name for f in base.fallback if f.kind is FallbackKind.LOADABLE_LIMIT}
    on_dla = {n for r in e.steps if r.kind == "layer" and r.device == "dla" for n in r.layers}
    back = len(limited & on_dla)
    if not back:
        return ""
    how_many = "all" if back == len(limited) else f"{back} of the"
    return (f"; {how_many} {len(limited)} layers that ran on the GPU only because a DLA core holds at most "
            f"{cfg.hw.dla.support.max_loadables_per_core} loadables go back to the DLA (DLA loadables "
            f"{base.dla_subgraphs} -> {e.dla_subgraphs}, GPU<->DLA transitions {base.transitions} -> "
            f"{e.transitions})")


def _evaluate(ch: Change, cfg: Config, base: Estimate) -> tuple[dict, Change, Estimate] | None:
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
    text += _loadable_note(cfg, base, e)
    return {"change": ch.change, "text": text, "predicted_ms": pred, "gain_ms": gain,
            "gain_pct": 100.0 * gain / base.total_ms}, ch, e


def advise(cfg: Config, est: Estimate, found: Findings, skip=()) -> list[tuple[dict, Change, Estimate]]:
    """Recovery advice, each re-estimated: (item, change, new estimate) per change id (its best variant),
    largest gain first."""
    best: dict[str, tuple] = {}
    for ch in changes(cfg, est, found, skip):
        res = _evaluate(ch, cfg, est)
        if res and (ch.change not in best or res[0]["gain_ms"] > best[ch.change][0]["gain_ms"]):
            best[ch.change] = res
    return sorted(best.values(), key=lambda b: -b[0]["gain_ms"])


def _twin(ch: Change, firsts: list[Change]) -> Change | None:
    """The first variant's version of a change: same id (same batch for batch changes); a pure network
    rewrite applies as is."""
    same = [c for c in firsts if c.change == ch.change and (ch.change != "batch" or c.opts == ch.opts)]
    return same[0] if same else (ch if not ch.opts else None)


def speedup_after(advised, cfg1: Config, e1: Estimate, found1: Findings, ideal: float) -> list[dict]:
    """Compare advice: each advised change of the second variant applied to the first one too, and the
    speedup first -> second it would leave."""
    firsts = changes(cfg1, e1, found1)
    items = []
    for item, ch, e2 in advised:
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
