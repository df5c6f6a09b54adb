"""Estimate results: one row per step, totals, fallback list; JSON/CSV/table renderers, and the summary line and
HTML step table an Estimate shows in a REPL and a notebook.

The JSON shape is the contract in docs/DESIGN.md ("estimate prints one object"). Results hold only plain
data (no graph or platform objects), so they pickle and compare cheaply.
"""
from __future__ import annotations

import copy
import csv
import io
import json
import operator
from dataclasses import dataclass, field, fields

from .cost import CostParts
from .cost.peaks import DevicePeak
from .plan import Decision, Fallback
from .records import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class CopyRow:
    """A copy the build inserted at an engine or subgraph boundary (passes/reformat.py): the tensor it copies
    and its formats, each (precision, layout)."""
    tensor: str
    src: tuple[str, str]
    dst: tuple[str, str]


@fast_init
@dataclass(frozen=True, slots=True)
class ConvChannels:
    """The channels of a step's convolution-like anchor layer (its own: not the sum of a horizontal fusion):
    input C, output K, groups, and on the GPU the tensor-core alignment of the input channels per group,
    padded / real (cost/gpu.py padded_channels; 1 on the DLA)."""
    c: int
    k: int
    groups: int
    align: float = 1.0


@dataclass(slots=True)
class StepRow:
    name: str
    kind: str
    op: str
    device: str
    precision: str
    time_ms: float
    bound: str
    layers: list[str]
    macs: int = 0
    bytes: int = 0
    compute_ms: float = 0.0
    memory_ms: float = 0.0
    overhead_ms: float = 0.0
    subgraph: int = -1
    reason: str = ""
    parts: CostParts = field(default_factory=CostParts)     # the cost model's pieces, in seconds
    # what the explain layer reads besides the cost parts (simulate.py); not in the JSON
    copy: CopyRow | None = None          # reformat/transition steps at a boundary (not a Q/DQ left as a copy)
    conv: ConvChannels | None = None     # layer steps anchored by a Conv/ConvTranspose/Gemm/MatMul
    kernel_floor_ms: float = 0.0         # GPU layer steps: the floor of the kernel class plus the launch


NOT_IN_JSON = ("copy", "conv", "kernel_floor_ms")
_ROW_FIELDS = tuple(f.name for f in fields(StepRow) if f.name not in NOT_IN_JSON)
_row_values = operator.attrgetter(*_ROW_FIELDS)
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})     # copy.deepcopy returns these as they are


def _copied(value):
    """A row value copied as dataclasses.asdict copies the plain values rows hold: lists and dicts rebuilt,
    numbers and strings shared, anything else deep-copied."""
    if type(value) is list:
        return [_copied(v) for v in value]
    if type(value) is dict:
        return {_copied(k): _copied(v) for k, v in value.items()}
    return value if type(value) in _IMMUTABLE else copy.deepcopy(value)


def _row_dict(row: StepRow, parts: bool) -> dict:
    """asdict(row), "parts" as the record's fields that differ from their defaults (CostParts.to_dict), and
    without it unless asked; built directly, because asdict deep-copies every field through a generic path
    and took longer than the estimate itself."""
    d = dict(zip(_ROW_FIELDS, _row_values(row)))
    if parts:
        d["parts"] = row.parts.to_dict()
    else:
        del d["parts"]
    for name, value in d.items():
        if type(value) not in _IMMUTABLE:
            d[name] = _copied(value)
    return d


@dataclass
class Estimate:
    model: str
    hardware: str
    device: str
    precision: str
    batch: int
    sparsity: str
    total_ms: float
    steps: list[StepRow]
    fallback: list[Fallback]
    dla_subgraphs: int
    transitions: int
    macs: int = 0
    decisions: list[Decision] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    label: str = ""
    peaks: dict[str, DevicePeak] = field(default_factory=dict)    # "dla" / "gpu" -> its peaks (not in the JSON)

    def to_dict(self, parts: bool = False) -> dict:
        steps = [_row_dict(s, parts) for s in self.steps]
        return {"model": self.model, "hardware": self.hardware, "device": self.device,
                "precision": self.precision, "batch": self.batch, "sparsity": self.sparsity,
                "total_ms": self.total_ms, "throughput_qps": throughput_qps(self.batch, self.total_ms),
                "macs": self.macs, "steps": steps, "fallback": [f.to_dict() for f in self.fallback],
                "dla_subgraphs": self.dla_subgraphs, "transitions": self.transitions,
                "warnings": list(self.warnings), "label": self.label}

    @property
    def ok(self) -> bool:
        """True: an estimate_many slot holding a result (a failed slot holds a batch.Failed, ok False)."""
        return True

    def __repr__(self) -> str:          # one line (the generated one printed every step: 44 KB for ResNet-50)
        return summary(self)

    def _repr_html_(self) -> str:       # Jupyter: the step table
        return step_table_html(self)

    def by_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for s in self.steps:
            out[s.kind] = out.get(s.kind, 0.0) + s.time_ms
        return out


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, default=str)


def estimate_csv(e: Estimate) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["name", "kind", "op", "device", "precision", "time_ms", "share", "bound", "macs", "bytes",
                "subgraph", "layers", "reason"])
    for s in e.steps:
        w.writerow([s.name, s.kind, s.op, s.device, s.precision, f"{s.time_ms:.6f}",
                    f"{s.time_ms / e.total_ms:.4f}" if e.total_ms else "0", s.bound, s.macs, s.bytes,
                    s.subgraph, ";".join(s.layers), s.reason])
    return buf.getvalue()


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def _si(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f}{unit}"
    return f"{n:.0f}"


def throughput_qps(batch: int, total_ms: float) -> float:
    """Inferences (samples) per second when one batch runs at a time: batch / latency. trtexec's "Throughput"
    line counts the same with one stream and no overlap between inferences."""
    return batch * 1e3 / total_ms if total_ms > 0 else 0.0


def fallback_groups(fallback: list[Fallback]) -> list[tuple[str, list[Fallback]]]:
    """Fallback layers grouped by reason, the largest group first (ties: first seen first)."""
    groups: dict[str, list[Fallback]] = {}
    for f in fallback:
        groups.setdefault(f.reason, []).append(f)
    return sorted(groups.items(), key=lambda kv: -len(kv[1]))


def _names(items: list[Fallback], room: int) -> str:
    """As many layer names as fit in `room` columns, then ', ... N more'."""
    out = ""
    for i, f in enumerate(items):
        piece = ", " + f.name if out else _short(f.name, room)
        rest = len(items) - i - 1
        if out and len(out) + len(piece) + (len(f", ... {rest} more") if rest else 0) > room:
            return out + f", ... {len(items) - i} more"
        out += piece
    return out


def fallback_lines(fallback: list[Fallback], width: int = 100, groups: int = 8) -> list[str]:
    """The GPU fallback list grouped by reason, with counts, the ops and example names, within `width`."""
    import textwrap
    lines = []
    grouped = fallback_groups(fallback)
    for reason, items in grouped[:groups]:
        ops = ", ".join(sorted({f.op for f in items}))
        lines += textwrap.wrap(f"{len(items):>3} x {reason} ({ops})", width, initial_indent="  ",
                               subsequent_indent="        ", break_on_hyphens=False)
        lines.append("        " + _names(items, max(20, width - 8)))
    if len(grouped) > groups:
        rest = sum(len(v) for _, v in grouped[groups:])
        lines.append(f"  ... {rest} more layer(s) for {len(grouped) - groups} other reason(s) (see --format json)")
    return lines


def estimate_table(e: Estimate, width: int = 100) -> str:
    """The per-step table, fitted to `width` columns (the step-name column takes what the others leave)."""
    fixed = 1 + 10 + 1 + 3 + 1 + 4 + 1 + 9 + 1 + 6 + 1 + 8 + 1 + 8 + 1 + 8
    name_w = max(16, width - fixed)
    lines = [f"{e.model} on {e.hardware}  device={e.device} precision={e.precision} batch={e.batch}"
             + (f" sparsity={e.sparsity}" if e.sparsity != "disable" else "")]
    hdr = (f"{'step':<{name_w}} {'kind':<10} {'dev':<3} {'prec':<4} {'time ms':>9} {'share':>6} {'bound':<8} "
           f"{'MACs':>8} {'bytes':>8}")
    lines += [hdr, "-" * len(hdr)]
    for s in e.steps:
        share = s.time_ms / e.total_ms if e.total_ms else 0.0
        lines.append(f"{_short(s.name, name_w):<{name_w}} {s.kind:<10} {s.device:<3} {s.precision:<4} "
                     f"{s.time_ms:>9.4f} {share:>6.1%} {s.bound:<8} {_si(s.macs):>8} {_si(s.bytes):>8}")
    lines.append("-" * len(hdr))
    lines.append(f"latency {e.total_ms:.4f} ms   throughput {throughput_qps(e.batch, e.total_ms):.1f} qps "
                 f"(inferences/s = batch {e.batch} / latency)")
    kinds = ", ".join(f"{k} {v:.3f} ms" for k, v in e.by_kind().items())
    lines.append(f"by kind: {kinds}")
    lines.append(f"DLA subgraphs: {e.dla_subgraphs}   transitions: {e.transitions}   "
                 f"GPU fallback layers: {len(e.fallback)}   MACs: {_si(e.macs)}")
    if e.fallback:
        lines.append("GPU fallback by reason:")
        lines += fallback_lines(e.fallback, width)
    return "\n".join(lines)


# ---- how an Estimate shows itself in a REPL and a notebook: one summary line, and an HTML step table ----

def summary(e) -> str:
    """One line: what was estimated, the total, and the counts a reader checks first."""
    what = f"{e.model} on {e.hardware}, {e.device} {e.precision} batch {e.batch}"
    if e.sparsity != "disable":
        what += f" sparsity={e.sparsity}"
    label = f"{e.label!r}, " if e.label else ""
    counts = (f"{len(e.steps)} steps, {e.dla_subgraphs} DLA subgraph{'s' * (e.dla_subgraphs != 1)}, "
              f"{len(e.fallback)} GPU fallback, {e.transitions} transition{'s' * (e.transitions != 1)}")
    warn = f", {len(e.warnings)} warning{'s' * (len(e.warnings) != 1)}" if e.warnings else ""
    return f"Estimate({label}{what}: {e.total_ms:.4f} ms; {counts}{warn})"


_COLUMNS = ("step", "kind", "device", "precision", "time ms", "share", "bound", "MACs", "bytes")


def step_table_html(e) -> str:
    """The summary line, the step table (as `dlasim estimate` prints it) and the fallback layers with reasons."""
    from html import escape
    total = e.total_ms or 1.0
    head = "".join(f"<th>{c}</th>" for c in _COLUMNS)
    rows = []
    for s in e.steps:
        cells = (escape(s.name), s.kind, s.device, s.precision, f"{s.time_ms:.4f}", f"{s.time_ms / total:.1%}",
                 s.bound, _si(s.macs), _si(s.bytes))
        title = f' title="{escape(s.reason)}"' if s.reason else ""
        rows.append(f"<tr{title}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    kinds = ", ".join(f"{k} {v:.3f} ms" for k, v in e.by_kind().items())
    parts = [f"<p><b>{escape(summary(e))}</b></p>",
             f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>",
             f"<tfoot><tr><td colspan='{len(_COLUMNS)}'>total {e.total_ms:.4f} ms ({kinds})</td></tr></tfoot></table>"]
    if e.fallback:
        items = "".join(f"<li>{escape(f.name)} ({escape(f.op)}): {escape(f.reason)}</li>"
                        for f in e.fallback)
        parts.append(f"<details><summary>{len(e.fallback)} GPU fallback layers</summary><ul>{items}</ul></details>")
    if e.warnings:
        parts.append("<ul>" + "".join(f"<li>warning: {escape(w)}</li>" for w in e.warnings) + "</ul>")
    return "<div class='dlasim-estimate'>" + "".join(parts) + "</div>"
