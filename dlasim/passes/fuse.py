"""Layer fusion as TensorRT does it, per engine, with the fusable ops taken from the spec file.

GPU (reference/gpu_tensorrt.md s5.2): Conv/FC + bias + BatchNorm/Scale + activation; Conv + ElementWise sum
(+ ReLU) residuals; pointwise chains such as SiLU (Sigmoid, Mul) fused into the conv epilogue or into one
PWN kernel; convolutions that read the same tensor with the same kernel, stride, padding and fused
epilogue run as one wider convolution, named `a || b || c` in the profile (gpu_tensorrt.md s4.2 profile
names; the Xavier GoogLeNet profile, validation/data/haxconn/profiles/googlenet_gpu_mark_at_-1.profile, has
nine such rows, one per inception block's 1x1 convs). DLA (reference/dla.md s1.3, s6.1): conv -> SDP (bias,
BN, activation, element-wise) -> PDP (pooling) run as one hardware layer, without a DRAM round trip,
within what one SDP pass can do (s1.3): it carries one stream of elements and takes a second element-wise
operand only from memory ("online": one operand from the conv pipe, the other from memory), and its LUT
(sigmoid, tanh) comes after its element-wise stages. So an activation built as a product of the stream
with a function of itself (SiLU = x * sigmoid(x), HardSwish = x * clip(x + 3, 0, 6) / 6, the tanh form of
GELU) cannot stay in the conv's pass: the conv writes x to DRAM, the LUT runs as its own pass (x -> s) and
the multiply as another that reads x back as its second operand; an op that reads a LUT output starts a
new pass [INF from s1.3 and s1.5, which adds the second operand's bytes for conv + eltwise]. Single-op
Mish, HardSwish, GELU and Swish are not DLA ops in TensorRT (s4.1: "DLA SW supports but TRT doesn't
expose"), so they fall back to the GPU before fusion (passes/dla_support.py).
"""
from __future__ import annotations

from ..ops import JOINS, LUT_OPS, MAC_OPS, WINDOW_POOLS
from ..plan import Decision, KernelPair, Step

MAX_REGION = 4  # pointwise layers absorbed per fusion attempt


def readers_and_outputs(plan) -> tuple[dict[str, list[Step]], set[str]]:
    """({tensor name: the steps reading it, in step order}, the names of the graph's outputs)."""
    by_input: dict[str, list[Step]] = {}
    for s in plan.steps:
        for t in s.inputs:
            by_input.setdefault(t.name, []).append(s)
    return by_input, {plan.resolve(t) for t in plan.graph.outputs}


def fuse(plan) -> None:
    steps = plan.steps
    by_input, graph_outputs = readers_and_outputs(plan)
    dead: set[int] = set()
    dla, gpu = plan.platform.dla, plan.platform.gpu
    pool_fusion = dla is not None and dla.support.pool_fusion

    def fusable_on(device: str, allowed: frozenset):
        """Whether a step may join a region on `device`: one original layer, not fused yet, an allowed op."""
        return lambda s: (s.device == device and len(s.members) == 1 and id(s) not in dead
                          and s.members[0].op in allowed)

    _fold_transposes(plan, steps, dead, by_input)
    # the spec's fusable post-ops per engine (DLA SDP ops; GPU epilogue and PWN ops): what may join a region,
    # and, with the conv/GEMM anchors, what may start one
    post_ops = {"dla": frozenset(dla.support.fusable_post_ops if dla else ()),
                "gpu": frozenset(gpu.fusable_post_ops if gpu else ())}
    fusable = {d: fusable_on(d, ops) for d, ops in post_ops.items()}

    def absorb(head: Step, s: Step, into: str, after: str) -> None:
        dead.add(id(s))
        head.members.extend(s.members)
        if s.precision_unsupported and head.device == "gpu" and head.members[0].op in MAC_OPS:
            # a pointwise op without an INT8 kernel of its own (Mish) runs in the conv/GEMM epilogue, in the
            # conv's precision (gpu_tensorrt.md s5.2 PointWise fusion into the conv epilogue, Conv_0 + PWN(...)):
            # the step stays INT8, as the Xavier NX YOLOv4 (Mish) engines show, INT8 1.49x faster than FP16
            # (validation/data/public2/measurements.csv JKJ-15, JKJ-16)
            plan.decisions.append(Decision(s.name, "fuse", into, f"{s.op}{after}: runs in the {head.op}'s "
                                                                 f"{head.precision.upper()} epilogue"))
            return
        if s.precision_unsupported:
            # one kernel runs one precision: a member that must run wider takes the step with it. DLA: INT8
            # Sigmoid/Tanh run in FP16 (passes/place.py) and take the conv with them (dla.md s3.2 Activation
            # row [INF]); GPU: a pointwise (PWN) kernel runs FP16 when one of its layers has no INT8 kernel
            head.precision_unsupported = True
            head.reason = head.reason or s.reason
            head.precision = s.precision
        plan.decisions.append(Decision(s.name, "fuse", into, s.op + after))

    for head in steps:
        if id(head) in dead or len(head.outputs) != 1:
            continue
        op = head.members[0].op
        device = head.device
        if op not in MAC_OPS and op not in post_ops[device]:
            continue
        ok = fusable[device]
        into = after = ""                  # the decision texts, made at the first absorption
        sdp = device == "dla"
        # the LUT is the SDP pass's last stage: what reads it is a new pass (tracked as members join)
        lut = sdp and not LUT_OPS.isdisjoint([l.op for l in head.members])
        while not lut:
            out = head.outputs[0]
            if out.name in graph_outputs:
                break
            readers = by_input.get(out.name, ())
            if len(readers) == 1 and len(readers[0].inputs) == 1 and len(readers[0].outputs) == 1:
                link = readers[0]          # a plain chain link (BN, activation): the common case
                if not ok(link):
                    break
                if not into:
                    into, after = f"fused into {head.members[0].name}", f" after {head.op} on {device.upper()}"
                absorb(head, link, into, after)
                lut = sdp and link.members[0].op in LUT_OPS
                head.outputs = list(link.outputs)
                continue
            region = _closed_region(out.name, by_input, ok)
            if region is None:
                break
            why = _sdp_split(region, out.name) if sdp else ""
            if why:
                for s in region:
                    plan.decisions.append(Decision(s.name, "fuse", f"not fused into {head.members[0].name}", why))
                break
            if not into:
                into, after = f"fused into {head.members[0].name}", f" after {head.op} on {device.upper()}"
            for s in region:
                absorb(head, s, into, after)
            lut = sdp and not LUT_OPS.isdisjoint([s.members[0].op for s in region])
            sink = region[-1]
            if len(region) == 1 and len(sink.inputs) == 1:
                extra = []            # one step reading only `out`: nothing new comes in
            else:
                inside = {t.name for s in region for t in s.outputs} | {out.name}
                extra = [t for s in region for t in s.inputs if t.name not in inside]
                head.inputs.extend(t for t in extra if t not in head.inputs)
            head.outputs = list(sink.outputs)
            if len(head.outputs) != 1:
                break
        # DLA: a pooling layer right after a conv runs in the PDP on the fly (dla.md s1.3)
        if (device == "dla" and op in MAC_OPS and pool_fusion
                and len(head.outputs) == 1 and head.outputs[0].name not in graph_outputs):
            cons = by_input.get(head.outputs[0].name, [])
            if len(cons) == 1 and cons[0].op in WINDOW_POOLS and cons[0].device == "dla" and id(cons[0]) not in dead:
                pool = cons[0]
                dead.add(id(pool))
                head.members.extend(pool.members)
                head.outputs = list(pool.outputs)
                head.fused_pool = pool.members[0]
                plan.decisions.append(Decision(pool.name, "fuse", f"fused into {head.members[0].name}",
                                              "pooling runs in the PDP on the fly after the conv"))
        if len(head.members) > 1:
            head.name = " + ".join(head.layers)
    _fuse_horizontal(plan, steps, dead, by_input)
    _mark_shared_concat_inputs(steps, dead, by_input)
    plan.steps = toposort([s for s in steps if id(s) not in dead])


def _fold_transposes(plan, steps: list[Step], dead: set[int], by_input: dict) -> None:
    """A GPU Transpose that swaps only the last two dimensions of a MatMul operand becomes the MatMul's
    operand mode (TensorRT IMatrixMultiplyLayer MatrixOperation::kTRANSPOSE; the ONNX parser and the
    builder fold such shuffles, gpu_tensorrt.md s5.2): no copy, the GEMM reads the operand transposed.
    Attention's K^T (perm [0, 1, 3, 2]) is the common case."""
    for s in steps:
        if s.op != "Transpose" or s.device != "gpu" or len(s.members) != 1 or len(s.inputs) != 1:
            continue
        readers = by_input.get(s.outputs[0].name, ())
        if len(readers) != 1 or readers[0].op != "MatMul" or readers[0].device != "gpu":
            continue
        rank = len(s.inputs[0].shape or ())
        perm = list(s.members[0].attributes.get("perm") or range(rank)[::-1])
        if rank < 2 or perm != list(range(rank - 2)) + [rank - 1, rank - 2]:
            continue
        mm = readers[0]
        dead.add(id(s))
        mm.inputs = [s.inputs[0] if t is s.outputs[0] else t for t in mm.inputs]
        mm.members.extend(s.members)
        by_input.setdefault(s.inputs[0].name, []).append(mm)
        plan.decisions.append(Decision(s.name, "fuse", f"fused into {mm.members[0].name}",
                                       "transpose of the last two dimensions: the MatMul reads the operand "
                                       "transposed"))


def _fuse_horizontal(plan, steps: list[Step], dead: set[int], by_input: dict) -> None:
    """GPU convolutions reading one tensor with equal parameters and epilogues become one step whose
    output channels add up (Step.horizontal_k); its name joins the parts with " || " as TensorRT does.

    The merged output is one buffer, so a part that feeds a Concat cannot be written into the concatenated
    buffer in place: the Concat copies it (the profile's "inception_3a/1x1 copy" rows, one per block;
    Step.copied_inputs of the Concat step, priced by cost/gpu.py)."""
    groups: dict[tuple, list[Step]] = {}
    for s in steps:
        if (s.op != "Conv" or s.device != "gpu" or id(s) in dead or s.conv is None or len(s.inputs) != 1
                or int(s.members[0].attributes.get("group", 1)) != 1 or s.fused_pool is not None):
            continue
        key = (s.inputs[0].name, s.conv, s.precision, tuple([l.op for l in s.members]))
        groups.setdefault(key, []).append(s)
    tensors = plan.graph.tensors
    for group in groups.values():
        if len(group) < 2:
            continue
        head = group[0]
        head.horizontal_k = sum(tensors[s.members[0].outputs[0]].shape[1] for s in group)
        for s in group[1:]:
            dead.add(id(s))
            head.members.extend(s.members)
            head.outputs.extend(s.outputs)
            plan.decisions.append(Decision(s.name, "fuse", f"fused into {head.members[0].name}",
                                           "same input and convolution parameters: one wider GPU convolution"))
        head.name = " || ".join(s.name for s in group)
        for t in head.outputs:
            for reader in by_input.get(t.name, ()):
                if reader.op == "Concat" and reader.device == "gpu" and id(reader) not in dead:
                    reader.copied_inputs += (t.name,)


# TensorRT fuses an INT8 depthwise conv and the 1x1 conv that reads it into one kernel on compute capability
# 7.2 and later (gpu_tensorrt.md s5.2 "Depthwise + pointwise conv -> DepSepConvolution (both INT8, CC >= 7.2;
# seen as FusedConvActConvolution)")
DEPSEP_MIN_CC = (7, 2)


def pair_kernels(plan) -> None:
    """The last pass: mark GPU layer pairs that TensorRT runs as one kernel (DepSep, ConvActPool). It runs after
    the Q/DQ pass and the reformat pass, when every step's precision is final and a reformat between two
    layers (which keeps them apart) is in place."""
    steps = plan.steps
    by_input, graph_outputs = readers_and_outputs(plan)
    _pair_depsep(plan, steps, set(), by_input, graph_outputs)
    _pair_conv_pool(plan, steps, set(), by_input, graph_outputs)


def _pair_depsep(plan, steps: list[Step], dead: set[int], by_input: dict, graph_outputs: set) -> None:
    """Mark GPU INT8 depthwise -> 1x1 conv pairs that run as one DepSep kernel (DEPSEP_MIN_CC): the depthwise
    step's output_on_chip and the pointwise one's input_on_chip name the other step (a KernelPair "DepSep").
    The depthwise output never reaches DRAM and the pair is one kernel (cost/gpu.py prices both)."""
    gpu = plan.platform.gpu
    if gpu is None or tuple(int(x) for x in gpu.compute_capability.split(".")[:2]) < DEPSEP_MIN_CC:
        return
    for s in steps:
        if (s.op != "Conv" or s.device != "gpu" or id(s) in dead or s.precision != "int8" or len(s.outputs) != 1
                or s.out_precision not in ("", "int8") or not s.inputs or not s.inputs[0].shape
                or s.outputs[0].name in graph_outputs):
            continue
        group = int(s.members[0].attributes.get("group", 1))
        if group <= 1 or s.inputs[0].shape[1] != group:
            continue                                  # not depthwise
        readers = [r for r in by_input.get(s.outputs[0].name, ()) if id(r) not in dead]
        if len(readers) != 1:
            continue
        r = readers[0]
        if (r.op != "Conv" or r.device != "gpu" or r.precision != "int8" or r.conv is None
                or tuple(r.conv[0]) != (1, 1) or int(r.members[0].attributes.get("group", 1)) != 1
                or r.inputs[0] is not s.outputs[0] and r.inputs[0].name != s.outputs[0].name
                or s.output_on_chip is not None or r.input_on_chip is not None):
            continue
        s.output_on_chip, r.input_on_chip = KernelPair("DepSep", r.name), KernelPair("DepSep", s.name)
        plan.decisions.append(Decision(r.name, "fuse", f"one kernel with {s.name}",
                                       "INT8 depthwise + pointwise conv: TensorRT's DepSepConvolution (CC >= 7.2); "
                                       "the depthwise output stays on chip"))


def _pair_conv_pool(plan, steps: list[Step], dead: set[int], by_input: dict, graph_outputs: set) -> None:
    """Mark GPU INT8 conv -> pooling pairs that run as one ConvActPool kernel: the conv step gets
    output_on_chip, the pooling step input_on_chip (a KernelPair "ConvActPool"); the conv output never reaches
    DRAM (cost/gpu.py).
    gpu_tensorrt.md s5.2 "Convolution + Pooling (same precision; seen as LayerType ConvActPool)"; the trex A100
    ResNet engines (validation/data/trex/a100-resnet50) show it in INT8 only: "conv1.weight + QuantizeLinear_7 +
    Conv_9 + MaxPool_12" is one ConvActPool layer in qat-residual, while the FP16 and FP32 engines and the
    Xavier FP16 GoogLeNet profile run the pooling as its own layer."""
    for s in steps:
        if (s.op != "Conv" or s.device != "gpu" or id(s) in dead or s.precision != "int8" or len(s.outputs) != 1
                or s.out_precision not in ("", "int8") or s.outputs[0].name in graph_outputs
                or s.output_on_chip is not None):
            continue
        readers = [r for r in by_input.get(s.outputs[0].name, ()) if id(r) not in dead]
        if len(readers) != 1:
            continue
        r = readers[0]
        if (r.op not in WINDOW_POOLS or r.device != "gpu" or r.precision != "int8" or len(r.members) != 1
                or r.out_precision not in ("", "int8")):
            continue
        s.output_on_chip, r.input_on_chip = KernelPair("ConvActPool", r.name), KernelPair("ConvActPool", s.name)
        plan.decisions.append(Decision(r.name, "fuse", f"one kernel with {s.name}",
                                       "INT8 convolution + pooling: TensorRT's ConvActPool; the conv output "
                                       "stays on chip"))


def _mark_shared_concat_inputs(steps: list[Step], dead: set[int], by_input: dict) -> None:
    """A tensor is one buffer, so TensorRT can write it in place into one concatenated buffer only: a tensor
    that several GPU Concats read (DenseNet: every feature map feeds every later concat of its block) is
    written in place into the first and copied into every other (Step.copied_inputs, priced by
    cost/gpu.py as the copy rows of gpu_tensorrt.md s4.2: "<tensor> copy" layers, concat copies)."""
    if not any(s.op == "Concat" and s.device == "gpu" for s in steps):
        return                              # the common case on the DLA: no tensor to look at
    for name, readers in by_input.items():
        cats = [r for r in readers if r.op == "Concat" and r.device == "gpu" and id(r) not in dead]
        for r in cats[1:]:
            if name not in r.copied_inputs:
                r.copied_inputs += (name,)


def toposort(steps: list[Step]) -> list[Step]:
    """Stable topological order of steps: a fused step moves after the producers of all its inputs. Steps in
    order already (the common case: no fused residual reads a later step's output) come back as they are,
    which is what the search below returns for them."""
    producer = {t.name: i for i, s in enumerate(steps) for t in s.outputs}   # tensor -> index of its step
    if all(producer.get(t.name, -1) < i for i, s in enumerate(steps) for t in s.inputs):
        return steps
    done = [False] * len(steps)
    out: list[Step] = []

    def visit(i: int) -> None:
        done[i] = True
        for t in steps[i].inputs:
            p = producer.get(t.name)
            if p is not None and not done[p]:
                visit(p)
        out.append(steps[i])

    for i in range(len(steps)):
        if not done[i]:
            visit(i)
    return out


def _closed_region(tensor: str, by_input: dict, ok) -> list[Step] | None:
    """The pointwise steps reading `tensor` that together form one closed sub-graph with one output.

    Every reader of `tensor` must join (else the tensor is needed elsewhere and cannot be fused away);
    readers of inner outputs join until exactly one output leaves the region. At most one operand may
    come from outside (a residual Add). Covers chains (BN -> ReLU), residual Add, SiLU (Sigmoid and Mul
    both reading x) and Mish decomposed (Softplus -> Tanh -> Mul). Returns the steps in order, sink last.
    """
    region = list(by_input.get(tensor, []))
    if not region or not all(ok(s) for s in region):
        return None
    if len(region) == 1 and len(region[0].outputs) == 1:
        return region if _joins_alone(region[0], tensor) else None   # a chain link or a residual Add
    while len(region) <= MAX_REGION:
        produced = {o.name for s in region for o in s.outputs} | {tensor}
        open_outs = [o.name for s in region for o in s.outputs
                     if not by_input.get(o.name) or any(u not in region for u in by_input[o.name])]
        if len(open_outs) == 1:
            outside = {i.name for s in region for i in s.inputs if i.name not in produced}
            if len(outside) > 1 or (outside and not any(s.op in JOINS for s in region)):
                return None
            return _ordered(region)
        new = [u for o in open_outs for u in by_input.get(o, []) if u not in region and ok(u)]
        if not new:
            return None
        region.extend({id(u): u for u in new}.values())  # Steps are unhashable dataclasses
    return None


def _sdp_split(region: list[Step], tensor: str) -> str:
    """Why one DLA SDP pass that produces `tensor` cannot also run `region` (module docstring), or "".

    A member that takes two operands from the pass's own stream (`tensor` or an output inside the region)
    needs one of them from memory; a member that reads a LUT op's output needs a pass after the LUT."""
    stream = {tensor}
    for s in region:
        stream.update(o.name for o in s.outputs)
    lut = {o.name: s for s in region if s.op in LUT_OPS for o in s.outputs}
    why = []
    for s in region:
        names = [t.name for t in s.inputs]
        if len(names) > 1 and all(n in stream for n in names):
            why.append(f"{s.name} ({s.op}) multiplies {tensor} by a function of itself: the SDP takes a second "
                       f"operand only from memory, so {tensor} is written to DRAM and read back")
        src = next((lut[n] for n in names if n in lut), None)
        if src is not None:
            why.append(f"{s.name} reads the {src.op} LUT output, the last stage of an SDP pass: another pass")
    return "; ".join(why)


def _joins_alone(step: Step, tensor: str) -> bool:
    """Whether the only reader of `tensor`, a step with one output, is a closed region by itself: what the
    loop in _closed_region decides for a region of one step (at most one operand from outside, and only
    for an Add, Sum or Mul)."""
    outside = {t.name for t in step.inputs}
    outside.discard(tensor)
    return not outside or (len(outside) == 1 and step.op in JOINS)


def _ordered(region: list[Step]) -> list[Step]:
    """Topological order inside the region, so the sink comes last."""
    produced_here = {o.name for s in region for o in s.outputs}
    done: set[str] = set()
    out: list[Step] = []
    pending = list(region)
    while pending:
        ready = [s for s in pending if all(i.name not in produced_here or i.name in done for i in s.inputs)]
        if not ready:
            return region
        for s in ready:
            out.append(s)
            done.update(o.name for o in s.outputs)
            pending.remove(s)
    return out
