"""One configuration's waterfall (`dlasim explain`): from the ideal (all MACs at the peak of one DLA core or
the GPU) to the prediction, split into the cause codes of docs/DESIGN.md ("Cause vocabulary"), with
re-estimated recovery advice (advice.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..report import Estimate, StepRow, throughput_qps
from .advice import advise
from .classify import OUTCOME_CODES, channels, findings
from .config import Config
from .expectation import Expectation
from .gap import amounts, totals_by_cause
from .summary import _advice_lines, _cause, _examples, _ranked
from .texts import CAUSES, si


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
        text = (f"{CAUSES[code].what} take {steps_ms:.3f} ms ({steps_ms / total:.0%} of the total), "
                f"{ms:+.3f} ms against the ideal{examples}")
    else:
        text = f"{CAUSES[code].what}: {ms:.3f} ms ({ms / total:.0%} of the total){examples}"
    return text + (f"; {CAUSES[code].why}" if CAUSES[code].why else "")


def explain(model, hw="xavier-agx", **opts) -> ExplainResult:
    """One configuration: the waterfall from the ideal (all MACs at one DLA core's or the GPU's peak in the
    requested precision, doubled for 2:4) to the prediction, split into causes, plus re-estimated advice.
    The cause entries sum to predicted - ideal."""
    cfg = Config.load(model, hw, opts)
    e = cfg.estimate()
    ctx = Expectation.of(cfg, e)
    ideal = ctx.ideal_ms(e.macs)
    by_cause = totals_by_cause(e.steps, ctx)
    unexplained = by_cause.pop("other", 0.0) + by_cause.pop("ideal", 0.0) - ideal
    by_cause["other"] = unexplained
    gap = e.total_ms - ideal
    shown = amounts(e.steps, ctx)
    causes = [_cause(code, ms, gap, _explain_text(code, ms, shown.get(code, ms), e.total_ms,
                                                  _examples(e.steps, ctx, code, fallback=e.fallback)))
              for code, ms in by_cause.items()]
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
        if p.sparse == "used":
            ck = channels(r)
            out.append({"name": r.layers[0] if r.layers else r.name, "channels": f"{ck[0]}->{ck[1]}" if ck else "?",
                        "dense_ms": p.dense_s * 1e3, "sparse_ms": p.sparse_s * 1e3})
    return sorted(out, key=lambda d: d["sparse_ms"] - d["dense_ms"])
