"""Measured vs predicted, row by row: join a trtexec `--exportProfile` to a dlasim Plan.

`explain_measured(model, hw, profile)` (CLI: `dlasim explain MODEL --measured PROFILE`) builds the plan,
costs it, reads the profile and joins each measured row to the predicted steps it covers:

- a compute row covers the original layers in its name (`a + b`, `a || b`, `PWN(...)`,
  trtexec.split_layer_names) and matches the predicted steps holding any of them; rows and steps that
  share layers are joined transitively into one group (TensorRT and dlasim may fuse differently);
- a DLA subgraph row `{a,b,...}` covers the subgraph's layer steps and its launch. On Xavier TensorRT 7
  the DLA execution time is carried by the following "output reformatter" / "X from nvm" / next
  layer's "input reformatter" row (trtexec marks it `extra["carries_dla_time"]`; dla.md s3.4,
  validation/data/README.md), so that row joins the subgraph's group, and the group compares the
  predicted DLA layer steps + launch (+ the hand-over copies out of it) with the {..} row + the
  carrying row. `{ForeignNode[first...last]}` (TensorRT >= 8.5) carries its own time. With
  `split_dla=True` (calibration) the {..} row is matched to the launch step alone and the carrying
  row to the layer steps and hand-overs;
- reformat rows ("X to nvm", "X from nvm", "X copy finish", "L input reformatter N",
  "L output reformatter N", "Reformatting CopyNode for Input/Output Tensor N to L") match the
  predicted reformat/transition steps of the same tensor; those dlasim does not predict (layout
  changes between GPU tactics) stay unmatched; "X copy" rows (concat inputs TensorRT could not write
  in place) match the predicted Concat step;
- zero-time rows (NoOp reformats) match nothing and count as ok.

When the un-profiled GPU compute median is known (the trex metadata next to the profile, or the
`gpu_compute_ms` option) the rows are first corrected for the per-layer profiling overhead
(gpu_tensorrt.md s4.2, trtexec.corrected_rows). The cause of a deviation comes from the predicted
step(s): their bound and kind (overhead when the measured time is near the floor of its kernel class,
memory_bound, channel_padding, reformat, transition, ...), in the cause vocabulary of docs/DESIGN.md.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, replace

from .build_options import BuildOptions
from .errors import DlasimError
from .trtexec import MeasuredLayer, MeasuredProfile, abbreviate_name, corrected_rows, parse_profile

OK_BAND = 0.20          # |predicted / measured - 1| within this is "ok"
NEAR_FLOOR = 1.5        # measured time within this factor of its kernel class's floor + launch: "overhead"

CAUSE_TEXT = {
    "ok": "within 20% of the measurement",
    "unmatched": "no counterpart on the other side",
    "overhead": "fixed per-kernel / per-launch cost (kernel floor, launch, DLA programming)",
    "memory_bound": "bytes over the effective bandwidth set the predicted time",
    "compute_bound": "MACs over the effective peak set the predicted time",
    "channel_padding": "channels rounded up to the MAC atom / tile waste MACs",
    "cbuf_refetch": "weights or activations re-read because they do not fit the convolution buffer",
    "tile_quantization": "GPU CTA tiles partly empty",
    "wave_quantization": "GPU waves partly empty",
    "reformat": "format / precision copies",
    "transition": "GPU<->DLA hand-over and synchronisation",
    "fallback": "layer runs on the GPU because the DLA cannot",
}


# --------------------------------------------------------------------------------------------------
# Join

@dataclass
class MatchGroup:
    """Measured rows and predicted steps that describe the same work."""
    rows: list[int]                    # indices into the measured rows
    steps: list[int]                   # indices into plan.steps
    kind: str                          # "layer" | "dla_subgraph" | "dla_launch" | "dla_body" | "reformat"
    #                                    | "concat" | "noop" | "measured_only" | "predicted_only"
    name: str                          # the principal measured row (or the step when predicted only)
    measured_ms: float = 0.0


class _Union:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


class _PlanIndex:
    """Look-ups from names in a profile to the steps of a plan."""

    def __init__(self, plan, layer_map: dict | None = None):
        self.plan = plan
        self.graph = plan.graph
        self.layer_map = dict(layer_map or {})
        self.layer_step: dict[str, int] = {}
        self.producer: dict[str, int] = {}
        self.consumers: dict[str, list[int]] = {}
        self.copies: dict[str, list[int]] = {}         # tensor -> reformat / transition steps
        self.launch: dict[int, int] = {}               # subgraph -> launch step
        self.sub_steps: dict[int, list[int]] = {}      # subgraph -> DLA layer steps
        for i, s in enumerate(plan.steps):
            if s.kind in ("reformat", "transition"):
                if s.inputs:
                    self.copies.setdefault(s.inputs[0].name, []).append(i)
                continue
            if s.kind == "overhead":
                if s.subgraph >= 0:
                    self.launch[s.subgraph] = i
                continue
            for name in s.layers:
                self.layer_step.setdefault(name, i)
            for t in s.outputs:
                self.producer.setdefault(t.name, i)
            for t in s.inputs:
                self.consumers.setdefault(t.name, []).append(i)
            if s.device == "dla" and s.subgraph >= 0:
                self.sub_steps.setdefault(s.subgraph, []).append(i)

    def name(self, n: str) -> str:
        return self.layer_map.get(n, n)

    def steps_of(self, names) -> list[int]:
        out = []
        for n in names:
            i = self.layer_step.get(self.name(n))
            if i is not None and i not in out:
                out.append(i)
        return out

    def step_tensor(self, text: str) -> str | None:
        """A name from a profile (tensor or layer) -> the tensor that crosses steps, if any."""
        n = self.name(text)
        g = self.graph
        t = n if n in g.tensors else None
        if t is None and n in self.layer_step:
            step = self.plan.steps[self.layer_step[n]]
            return step.outputs[0].name if step.outputs else None
        if t is None:
            return None
        if t in self.producer or t in self.copies or t in self.consumers or t in g.inputs:
            return t
        layer = g.producer(t)                 # internal to a fused step (Caffe in-place names)
        if layer is not None and layer.name in self.layer_step:
            step = self.plan.steps[self.layer_step[layer.name]]
            return step.outputs[0].name if step.outputs else None
        return t

    def subgraphs_of(self, steps) -> list[int]:
        subs = []
        for i in steps:
            s = self.plan.steps[i]
            if s.device == "dla" and s.subgraph >= 0 and s.subgraph not in subs:
                subs.append(s.subgraph)
        return subs

    def sub_inputs(self, sub: int) -> list[str]:
        """Activations a DLA subgraph reads from outside, in order of first use."""
        inside = {t.name for i in self.sub_steps.get(sub, []) for t in self.plan.steps[i].outputs}
        out = []
        for i in self.sub_steps.get(sub, []):
            for t in self.plan.steps[i].inputs:
                if t.name not in inside and t.name not in out:
                    out.append(t.name)
        return out

    def sub_exits(self, sub: int) -> list[int]:
        """Copy steps (transitions / output reformats) of tensors the subgraph produces."""
        made = {t.name for i in self.sub_steps.get(sub, []) for t in self.plan.steps[i].outputs}
        return [j for t in made for j in self.copies.get(t, [])]

    def sub_entries(self, sub: int) -> list[int]:
        return [j for t in self.sub_inputs(sub) for j in self.copies.get(t, [])]

    def copies_into(self, consumer: int, index: int | None) -> list[int]:
        """Copy steps that feed input `index` (all inputs when None) of a layer step."""
        ins = self.plan.steps[consumer].inputs
        tensors = [t.name for t in ins] if index is None or index >= len(ins) else [ins[index].name]
        want = self.plan.steps[consumer].precision
        found = []
        for t in tensors:
            cands = self.copies.get(t, [])
            pick = [j for j in cands if self.plan.steps[j].precision == want] or cands
            found += [j for j in pick if j not in found]
        return found


def _is_brace(row: MeasuredLayer) -> bool:
    return bool(row.extra.get("brace_group") or row.extra.get("foreign_node"))



def _copies_into(ix, subs, tindex):
    """Predicted copy steps feeding DLA subgraphs `subs` (input `tindex` only, when the row names one)."""
    out = []
    for sub in subs:
        ins = ix.sub_inputs(sub)
        pick = ins if tindex is None or tindex >= len(ins) else [ins[tindex]]
        out += [j for t in pick for j in ix.copies.get(t, [])]
    return out

def _row_links(ix: _PlanIndex, rows: list[MeasuredLayer], k: int, split_dla: bool) -> tuple[list[int], str]:
    """Predicted steps one measured row covers, and the kind of match."""
    row = rows[k]
    role = row.extra.get("role")
    tindex = row.extra.get("tensor_index")
    names = row.layers
    if row.time_ms <= 0:
        return [], "noop"
    if row.extra.get("foreign_node"):                       # {ForeignNode[first...last]}: own time
        steps = ix.steps_of(names)
        subs = ix.subgraphs_of(steps)
        if role is None:
            out = [i for sub in subs for i in ix.sub_steps.get(sub, [])]
            out += [ix.launch[sub] for sub in subs if sub in ix.launch]
            return out, "dla_subgraph"
    if row.extra.get("brace_group"):
        steps = ix.steps_of(names)
        subs = ix.subgraphs_of(steps)
        if role == "copynode":
            role = "output_reformatter" if row.extra.get("direction") == "output" else "input_reformatter"
        if role is None:
            launch = [ix.launch[sub] for sub in subs if sub in ix.launch]
            if split_dla:
                return launch, "dla_launch"
            return steps + launch, "dla_subgraph"
        if role in ("input_reformatter", "input_finish"):
            return _copies_into(ix, subs, tindex), "reformat"
        if role in ("output_reformatter", "output_finish"):
            out = [j for sub in subs for j in ix.sub_exits(sub)]
            if row.extra.get("carries_dla_time"):
                out += [i for sub in subs for i in ix.sub_steps.get(sub, [])]
            return out, "reformat"
        return steps, "reformat"
    if role == "copynode":
        body = names
        steps = ix.steps_of(body)
        subs = ix.subgraphs_of(steps) if row.extra.get("foreign_node") else []
        if row.extra.get("direction") == "output":
            out = []
            for i in steps[:1]:
                outs = ix.plan.steps[i].outputs
                pick = outs if tindex is None or tindex >= len(outs) else [outs[tindex]]
                out += [j for t in pick for j in ix.copies.get(t.name, [])]
            return out, "reformat"
        if subs:
            return _copies_into(ix, subs, tindex), "reformat"
        return (ix.copies_into(steps[0], tindex) if steps else []), "reformat"
    if role in ("input_reformatter", "input_finish"):
        steps = ix.steps_of(names[:1])
        return (ix.copies_into(steps[0], tindex) if steps else []), "reformat"
    if role in ("output_reformatter", "output_finish"):
        steps = ix.steps_of(names)
        out = []
        for i in steps:
            for t in ix.plan.steps[i].outputs:
                out += [j for j in ix.copies.get(t.name, []) if j not in out]
        return out, "reformat"
    if role in ("to_nvm", "from_nvm", "copy_finish", "finish"):
        t = ix.step_tensor(names[0]) if names else None
        return (list(ix.copies.get(t, [])) if t else []), "reformat"
    if role == "copy":                                      # concat input copied into the output
        t = ix.step_tensor(names[0]) if names else None
        cons = [i for i in ix.consumers.get(t, []) if ix.plan.steps[i].op == "Concat"] if t else []
        return cons[:1], "concat"
    steps = ix.steps_of(names)
    return steps, "layer"


def join(plan, rows: list[MeasuredLayer], split_dla: bool = False, layer_map: dict | None = None
         ) -> list[MatchGroup]:
    """Group measured rows with the predicted steps of `plan` that describe the same work.

    Every measured row and every step ends in exactly one group; rows without a counterpart form
    "measured_only" (or "noop" for zero-time rows) groups, steps without one "predicted_only" groups.
    `layer_map` renames original layer names of the profile to the model's (e.g. ONNX node names to a
    zoo network's). Groups are in the order of their first measured row, predicted-only ones last.
    """
    ix = _PlanIndex(plan, layer_map)
    uf = _Union()
    kinds: dict[int, str] = {}
    linked: dict[int, list[int]] = {}
    for k in range(len(rows)):
        steps, kind = _row_links(ix, rows, k, split_dla)
        kinds[k] = kind
        linked[k] = steps
        uf.find(("r", k))
        for i in steps:
            uf.union(("r", k), ("s", i))
    # a row carrying a DLA subgraph's time joins the subgraph (in split mode: its layer steps)
    by_name = {r.name: k for k, r in enumerate(rows)}
    for k, row in enumerate(rows):
        carrier = row.extra.get("dla_time_row")
        if carrier is None or carrier not in by_name or row.time_ms <= 0:
            continue
        c = by_name[carrier]
        subs = ix.subgraphs_of(ix.steps_of(row.layers))
        body = [i for sub in subs for i in ix.sub_steps.get(sub, [])]
        body += [j for sub in subs for j in ix.sub_exits(sub)]
        if not split_dla:
            uf.union(("r", k), ("r", c))
        for i in body:
            uf.union(("r", c), ("s", i))
        linked[c] = sorted(set(linked[c]) | set(body))
        kinds[c] = "dla_body" if split_dla else "dla_subgraph"
    members: dict = {}
    for k in range(len(rows)):
        members.setdefault(uf.find(("r", k)), ([], []))[0].append(k)
    for i in range(len(plan.steps)):
        root = uf.find(("s", i))
        members.setdefault(root, ([], []))[1].append(i)
    groups = []
    for rws, sts in members.values():
        sts = sorted(sts)
        if rws:
            principal = _principal(rows, rws, kinds)
            if not sts:
                kind = "noop" if all(rows[k].time_ms <= 0 for k in rws) else "measured_only"
            else:
                order = ("dla_subgraph", "dla_body", "dla_launch", "layer", "concat", "reformat")
                kind = next((o for o in order if any(kinds[k] == o for k in rws)), "layer")
            groups.append(MatchGroup(sorted(rws), sts, kind, rows[principal].name,
                                     sum(rows[k].time_ms for k in rws)))
        else:
            for i in sts:
                groups.append(MatchGroup([], [i], "predicted_only", plan.steps[i].name, 0.0))
    groups.sort(key=lambda g: (0, g.rows[0]) if g.rows else (1, g.steps[0]))
    return groups


def _principal(rows, rws, kinds) -> int:
    """The row that names a group: the {..} subgraph row, else the longest-running row."""
    for k in rws:
        if kinds[k] in ("dla_subgraph", "dla_launch") and rows[k].extra.get("role") is None:
            return k
    return max(rws, key=lambda k: (rows[k].time_ms, -k))


# --------------------------------------------------------------------------------------------------
# Causes

def group_cause(plan, est_steps, group: MatchGroup, predicted_ms: float) -> tuple[str, str]:
    """(cause code, note) of one group's deviation, from its predicted steps' bound and kind."""
    meas = group.measured_ms
    if not group.steps:
        return ("ok", "zero-time row (NoOp)") if meas <= 0 else ("unmatched", "no predicted step")
    if not group.rows:
        return "unmatched", "predicted step with no measured row"
    if meas > 0 and predicted_ms > 0 and abs(predicted_ms / meas - 1) <= OK_BAND:
        return "ok", ""
    weights: dict[str, float] = {}
    for i in group.steps:
        s, row = plan.steps[i], est_steps[i]
        code = _step_cause(s, row, plan, meas if len(group.steps) == 1 else None)
        weights[code] = weights.get(code, 0.0) + max(row.time_ms, 1e-9)
    code = max(weights, key=weights.get)
    if group.kind == "concat" and predicted_ms == 0:
        return "memory_bound", "concat input copied (dlasim assumes the producer writes in place)"
    direction = "slower" if meas > predicted_ms else "faster"
    return code, f"measured {direction} than predicted; predicted time is {CAUSE_TEXT.get(code, code)}"


def _gpu_padding(step, plan) -> float:
    """Padded / real input channels of a GPU convolution (FP16 pads C to 8, INT8 to 32)."""
    from .cost.geometry import conv_shape
    from .cost.gpu import padded_channels
    if step.device != "gpu" or step.anchor is None:
        return 1.0
    try:
        cs = conv_shape(step.anchor, plan.graph)
    except (KeyError, IndexError, ValueError):
        return 1.0
    if cs is None or cs.groups > 1:
        return 1.0
    return padded_channels(cs.c, step.precision) / cs.c if cs.c else 1.0


def _step_cause(step, row, plan, measured_ms: float | None) -> str:
    plat = plan.platform
    if step.kind == "transition":
        return "transition"
    if step.kind == "reformat":
        return "reformat"
    if step.kind == "overhead":
        return "overhead"
    parts = row.parts or {}
    if step.device == "gpu" and plat.gpu is not None and measured_ms is not None:
        from .cost.gpu import step_kernel_floor
        floor_ms = (step_kernel_floor(step, plan.graph, plat.gpu) + plat.gpu.launch_overhead_s) * 1e3
        if measured_ms <= NEAR_FLOOR * floor_ms:
            return "overhead"
    if row.bound == "overhead":
        return "overhead"
    if row.bound == "memory":
        if parts.get("refetch_s", 0) > 0.2 * max(row.memory_ms, 1e-12) * 1e-3:
            return "cbuf_refetch"
        return "memory_bound"
    t = max(row.compute_ms * 1e-3, 1e-15)
    if parts.get("padding_s", 0) > 0.2 * t or parts.get("k_eff", 1.0) < 0.75 or _gpu_padding(step, plan) > 1.25:
        return "channel_padding"
    if parts.get("tile_eff", 1.0) < 0.75:
        return "tile_quantization"
    if parts.get("wave_eff", 1.0) < 0.75:
        return "wave_quantization"
    return "compute_bound"


# --------------------------------------------------------------------------------------------------
# Result

@dataclass
class MeasuredExplain:
    model: str
    hardware: str
    device: str
    precision: str
    batch: int
    source: str
    total_predicted_ms: float
    total_measured_ms: float
    matched_share: float
    rows: list[dict]
    causes: list[dict]
    correction: str = ""
    warnings: list[str] = field(default_factory=list)
    groups: list[MatchGroup] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return {"model": self.model, "hardware": self.hardware, "device": self.device,
                "precision": self.precision, "batch": self.batch, "measured": self.source,
                "total_predicted_ms": self.total_predicted_ms, "total_measured_ms": self.total_measured_ms,
                "matched_share": self.matched_share, "correction": self.correction,
                "rows": self.rows, "causes": self.causes, "warnings": self.warnings}

    def render(self, width: int = 64) -> str:
        lines = [f"{self.model} on {self.hardware}  device={self.device} precision={self.precision} "
                 f"batch={self.batch}", f"measured: {self.source}"]
        if self.correction:
            lines.append(f"measured rows corrected for per-layer profiling overhead: {self.correction}")
        hdr = f"{'measured row':<{width}} {'pred ms':>9} {'meas ms':>9} {'pred/meas':>9}  cause"
        lines += [hdr, "-" * len(hdr)]
        for r in self.rows:
            p, m = r["predicted_ms"], r["measured_ms"]
            ratio = f"{p / m:>9.2f}" if p is not None and m else f"{'-':>9}"
            name = abbreviate_name(r["name"], width)
            if r.get("measured_rows", 1) > 1:
                name = abbreviate_name(r["name"], width - 6) + f" (+{r['measured_rows'] - 1})"
            lines.append(f"{name:<{width}} {_fmt(p):>9} {_fmt(m):>9} {ratio}  {r['cause']}")
        lines.append("-" * len(hdr))
        lines.append(f"total: predicted {self.total_predicted_ms:.4f} ms, measured {self.total_measured_ms:.4f} ms"
                     f" ({self.total_predicted_ms / self.total_measured_ms:.2f}x); "
                     f"{100 * self.matched_share:.1f}% of measured time matched to predicted steps"
                     if self.total_measured_ms else "total: nothing measured")
        if self.causes:
            lines += ["", "largest deviations (measured - predicted):"]
            for c in self.causes:
                lines.append(f"  {c['code']:<18}{c['ms']:>+9.4f} ms {100 * c['share']:>6.1f}%  {c['text']}")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        return "\n".join(lines)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def measured_rows(profile, gpu_compute_ms: float | None = None) -> tuple[list[MeasuredLayer], str]:
    """Profile rows, corrected for the profiling overhead when the GPU compute median is known."""
    median = gpu_compute_ms
    if median is None and profile.summary:
        stats = profile.summary.get("gpu_compute_ms")
        median = stats.get("median") if isinstance(stats, dict) else None
    if median is None:
        return list(profile.rows), ""
    rows = corrected_rows(profile, gpu_compute_ms=median)
    how = next((r.extra.get("correction") for r in rows if r.extra.get("correction")), "")
    return rows, how


def load_profile(profile) -> MeasuredProfile:
    if isinstance(profile, MeasuredProfile):
        return profile
    return parse_profile(profile)


def profile_from_rows(rows: list[tuple[str, float]], source: str = "<rows>") -> MeasuredProfile:
    """A MeasuredProfile from (name, ms) pairs, parsed exactly like a trtexec --exportProfile file.

    For measurements published as tables (seed 000's per-step breakdown, the Orin GoogLeNet log).
    """
    data = [{"count": 1}] + [{"name": n, "timeMs": float(t), "averageMs": float(t), "percentage": 0.0}
                             for n, t in rows]
    fd, tmp = tempfile.mkstemp(suffix=".profile.json", prefix=".dlasim-rows-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        prof = parse_profile(tmp)
    finally:
        os.unlink(tmp)
    return replace(prof, source=source)


def explain_measured(model, hw="xavier-agx", profile_path=None, gpu_compute_ms: float | None = None,
                     layer_map: dict | None = None, split_dla: bool = False, plan=None,
                     options: BuildOptions | None = None, **kw) -> MeasuredExplain:
    """Predicted vs measured per profile row, the share of measured time matched, and the causes.

    The build options are dlasim.estimate's (`options` and keyword arguments; an unknown one is an error);
    `plan`, when given, is the Plan to compare and they are not used."""
    from .api import build
    from .simulate import estimate_plan
    opts = BuildOptions.of(options, **kw)
    if profile_path is None:
        raise DlasimError("explain --measured: give a trtexec --exportProfile JSON file")
    if plan is None:
        plan = build(model, hw, opts)
    est = estimate_plan(plan)
    profile = load_profile(profile_path)
    rows, how = measured_rows(profile, gpu_compute_ms)
    groups = join(plan, rows, split_dla=split_dla, layer_map=layer_map)
    return _assemble(plan, est, profile, rows, groups, how)


def matched_rows(groups) -> int:
    """How many measured rows joined a predicted step."""
    return len({r for g in groups if g.rows and g.steps for r in g.rows})


def require_match(groups, n_rows: int, source: str, model: str) -> str | None:
    """Stop when no measured row matches the model (the profile is of another network or its names differ);
    else a warning line when only some do, None when all do."""
    k = matched_rows(groups)
    if n_rows and k == 0:
        raise DlasimError(f"{source}: none of its {n_rows} measured rows matches a layer of {model}: the layer "
                          f"names differ; use the model the engine was built from")
    return f"{k} of {n_rows} measured rows match a predicted step" if k < n_rows else None


def _assemble(plan, est, profile, rows, groups, how) -> MeasuredExplain:
    partial = require_match(groups, len(rows), profile.source, est.model)
    out_rows, by_code = [], {}
    total_meas = sum(r.time_ms for r in rows)
    matched = 0.0
    for g in groups:
        pred = sum(est.steps[i].time_ms for i in g.steps) if g.steps else None
        meas = g.measured_ms if g.rows else None
        code, note = group_cause(plan, est.steps, g, pred or 0.0)
        if g.rows and g.steps:
            matched += g.measured_ms
        d = {"name": g.name, "predicted_ms": pred, "measured_ms": meas, "cause": code,
             "kind": g.kind, "steps": [plan.steps[i].name for i in g.steps]}
        if len(g.rows) > 1:
            d["measured_rows"] = len(g.rows)
            d["rows"] = [rows[k].name for k in g.rows]
        if note:
            d["note"] = note
        out_rows.append(d)
        if code == "ok":
            continue
        # unmatched measured reformats are TensorRT copies dlasim does not predict: cause "reformat"
        agg = code
        if code == "unmatched":
            kinds = {rows[k].kind for k in g.rows}
            agg = "reformat" if kinds & {"reformat"} else ("reformat" if any(
                plan.steps[i].kind in ("reformat", "transition") for i in g.steps) else "unmatched")
        c = by_code.setdefault(agg, {"ms": 0.0, "n": 0, "pred": 0.0, "meas": 0.0})
        c["ms"] += (meas or 0.0) - (pred or 0.0)
        c["n"] += 1
        c["pred"] += pred or 0.0
        c["meas"] += meas or 0.0
    causes = []
    for code, c in by_code.items():
        text = (f"{c['n']} row(s): measured {c['meas']:.4f} ms vs predicted {c['pred']:.4f} ms; "
                f"{CAUSE_TEXT.get(code, code)}")
        if code == "reformat" and c["pred"] == 0:
            text += " (TensorRT layout changes dlasim does not predict)"
        causes.append({"code": code, "ms": c["ms"], "share": abs(c["ms"]) / total_meas if total_meas else 0.0,
                       "text": text})
    causes.sort(key=lambda c: -abs(c["ms"]))
    warnings = list(profile.warnings) + ([partial] if partial else [])
    unmatched_pred = [g for g in groups if not g.rows and est.steps[g.steps[0]].time_ms > 0]
    if unmatched_pred:
        warnings.append(f"{len(unmatched_pred)} predicted step(s) have no measured row "
                        f"({sum(est.steps[g.steps[0]].time_ms for g in unmatched_pred):.4f} ms)")
    share = matched / total_meas if total_meas > 0 else 0.0
    if total_meas > 0 and share < 0.10:
        warnings.append("almost no measured row matches a predicted step: the profile's layer names differ from "
                        "the model's (e.g. ONNX node names vs a zoo network); use the model the engine was built "
                        "from, or pass layer_map= to dlasim.measured.explain_measured")
    return MeasuredExplain(model=est.model, hardware=est.hardware, device=est.device, precision=est.precision,
                           batch=est.batch, source=profile.source, total_predicted_ms=est.total_ms,
                           total_measured_ms=total_meas,
                           matched_share=matched / total_meas if total_meas > 0 else 0.0,
                           rows=out_rows, causes=causes, correction=how, warnings=warnings, groups=groups)
