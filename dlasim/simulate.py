"""Plan -> Estimate: cost every step and collect the rows and totals."""
from __future__ import annotations

from collections import Counter

from .cost import cost_layer, cost_step
from .cost.geometry import ConvShape, conv_shape, step_conv_shape
from .cost.gpu import class_floor, kernel_class, padded_channels
from .cost.peaks import device_peaks
from .plan import Plan, Step
from .report import ConvChannels, CopyRow, Estimate, StepRow


def estimate_plan(plan: Plan, label: str = "") -> Estimate:
    rows: list[StepRow] = []
    total = 0.0
    unmodelled = []
    known = plan.report_facts is not None
    facts, peaks = plan.report_facts if known else ([], device_peaks(plan.platform))
    g = plan.graph
    for i, step in enumerate(plan.steps):
        if step.kind == "layer":
            cs = step_conv_shape(step, g)          # once for the cost and the report's conv channels
            c = cost_layer(step, plan, cs)
        else:
            cs = None
            c = cost_step(step, plan)
        parts = c.parts
        if known:
            copy, conv, floor_ms = facts[i]
        else:
            fact = copy, conv, floor_ms = step_facts(step, plan, cs, parts.kernel_class)
            facts.append(fact)
        t = c.total_s * 1e3
        total += t
        if parts.unmodelled:
            unmodelled.append(step.name)
        rows.append(StepRow(step.name, step.kind, step.op, step.device, step.precision, t, c.bound,
                            [l.name for l in step.members], c.macs, c.bytes, c.compute_s * 1e3,
                            c.memory_s * 1e3, c.overhead_s * 1e3, step.subgraph, step.reason, parts,
                            copy, conv, floor_ms))
    warnings = []
    if unmodelled:
        warnings.append(f"{len(unmodelled)} layer(s) with operators dlasim does not model were costed "
                        f"conservatively as memory-bound GPU kernels: {', '.join(unmodelled[:5])}")
    if plan.sparsity != "disable":
        warnings += _sparse_warning(plan.sparsity, rows)
    warnings += _option_warnings(plan, rows)
    if plan.precision in ("fp16", "fp32") and any(d.pass_name == "qdq" for d in plan.decisions):
        warnings.append(f"the network has Q/DQ layers (explicit quantization): they make the layers between them "
                        f"INT8 whatever --precision says; --precision={plan.precision} sets the other layers only")
    if not known:
        plan.report_facts = (facts, peaks)
    return Estimate(model=g.name, hardware=plan.platform.label, device=plan.device, precision=plan.precision,
                    batch=plan.batch, sparsity=plan.sparsity, total_ms=total, steps=rows,
                    fallback=list(plan.fallback), dla_subgraphs=plan.dla_subgraphs,
                    transitions=plan.transitions, macs=g.macs,
                    decisions=list(plan.decisions),
                    warnings=warnings, label=label, peaks=dict(peaks))   # a cached Plan keeps `peaks`: a copy


def _sparse_warning(sparsity: str, rows: list[StepRow]) -> list[str]:
    """A warning when --sparsity cannot take effect: no layer runs 2:4 sparse weights (why, most common first)."""
    convs = [r for r in rows if r.kind == "layer" and r.macs]
    if not convs or any(r.parts.sparse == "used" for r in convs):
        return []
    why = Counter(r.parts.sparse_reason or "not costed with 2:4 weights" for r in convs)
    top = "; ".join(f"{w} ({n})" for w, n in why.most_common(3))
    return [f"--sparsity={sparsity} has no effect: none of the {len(convs)} layers with MACs runs 2:4 sparse "
            f"weights ({top})"]


def _option_warnings(plan: Plan, rows: list[StepRow]) -> list[str]:
    """Requested options that cannot take effect as asked: FP32 on the DLA (it runs FP16 or INT8 only,
    reference/dla.md s1), INT8 engine I/O formats on an engine without INT8 (the copy converts them)."""
    out = []
    dla = sum(1 for r in rows if r.device == "dla" and r.kind == "layer")
    if plan.precision == "fp32" and dla:
        out.append(f"precision fp32 cannot take effect on the DLA: it has no FP32; its {dla} layer(s) run FP16")
    if plan.precision not in ("int8", "best"):
        for side, flag, io in (("inputs", "--inputIOFormats", plan.options.input_io),
                               ("outputs", "--outputIOFormats", plan.options.output_io)):
            fmts = [f"{p}:{f}" for p, f in io if p == "int8"]
            if fmts:
                out.append(f"{flag}={','.join(fmts)} on an {plan.precision.upper()} engine: INT8 I/O does not make "
                           f"the engine INT8; the {side} are converted by reformat copies (add --int8)")
    return out


def step_facts(step: Step, plan: Plan, cs: ConvShape | None, cls: str = "") -> tuple:
    """(copy, conv, kernel_floor_ms) of a report row (StepRow): the boundary copy a reformat/transition step
    makes (not a Q/DQ left as a copy); the channels of a layer step's Conv/ConvTranspose/Gemm/MatMul anchor
    (cost/geometry.py conv_shape of that layer alone), with the GPU's tensor-core alignment of the input channels
    per group (cost/gpu.py padded_channels); on the GPU, the floor of its kernel class plus the launch (cost/gpu.py
    kernel_class, class_floor). `cs`: the layer step's geometry.step_conv_shape (that of the anchor alone unless
    the step is horizontally fused); `cls`: the kernel class the GPU cost model chose for it (CostParts.kernel_class,
    the same kernel_class; "" where it set none)."""
    if step.kind != "layer":
        copy = step.copy
        return (CopyRow(step.inputs[0].name, copy.src, copy.dst) if copy is not None and step.qdq is None
                else None), None, 0.0
    if step.horizontal_k:           # the fused step's K is its parts' together: the anchor's own shape
        a = step.anchor
        cs = conv_shape(a, plan.graph, step.conv if a is step.members[0] else None)
    gpu = step.device == "gpu"
    conv = None
    if cs is not None:
        cg = cs.c // cs.groups
        conv = ConvChannels(cs.c, cs.k, cs.groups, padded_channels(cg, step.precision) / cg if gpu and cg else 1.0)
    if not gpu:
        return None, conv, 0.0
    g = plan.platform.gpu
    if not cls:
        a = step.anchor
        cls = kernel_class(a.op if a is not None else step.op, cs, step.precision, g)     # K plays no part in it
    return None, conv, (class_floor(g, cls) + g.launch_overhead_s) * 1e3
