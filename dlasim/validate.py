"""`dlasim validate`: run the measured cases in validation/cases.csv and compare predicted with measured.

Each row of cases.csv is one measured number with its source (file + section). The harness loads the model
(a path relative to the repository root, `zoo:NAME`, or a `builder:` spec from validation/models.py), runs
it through the public API (`dlasim.estimate`), picks the predicted quantity named by the `metric` column,
converts the measured value to milliseconds, and reports the signed error (pred - meas) / meas * 100.

Columns: name, suite, family (the network family, for leave-one-network-out), platform (spec name[:mode]),
model, device, precision, batch, options (`key=value;...`: input_formats, output_formats, shapes,
gpu_fallback, sparsity, dla_core), metric, measured, unit, engines, kind, fitted, tolerance_pct, notes, source.

kind (what the measured number says about the prediction):
    estimate (default)   a point measurement of the predicted quantity; error and the within-N% shares
    upper_bound          the measurement includes work dlasim does not model (e.g. app-level FPS with host
                         pre/post-processing): the case holds when predicted <= measured; not in the shares
    magnitude            an order-of-magnitude figure (e.g. a harness sizing hint): the case holds when
                         predicted/measured is within a factor MAGNITUDE_FACTOR; not in the shares
fitted: yes when validation/fit_specs.py fits spec values to the measurement (in-sample); the others are
held out, decided when the case is added.

metric:
    total_ms                          Estimate.total_ms
    minus_case:NAME                   this case's total_ms minus that of case NAME (same file): the predicted
                                      side of a measured gap between two engines
    steps_ms:FILTER[,FILTER...]       sum of step times over the steps matching every filter:
        kind=layer|reformat           step kind in the list       device=dla|gpu
        name^=PREFIX[|PREFIX]          step name starts with one   name!^=PREFIX  starts with none
        layer=NAME[|NAME]             one of the fused original layers is listed
        group=LO-HI                   the step's anchor layer (its conv/gemm, else its first layer) has a
                                      TensorRT layer index in LO..HI (model layer order, Dropout not counted,
                                      as TensorRT's Caffe parser drops it; HaX-CoNN's group numbering)
    METRIC + harness(MEASURE)         METRIC plus a host-side term of the measuring harness that the engine
                                      does not see, read from data by a measured-side expression (ms), e.g.
                                      t2t_sync_gap_ms of other networks' rows of the same table; the result
                                      row keeps it as harness_ms
measured: a number, or a function of the data file the source names (dlasim/measures.py lists them).
"""
from __future__ import annotations

import csv
import importlib.util
import math
import re
import statistics
from pathlib import Path

from .errors import DlasimError
from .measures import data_path, measured_value, parse_options, to_ms
from .ops import MAC_OPS
from .resources import data_root

ROOT = data_root()                     # case paths (models, data files) are relative to this folder
CASES = ROOT / "validation" / "cases.csv"
MODELS = ROOT / "validation" / "models.py"

NOT_TRT_LAYERS = ("Dropout",)
KINDS = ("estimate", "upper_bound", "magnitude")
MAGNITUDE_FACTOR = 2.0  # removed by TensorRT's parsers; not counted in layer indices


# ---- case file --------------------------------------------------------------------------------------

def load_cases(path: str | Path | None = None) -> list[dict]:
    path = Path(path) if path else CASES
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.lstrip().startswith("#"))]
    except OSError as e:
        raise DlasimError(f"{path}: cannot read validation cases ({e.strerror})") from None
    for i, r in enumerate(rows, start=2):
        if not (r.get("name") or "").strip():
            raise DlasimError(f"{path}: row {i} has no name")
        if (r.get("kind") or "estimate").strip() not in KINDS:
            raise DlasimError(f"{path}: case {r['name'].strip()}: kind {r['kind'].strip()!r} is not one of "
                              f"{', '.join(KINDS)}")
    return [{k: (v or "").strip() for k, v in r.items() if k is not None} for r in rows]


# ---- predicted values ---------------------------------------------------------------------------------

def _models_module():
    spec = importlib.util.spec_from_file_location("dlasim_validation_models", MODELS)
    if spec is None or not MODELS.is_file():
        raise DlasimError(f"{MODELS}: not found (builder: models need the repository checkout)")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Runner:
    """Loads each model, platform and estimate once per run."""

    def __init__(self, root: Path = ROOT):
        self.root = root
        self.graphs: dict = {}
        self.platforms: dict = {}
        self.estimates: dict = {}
        self.cases: dict = {}             # name -> case, for minus_case metrics
        self._models = None

    def graph(self, model: str):
        if model not in self.graphs:
            from .api import load
            if model.startswith("builder:"):
                if self._models is None:
                    self._models = _models_module()
                g = self._models.build(model)
            elif model.startswith("zoo:"):
                g = load(model)
            else:
                g = load(str(data_path(model, self.root)))
            self.graphs[model] = g
        return self.graphs[model]

    def platform(self, name: str):
        if name not in self.platforms:
            from .hardware import hardware
            self.platforms[name] = hardware(name)
        return self.platforms[name]

    def estimate(self, case: dict):
        from .api import estimate
        key = tuple(case.get(k, "") for k in ("model", "platform", "device", "precision", "batch", "options"))
        if key not in self.estimates:
            kw = parse_options(case.get("options", ""))
            batch = int(case["batch"]) if case.get("batch") else None
            self.estimates[key] = estimate(self.graph(case["model"]), self.platform(case["platform"]),
                                                  device=case.get("device") or "gpu",
                                                  precision=case.get("precision") or "fp16", batch=batch, **kw)
        return self.estimates[key]


def _layer_index(graph) -> dict[str, int]:
    idx: dict[str, int] = {}
    for layer in graph.layers:
        if layer.op not in NOT_TRT_LAYERS:
            idx[layer.name] = len(idx)
    return idx


def _anchor(step, ops: dict[str, str]) -> str | None:
    for name in step.layers:
        if ops.get(name) in MAC_OPS:
            return name
    return step.layers[0] if step.layers else None


_FILTER = re.compile(r"^\s*(kind|device|name|layer|group)\s*(!\^=|\^=|=)\s*(.*?)\s*$")


def select_steps(estimate, graph, filters: str) -> list:
    """The steps of `estimate` matching every filter of a `steps_ms:` metric."""
    steps = list(estimate.steps)
    for item in filter(None, (f.strip() for f in filters.split(","))):
        m = _FILTER.match(item)
        if not m:
            raise DlasimError(f"metric: bad step filter {item!r}")
        key, opr, value = m.groups()
        values = value.split("|")
        if key == "name" and opr in ("^=", "!^="):
            keep = opr == "^="
            steps = [s for s in steps if any(s.name.startswith(v) for v in values) == keep]
        elif opr != "=":
            raise DlasimError(f"metric: {key} takes '=', got {item!r}")
        elif key == "kind":
            steps = [s for s in steps if s.kind in values]
        elif key == "device":
            steps = [s for s in steps if s.device in values]
        elif key == "name":
            steps = [s for s in steps if s.name in values]
        elif key == "layer":
            steps = [s for s in steps if set(s.layers) & set(values)]
        else:  # group
            lo, sep, hi = value.partition("-")
            if not sep:
                raise DlasimError(f"metric: group expects LO-HI, got {value!r}")
            lo_i, hi_i = int(lo), int(hi)
            idx = _layer_index(graph)
            ops = {l.name: l.op for l in graph.layers}
            steps = [s for s in steps if (a := _anchor(s, ops)) is not None and lo_i <= idx.get(a, -1) <= hi_i]
    return steps


_HARNESS = re.compile(r"(.*?)\s*\+\s*harness\((.*)\)\s*", re.S)


def split_harness(metric: str) -> tuple[str, str | None]:
    """`total_ms + harness(EXPR)` -> ("total_ms", "EXPR"); a metric without a harness term -> (metric, None)."""
    m = _HARNESS.fullmatch(metric)
    return (m.group(1), m.group(2)) if m else (metric, None)


def _row_ids(expr: str) -> set[str]:
    """The row keys a measured-side expression selects (`KEY=A|B` arguments)."""
    return {v.strip() for m in re.finditer(r"\w+=([^):]*)", expr) for v in m.group(1).split("|") if v.strip()}


def harness_ms(expr: str, measured: str, root: Path) -> float:
    """A case's harness term in ms: a finite time >= 0 read by `expr`, which must select none of the rows the
    case's own `measured` expression reads (held out: the term comes from other measurements)."""
    own = _row_ids(expr) & _row_ids(measured)
    if own:
        raise DlasimError(f"metric harness({expr}): reads the case's own row(s) {', '.join(sorted(own))}")
    try:
        v = measured_value(expr, root)
    except DlasimError as e:
        raise DlasimError(f"metric harness({expr}): {e}") from None
    if not (math.isfinite(v) and v >= 0):
        raise DlasimError(f"metric harness({expr}): expected a finite time >= 0 ms, got {v}")
    return v


def predicted_value(estimate, graph, metric: str) -> tuple[float, list[str]]:
    kind, _, filters = metric.partition(":")
    kind = kind.strip()
    if kind == "total_ms":
        return estimate.total_ms, []
    if kind == "steps_ms":
        steps = select_steps(estimate, graph, filters)
        warn = [] if steps else [f"metric {metric!r} matched no step"]
        return sum(s.time_ms for s in steps), warn
    raise DlasimError(f"unknown metric {metric!r} (total_ms or steps_ms:FILTERS)")


# ---- run and summarise --------------------------------------------------------------------------------

def error_pct(predicted: float, measured: float) -> float:
    """Signed relative error in percent: (predicted - measured) / measured * 100."""
    return (predicted - measured) / measured * 100.0


def platform_key(platform: str) -> str:
    return platform.split(":", 1)[0]


def bound_holds(kind: str, predicted: float, measured: float) -> bool | None:
    """Whether a bound case holds: upper_bound -> predicted <= measured; magnitude -> within the factor."""
    if kind == "upper_bound":
        return predicted <= measured
    if kind == "magnitude":
        return 1 / MAGNITUDE_FACTOR <= predicted / measured <= MAGNITUDE_FACTOR
    return None


def _within(kind: str, tol: float | None, predicted: float, measured: float, err: float) -> bool | None:
    """Whether a case holds: a bound case by bound_holds, an estimate within its tolerance (None: it has none)."""
    if kind != "estimate":
        return bound_holds(kind, predicted, measured)
    return None if tol is None else abs(err) <= tol


def summarize(rows: list[dict]) -> dict:
    """Shares over the estimate cases that ran; bound cases (upper_bound, magnitude) are counted apart."""
    ran = [r for r in rows if r.get("error_pct") is not None]
    ok = [r for r in ran if r.get("kind", "estimate") == "estimate"]
    bounds = [r for r in ran if r.get("kind", "estimate") != "estimate"]
    errs = sorted(abs(r["error_pct"]) for r in ok)
    n = len(ok)

    def share(limit):
        return sum(e <= limit for e in errs) / n if n else None

    tol = [r for r in ok if r.get("within_tolerance") is not None]
    return {"n": n, "n_errors": len(rows) - len(ran),
            "median_abs_error_pct": statistics.median(errs) if errs else None,
            "mean_abs_error_pct": sum(errs) / n if n else None,
            "within_10pct": share(10.0), "within_20pct": share(20.0), "within_30pct": share(30.0),
            "within_tolerance": (sum(r["within_tolerance"] for r in tol) / len(tol)) if tol else None,
            "n_bounds": len(bounds), "bounds_held": sum(bool(r["within_tolerance"]) for r in bounds)}


def run_case(case: dict, runner: _Runner | None = None) -> dict:
    """One case -> a result row; any exception becomes an error row."""
    runner = runner or _Runner()
    row = {"name": case.get("name", ""), "suite": case.get("suite", ""), "family": case.get("family", ""),
           "kind": case.get("kind", "") or "estimate", "platform": case.get("platform", ""),
           "model": case.get("model", ""), "device": case.get("device", ""),
           "precision": case.get("precision", ""), "batch": int(case["batch"]) if case.get("batch", "").isdigit() else None,
           "metric": case.get("metric", ""), "measured": None, "predicted": None, "error_pct": None,
           "tolerance_pct": None, "within_tolerance": None, "measured_value": case.get("measured", ""),
           "unit": case.get("unit", "") or "ms", "source": case.get("source", ""), "notes": case.get("notes", ""),
           "fitted": case.get("fitted", "") == "yes", "warnings": [], "error": None}
    try:
        if case.get("tolerance_pct"):
            row["tolerance_pct"] = float(case["tolerance_pct"])
        engines = int(case["engines"]) if case.get("engines") else 1
        value = measured_value(case.get("measured", ""), runner.root)
        row["measured_value"] = value
        row["measured"] = to_ms(value, row["unit"], row["batch"], engines)
        if (case.get("metric") or "").startswith("concurrent:"):   # engines at once: dlasim/concurrent/cases.py
            from .concurrent.cases import predict_case
            pred, warn, base = predict_case(case, runner)
            row["predicted"], row["warnings"] = pred, warn
            row["sum_alone_ms"], row["sum_alone_error_pct"] = base, error_pct(base, row["measured"])
        else:
            est = runner.estimate(case)
            metric, harness = split_harness(case.get("metric") or "total_ms")
            if metric.startswith("minus_case:"):
                other = runner.cases.get(metric.split(":", 1)[1].strip())
                if other is None:
                    raise DlasimError(f"metric {metric!r}: no such case in the file")
                pred, warn = est.total_ms - runner.estimate(other).total_ms, []
            else:
                pred, warn = predicted_value(est, runner.graph(case["model"]), metric)
            if harness is not None:
                row["harness_ms"] = harness_ms(harness, case.get("measured", ""), runner.root)
                pred += row["harness_ms"]
            row["predicted"] = pred
            row["warnings"] = list(est.warnings) + warn
        if not row["measured"] > 0:
            raise DlasimError(f"measured value must be positive, got {row['measured']}")
        row["error_pct"] = error_pct(pred, row["measured"])
        if not math.isfinite(row["error_pct"]):
            raise DlasimError(f"error is not finite (measured {row['measured']})")
        row["within_tolerance"] = _within(row["kind"], row["tolerance_pct"], pred, row["measured"], row["error_pct"])
    except Exception as e:  # a broken case is reported, never a crash
        row["predicted"] = row["error_pct"] = row["within_tolerance"] = None
        msg = str(e).splitlines()[0] if str(e) else ""
        row["error"] = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    return row


def _engine_only(r: dict) -> dict:
    """A result row without its harness term (the prediction of the engine time alone)."""
    if "harness_ms" not in r or r.get("predicted") is None:
        return r
    pred = r["predicted"] - r["harness_ms"]
    err = error_pct(pred, r["measured"])
    within = _within(r.get("kind", "estimate"), r.get("tolerance_pct"), pred, r["measured"], err)
    return {**r, "predicted": pred, "error_pct": err, "within_tolerance": within}


def run(suite: str | None = None, path: str | Path | None = None, platforms: dict | None = None) -> dict:
    """Run every case (or those of `suite`, comma-separated names allowed) and summarise per platform.
    `platforms` ({case platform text: Platform}) replaces spec files, e.g. with refitted values."""
    cases = load_cases(path)
    if suite:
        wanted = {s.strip() for s in suite.split(",") if s.strip()}
        known = sorted({c.get("suite", "") for c in cases})
        unknown = sorted(wanted - set(known))
        if unknown:
            raise DlasimError(f"--suite: unknown suite {unknown[0]!r}; known: {', '.join(known)}")
        cases = [c for c in cases if c.get("suite") in wanted]
    runner = _Runner()
    runner.platforms.update(platforms or {})
    runner.cases = {c["name"]: c for c in load_cases(path)}
    rows = [run_case(c, runner) for c in cases]
    summary = summarize(rows)
    summary["all"] = summarize(rows)
    plats = list(dict.fromkeys(platform_key(r["platform"]) for r in rows))
    for plat in plats:
        summary[plat] = summarize([r for r in rows if platform_key(r["platform"]) == plat])
    # cases whose measurement validation/fit_specs.py fitted spec values to are in-sample; the rest held out
    held = [r for r in rows if not r.get("fitted")]
    summary["held_out"] = summarize(held)
    for plat in plats:
        summary[f"held_out:{plat}"] = summarize([r for r in held if platform_key(r["platform"]) == plat])
    if any("harness_ms" in r for r in held):
        # the same shares with the engine time alone: a harness term reads other held-out rows' measurements
        summary["held_out_engine_only"] = summarize([_engine_only(r) for r in held])
    for suite_name in dict.fromkeys(r["suite"] for r in rows if r["metric"] == "concurrent:aggregate"):
        conc = [r for r in rows if r["metric"] == "concurrent:aggregate" and r["suite"] == suite_name]
        summary[suite_name] = summarize(conc)
        ok = [r for r in conc if r.get("error_pct") is not None]
        summary[suite_name]["closer_than_sum_alone"] = (
            sum(abs(r["error_pct"]) < abs(r["sum_alone_error_pct"]) for r in ok) / len(ok)) if ok else None
        # contention only slows engines down: a row whose sum of stand-alone throughputs is already slower than
        # measured cannot come closer than that sum (validation/concurrent_breakdown.py: "stand-alone too slow")
        summary[suite_name]["sum_alone_slower"] = sum(r["sum_alone_error_pct"] > 0 for r in ok)
    return {"cases_file": str(Path(path) if path else CASES.relative_to(ROOT)), "suite": suite,
            "cases": rows, "summary": summary}


# ---- table -----------------------------------------------------------------------------------------------

def _fmt(v, spec: str, none: str = "-") -> str:
    return none if v is None else format(v, spec)


_KIND_MARK = {"upper_bound": "  bound<=", "magnitude": "  bound~"}


def held_out_line(summary: dict) -> str:
    """One line: the held-out share within 20% overall and per platform, and how many bound cases hold."""
    def part(v):
        return f"{_fmt(None if v['within_20pct'] is None else v['within_20pct'] * 100, '.0f')}% of {v['n']}"
    ho = summary.get("held_out")
    if not ho:
        return "held-out within 20%: no cases"
    per = [f"{k.split(':', 1)[1]} {part(v)}" for k, v in summary.items()
           if k.startswith("held_out:") and isinstance(v, dict) and v["n"]]
    bounds = f"; bound cases held {ho['bounds_held']}/{ho['n_bounds']}" if ho["n_bounds"] else ""
    eo = summary.get("held_out_engine_only")
    alone = f"; {part(eo)} with the engine time alone (no harness terms)" if eo else ""
    return f"held-out within 20%: {part(ho)} ({', '.join(per)}){bounds}{alone}"


def _row_cells(r: dict, pw: int) -> tuple[str, str]:
    """A case's columns after its name, and the annotation that may wrap after them."""
    if r.get("error"):
        return (f"{r['platform']:<{pw}}  {'-':>12}  {_fmt(r['measured'], '.4f'):>11}  {'ERROR':>8}  {'':>4}",
                f"  {r['error']}")
    tol = r.get("tolerance_pct")
    flag = "" if r.get("within_tolerance") is None else ("ok" if r["within_tolerance"] else "OUT")
    cells = (f"{r['platform']:<{pw}}  {r['predicted']:>12.4f}  {r['measured']:>11.4f}  {r['error_pct']:>+7.1f}%  "
             f"{_fmt(tol, '.0f', ''):>3}%  {flag:<3}  {'fit' if r.get('fitted') else ''}"
             f"{_KIND_MARK.get(r.get('kind'), '')}")
    note = f"  (sum of stand-alone: {r['sum_alone_error_pct']:+.1f}%)" if "sum_alone_error_pct" in r else ""
    if "harness_ms" in r:
        note += f"  (incl. harness {r['harness_ms']:.3f} ms)"
    return cells.rstrip(), note


def render(result: dict, width: int = 100) -> str:
    """The case table and the summary. A case is one line when name and columns fit in `width`; else its
    name takes a line and its columns the next, indented (the annotations after them may still wrap)."""
    rows = result.get("cases", [])
    nw = max([len(r["name"]) for r in rows] + [4])
    pw = max([len(r["platform"]) for r in rows] + [8])
    cells = [_row_cells(r, pw) for r in rows]
    head = f"{'platform':<{pw}}  {'predicted ms':>12}  {'measured ms':>11}  {'error':>8}  {'tol':>4}"
    wide = max([len(c) for c, _ in cells] + [len(head)])
    one_line = nw + 2 + wide <= width
    if one_line:
        lines = [f"{'case':<{nw}}  {head}", "-" * (nw + 2 + wide)]
    else:
        lines = ["case", f"    {head}", "-" * (4 + wide)]
    suite = None
    for r, (c, note) in zip(rows, cells):
        if r["suite"] != suite:
            suite = r["suite"]
            lines.append(f"[{suite}]")
        lines += [f"{r['name']:<{nw}}  {c}{note}"] if one_line else [r["name"], f"    {c}{note}"]
    lines.append("")
    s = result.get("summary", {})
    sh = f"{'summary':<22} {'n':>3} {'err':>4} {'median |err|':>12} {'<=10%':>6} {'<=20%':>6} {'<=30%':>6} {'in tol':>6}"
    lines += [sh, "-" * len(sh)]

    def pct(v):
        return _fmt(None if v is None else v * 100, ".0f") + ("%" if v is not None else "")

    for key, v in s.items():
        if not isinstance(v, dict):
            continue
        lines.append(f"{key:<22} {v['n']:>3} {v['n_errors']:>4} {_fmt(v['median_abs_error_pct'], '.1f'):>11}% "
                     f"{pct(v['within_10pct']):>6} {pct(v['within_20pct']):>6} {pct(v['within_30pct']):>6} "
                     f"{pct(v['within_tolerance']):>6}")
    lines.append(held_out_line(s))
    for key, c in s.items():
        if isinstance(c, dict) and c.get("closer_than_sum_alone") is not None:
            slower = c.get("sum_alone_slower", 0)
            lines.append(f"{key} aggregates: {pct(c['within_20pct'])} within 20%, {pct(c['closer_than_sum_alone'])} "
                         f"closer to the measurement than the sum of the stand-alone throughputs"
                         + (f" ({slower} of {c['n']} start from a sum already slower than measured, "
                            f"which no contention can come closer than)" if slower else ""))
    lines.append("error = (predicted - measured) / measured; tol = the case's tolerance (validation/cases.csv); "
                 "fit = spec values were fitted to this measurement (validation/fit_specs.py), held_out = the "
                 "others; bound = kind upper_bound (holds when predicted <= measured) or magnitude (holds within a factor "
                 f"{MAGNITUDE_FACTOR:g}), not in the shares; sources: --format json")
    return "\n".join(lines)
