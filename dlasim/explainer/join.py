"""Measured profile rows joined to the predicted steps of a plan (explain --measured, calibrate).

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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .match import Union

if TYPE_CHECKING:          # annotations only: `dlasim explain` without --measured loads no trtexec reader
    from ..trtexec import MeasuredLayer


@dataclass
class MatchGroup:
    """Measured rows and predicted steps that describe the same work."""
    rows: list[int]                    # indices into the measured rows
    steps: list[int]                   # indices into plan.steps
    kind: str                          # "layer" | "dla_subgraph" | "dla_launch" | "dla_body" | "reformat"
    #                                    | "concat" | "noop" | "measured_only" | "predicted_only"
    name: str                          # the principal measured row (or the step when predicted only)
    measured_ms: float = 0.0



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
    uf = Union()
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

