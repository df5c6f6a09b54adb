"""Compare (`dlasim compare`): why a speedup falls short of the naive expectation, split into cause codes.

`compare(model, hw, vary)` estimates one model under each value of one option (precision, sparsity,
device, batch, hw, model) and splits the gap between the naive speedup (peak MAC-rate ratio, 2x for 2:4,
b1/b2 for batch; expectation.py) and the predicted one into the stable cause codes of docs/DESIGN.md ("Cause
vocabulary"; gap.py), with a per-step diff of the two variants (steps matched by the original layers they
cover, match.py), and ends with recovery advice (advice.py) re-estimated on both variants.
"""
import csv
import io
from dataclasses import dataclass, field, replace

from ..errors import DlasimError
from ..report import Estimate, throughput_qps
from .advice import advise, speedup_after
from .classify import findings
from .config import FIXED_KINDS, Config
from .expectation import Expectation, ideal_speedup
from .gap import amounts, gap_by_cause
from .match import match_steps
from .summary import _advice_lines, _cause, _examples, _ranked
from .texts import CAUSES

VARY_KEYS = ("precision", "sparsity", "device", "batch", "hw", "model", "shapes")
VARIED_ADVICE = {"batch": ("batch",), "precision": ("int8_weights",)}   # advice that would change the varied key


def _label(key: str, v) -> str:
    if key == "model":
        return str(v).removeprefix("zoo:") if isinstance(v, str) else getattr(v, "name", str(v))
    if key == "shapes":
        return ",".join(f"{n}:{'x'.join(map(str, s))}" for n, s in dict(v).items())
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
        text = f"{CAUSES[code].what} take {a1:.3f} ms in {l1} and {a2:.3f} ms in {l2} ({a2 / t2:.0%} of {l2} time)"
    else:
        text = f"{CAUSES[code].what} take {a2:.3f} ms in {l2} ({a2 / t2:.0%} of its time)"
    text += examples
    if ms < 0:
        return text + "; this part did better than the naive expectation"
    return text + (f"; {CAUSES[code].why}, so they do not scale by the naive {ideal:.2g}x" if CAUSES[code].why else "")


def compare(model, hw="xavier-agx", vary: dict | None = None, **opts) -> CompareResult:
    """Estimate each value of one option and attribute the gap to the naive speedup to causes.

    vary: {KEY: [v1, v2, ...]} with KEY in precision, sparsity, device, batch, hw (hw values are platform
    names or name:mode), model (models as dlasim.estimate takes them), shapes ({input name: shape} each, as
    dlasim.estimate's shapes). speedup = first total / second total; causes, diff and advice explain first ->
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
    cfgs = [base.on(v) if key == "hw" else
            Config.load(v, hw, opts) if key == "model" else
            Config.load(model, hw, {**opts, "shapes": v}) if key == "shapes" else
            replace(base, opts={**base.opts, key: int(v) if key == "batch" else v}) for v in values]
    labels = [_label(key, v) for v in values]
    ests = [c.estimate(label=lab) for c, lab in zip(cfgs, labels)]
    ctx1, ctx2 = Expectation.of(cfgs[0], ests[0]), Expectation.of(cfgs[1], ests[1])
    ideal = ideal_speedup(key, values[0], values[1], ctx1, ctx2)
    e1, e2 = ests[:2]
    groups = match_steps(e1.steps, e2.steps)
    gap = gap_by_cause(groups, ctx1, ctx2, ideal)
    total_gap = e2.total_ms - e1.total_ms / ideal
    am1, am2 = amounts(e1.steps, ctx1), amounts(e2.steps, ctx2)
    shown = [_shown(key, lab) for lab in labels[:2]]
    causes = [_cause(code, ms, total_gap, _compare_text(code, ms, am1.get(code, 0.0), am2.get(code, 0.0), shown,
                                                        e2.total_ms, _examples(e2.steps, ctx2, code, fallback=e2.fallback),
                                                        ideal))
              for code, ms in gap.items()]
    unexplained = gap.get("other", 0.0)
    causes = _ranked(causes, total_gap, 0.005, unexplained)
    codes = [c["code"] for c in causes]
    advised = advise(cfgs[1], e2, findings(ctx2, e2, codes), skip=VARIED_ADVICE.get(key, ()))
    advice = speedup_after(advised, cfgs[0], e1, findings(ctx1, e1, codes), ideal)
    return CompareResult(key, labels, ests, e1.total_ms / e2.total_ms, ideal, causes, step_diff(groups), advice,
                         [e1.total_ms / e.total_ms for e in ests], unexplained)

