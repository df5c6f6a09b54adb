"""`dlasim inspect`: per layer name, op, output shape, MACs, params; totals (docs/DESIGN.md JSON contract)."""
from __future__ import annotations

from .ir import Graph
from .report import _si, _short


def inspect_dict(g: Graph) -> dict:
    nodes = []
    for l in g.layers:
        nodes.append({"name": l.name, "op": l.op,
                      "inputs": [t for t in l.inputs if t and not g.tensors[t].const],
                      "output_shapes": [list(g.tensors[t].shape) for t in l.outputs],
                      "macs": g.layer_macs(l), "params": g.layer_params(l), "flags": l.flags})
    return {"model": g.name, "inputs": {t: list(g.tensors[t].shape) for t in g.inputs},
            "outputs": {t: list(g.tensors[t].shape) for t in g.outputs},
            "nodes": nodes, "macs": g.macs, "params": g.params}


def inspect_table(g: Graph) -> str:
    d = inspect_dict(g)
    hdr = f"{'layer':<44} {'op':<20} {'output shape':<22} {'MACs':>9} {'params':>9}"
    lines = [f"{g.name}: inputs " + ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in d["inputs"].items()),
             hdr, "-" * len(hdr)]
    for n in d["nodes"]:
        shape = "x".join(map(str, n["output_shapes"][0])) if n["output_shapes"] else ""
        flag = "  [" + ", ".join(n["flags"]) + "]" if n["flags"] else ""
        lines.append(f"{_short(n['name'], 44):<44} {n['op']:<20} {shape:<22} {_si(n['macs']):>9} "
                     f"{_si(n['params']):>9}{flag}")
    lines.append("-" * len(hdr))
    lines.append(f"{len(d['nodes'])} layers, {_si(d['macs'])} MACs ({d['macs']:,}), {_si(d['params'])} params")
    return "\n".join(lines)
