"""`dlasim sweep`: one model over a grid of options (every combination of the --vary values), evaluated with
estimate_many, written as a table, CSV, JSON or one HTML page (latency and throughput vs batch per
configuration, and the latency/throughput Pareto set).

    dlasim sweep zoo:resnet50 --hw orin-agx --vary precision=fp16,int8 --vary batch=1,2,4 \\
                 --vary hw=orin-agx:15w,orin-agx --format html -o sweep.html
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

from .build_options import BuildOptions
from .errors import DlasimError

KEYS = ("precision", "batch", "hw", "device", "sparsity")
CSV_FIELDS = ("hw", "device", "precision", "sparsity", "batch", "total_ms", "throughput_per_s", "dla_subgraphs",
              "transitions", "fallback_layers", "pareto", "error")


@dataclass(frozen=True)
class SweepPoint:
    hw: str
    device: str
    precision: str
    sparsity: str
    batch: int
    total_ms: float | None            # None when the estimate failed (error says why)
    throughput_per_s: float | None    # batch inferences per second of latency
    dla_subgraphs: int
    transitions: int
    fallback_layers: int
    pareto: bool
    error: str = ""

    @property
    def config(self) -> str:
        """The configuration a line of the batch plots belongs to (everything but the batch)."""
        return f"{self.hw} {self.device} {self.precision}" + (f" sparsity={self.sparsity}"
                                                              if self.sparsity != "disable" else "")


@dataclass(frozen=True)
class SweepResult:
    model: str
    varied: tuple[str, ...]
    points: tuple[SweepPoint, ...]

    def to_dict(self) -> dict:
        return {"model": self.model, "varied": list(self.varied), "points": [asdict(p) for p in self.points],
                "pareto": [i for i, p in enumerate(self.points) if p.pareto]}


def parse_vary(items: list[str], keys: tuple[str, ...] = KEYS, min_values: int = 1, one_key: bool = False) -> dict:
    """{key: [values]} from --vary KEY=V1,V2 items: `sweep` takes several keys (a grid) and one value or more,
    `compare` exactly one key (`one_key`) and at least two values."""
    vary: dict = {}
    for item in items:
        key, eq, vals = item.partition("=")
        key = key.strip()
        if not eq or key not in keys:
            raise DlasimError(f"--vary: expected KEY=V1,V2 with KEY in {'|'.join(keys)}, got {item!r}")
        if key in vary:
            raise DlasimError(f"--vary {key}: given twice")
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if key == "shapes":
            values = _shape_values(values)
        elif key in ("precision", "sparsity", "device"):
            values = [v.lower() for v in values]        # as the CLI's choice options: INT8, GPU
        if len(values) < min_values:
            raise DlasimError(f"--vary {key}: give at least {'one value' if min_values == 1 else f'{min_values} values'}")
        if key == "batch":
            try:
                values = [int(v) for v in values]
            except ValueError:
                raise DlasimError(f"--vary batch: values must be integers, got {vals!r}") from None
            if min(values) < 1:
                raise DlasimError(f"--vary batch: values must be positive, got {vals!r}")
        vary[key] = values
    if not vary:
        raise DlasimError("--vary: give at least one KEY=V1,V2")
    if one_key and len(vary) != 1:
        raise DlasimError("--vary: give exactly one KEY")
    return vary


def _shape_values(parts: list[str]) -> list[dict]:
    """--vary shapes=a:1x3x224x224,a:1x3x320x320 -> [{a: (1, 3, 224, 224)}, {a: (1, 3, 320, 320)}]: the
    comma-separated --shapes items, one variant per run of distinct input names (a name given again starts the
    next variant), so a model of several inputs varies as a:..,b:..,a:..,b:..."""
    from .importers import parse_shapes
    groups: list[list[str]] = []
    names: set = set()
    for part in parts:
        name = part.rpartition(":")[0].strip().strip("'\"")
        if not groups or name in names:
            groups.append([])
            names = set()
        groups[-1].append(part)
        names.add(name)
    return [parse_shapes(",".join(g)) for g in groups]


def sweep(model, base: dict, vary: dict, workers: int = 1, backend: str = "process", progress=None) -> SweepResult:
    """Every combination of `vary` over the options `base` (those of dlasim.estimate, with hw)."""
    from .api import load
    from .hardware import hardware
    from .batch import Job, estimate_many
    g = load(model, shapes=base.get("shapes"))
    for h in vary.get("hw", [base["hw"]]):
        hardware(h)                               # a bad platform fails the whole sweep before any work
    keys = list(vary)
    configs = [dict(zip(keys, combo)) for combo in itertools.product(*(vary[k] for k in keys))]
    jobs, records = [], []
    for c in configs:
        opts = {k: v for k, v in base.items() if k not in ("hw", "shapes")}
        opts.update({k: v for k, v in c.items() if k != "hw"})
        o = BuildOptions.of(**opts)                # a bad option fails the whole sweep before any work
        o = o.replace(batch=o.batch or g.batch)
        records.append(o)
        jobs.append(Job(g, c.get("hw", base["hw"]), {**o.as_kwargs(), "shapes": None}))
    results = estimate_many(jobs, base["hw"], workers=workers, backend=backend, progress=progress)
    rows = []
    for job, o, r in zip(jobs, records, results):
        ok = r.ok
        rows.append(dict(hw=r.hardware if ok else hardware(job.hw).label, device=o.device,
                         precision=o.precision, sparsity=o.sparsity,
                         batch=o.batch, total_ms=r.total_ms if ok else None,
                         throughput_per_s=(o.batch * 1e3 / r.total_ms) if ok and r.total_ms > 0 else None,
                         dla_subgraphs=r.dla_subgraphs if ok else 0, transitions=r.transitions if ok else 0,
                         fallback_layers=len(r.fallback) if ok else 0, error="" if ok else r.message))
    front = pareto([(r["total_ms"], r["throughput_per_s"]) for r in rows])
    points = tuple(SweepPoint(**r, pareto=i in front) for i, r in enumerate(rows))
    return SweepResult(g.name, tuple(keys), points)


def pareto(points: list[tuple]) -> set[int]:
    """Indices of the (latency, throughput) points no other point beats: lower or equal latency and higher or
    equal throughput, one of them strictly. Points without a latency (failed) are never in the set."""
    ok = [(i, lat, thr) for i, (lat, thr) in enumerate(points) if lat is not None and thr is not None]
    out = set()
    for i, lat, thr in ok:
        if not any((l2 <= lat and t2 >= thr) and (l2 < lat or t2 > thr) for _, l2, t2 in ok):
            out.add(i)
    return out


# ---- renderers -----------------------------------------------------------------------------------------
def to_csv(res: SweepResult) -> str:
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for p in res.points:
        d = asdict(p)
        w.writerow(["" if d[f] is None else (f"{d[f]:.6g}" if isinstance(d[f], float) else d[f]) for f in CSV_FIELDS])
    return buf.getvalue()


def to_table(res: SweepResult) -> str:
    head = f"{'hw':<18} {'device':<6} {'prec':<5} {'batch':>5} {'total ms':>10} {'inf/s':>10} {'subg':>5} {'trans':>5}  pareto"
    lines = [f"sweep of {res.model} over {', '.join(res.varied)}", head, "-" * len(head)]
    for p in res.points:
        if p.total_ms is None:
            lines.append(f"{p.hw:<18} {p.device:<6} {p.precision:<5} {p.batch:>5}  error: {p.error}")
            continue
        lines.append(f"{p.hw:<18} {p.device:<6} {p.precision:<5} {p.batch:>5} {p.total_ms:>10.4f} "
                     f"{p.throughput_per_s:>10.1f} {p.dla_subgraphs:>5} {p.transitions:>5}  {'*' if p.pareto else ''}")
    return "\n".join(lines)


_PALETTE = ("#3b6fd4", "#c0392b", "#2a8a4a", "#7b3fb8", "#d9480f", "#00a3c4", "#8a6d3b", "#d63384",
            "#5a6272", "#198754")


def _line_chart(res: SweepResult, field: str, title: str, sid: str) -> str:
    from .html.common import _e
    pts = [p for p in res.points if getattr(p, field) is not None]
    if not pts:
        return ""
    batches = sorted({p.batch for p in pts})
    configs = list(dict.fromkeys(p.config for p in pts))
    W, H, L, R, T, B = 760, 320, 70, 230, 30, 40
    ymax = max(getattr(p, field) for p in pts) * 1.08 or 1.0
    xs = {b: L + (i + 0.5) * (W - L - R) / len(batches) for i, b in enumerate(batches)}

    def y(v):
        return T + (H - T - B) * (1 - v / ymax)
    out = [f'<svg id="{sid}" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{_e(title)}">',
           f'<text x="{L}" y="18" font-size="13" font-weight="600">{_e(title)}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="#888"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="#888"/>']
    for i in range(5):
        v = ymax * i / 4
        out.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end">{v:.3g}</text>')
    for b, x in xs.items():
        out.append(f'<text x="{x:.1f}" y="{H - B + 16}" font-size="10" text-anchor="middle">{b}</text>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 6}" font-size="11" text-anchor="middle">batch</text>')
    for ci, c in enumerate(configs):
        col = _PALETTE[ci % len(_PALETTE)]
        line = sorted((p.batch, getattr(p, field), p.pareto) for p in pts if p.config == c)
        path = " ".join(f"{xs[b]:.1f},{y(v):.1f}" for b, v, _ in line)
        out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2"/>')
        for b, v, par in line:
            ring = ' stroke="#000" stroke-width="1.5"' if par else ""
            note = " (Pareto)" if par else ""
            out.append(f'<circle cx="{xs[b]:.1f}" cy="{y(v):.1f}" r="{5 if par else 3}" fill="{col}"{ring}>'
                       f'<title>{_e(c)} batch {b}: {v:.4g}{note}</title></circle>')
        ly = T + 14 * ci
        out.append(f'<rect x="{W - R + 12}" y="{ly}" width="10" height="10" fill="{col}"/>'
                   f'<text x="{W - R + 26}" y="{ly + 9}" font-size="11">{_e(c)}</text>')
    out.append("</svg>")
    return "".join(out)


def to_html(res: SweepResult) -> str:
    from .html.common import _e
    from .html.pages import _figure, _page
    rows = []
    for p in res.points:
        cells = [p.hw, p.device, p.precision, p.batch,
                 "" if p.total_ms is None else f"{p.total_ms:.4f}",
                 "" if p.throughput_per_s is None else f"{p.throughput_per_s:.1f}",
                 p.dla_subgraphs, p.transitions, p.fallback_layers, "yes" if p.pareto else "", p.error]
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    heads = ("hw", "device", "precision", "batch", "total ms", "inferences/s", "DLA subgraphs", "transitions",
             "fallback layers", "Pareto", "error")
    table = ("<div class=\"tablewrap\"><table><thead><tr>" + "".join(f"<th>{h}</th>" for h in heads)
             + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")
    front = sorted((p for p in res.points if p.pareto), key=lambda p: p.total_ms)
    flist = "".join(f"<li>{_e(p.config)}, batch {p.batch}: {p.total_ms:.4f} ms, {p.throughput_per_s:.1f} "
                    f"inferences/s</li>" for p in front)
    n_err = sum(p.total_ms is None for p in res.points)
    body = [f"<h1>Sweep of {_e(res.model)}</h1>",
            f"<p class=\"sub\">{len(res.points)} configurations over {_e(', '.join(res.varied))}"
            + (f"; {n_err} failed (see the error column)" if n_err else "") + "</p>",
            "<h2>Latency and throughput vs batch</h2>",
            _figure(_line_chart(res, "total_ms", "latency of one batch (ms)", "latency"),
                    "one line per configuration; Pareto points drawn larger with a black ring"),
            _figure(_line_chart(res, "throughput_per_s", "throughput (inferences/s)", "throughput"),
                    "batch inferences per second of latency (one engine, no overlap between batches)"),
            "<h2>Pareto set (lower latency, higher throughput)</h2>", f"<ul>{flist}</ul>",
            "<h2>All points</h2>", table]
    return _page(f"dlasim sweep {res.model}", body)
