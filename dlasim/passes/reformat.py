"""Insert reformat copies, GPU<->DLA transitions and DLA loadable launches as explicit steps.

TensorRT's engine I/O is FP32 linear unless --inputIOFormats/--outputIOFormats say otherwise; the DLA
reads and writes its native formats (kDLA_LINEAR, kDLA_HWC4, kCHW16 for FP16, kCHW32 for INT8), so a
GPU reformat kernel runs at every engine boundary and around every DLA subgraph (reference/dla.md s3.4
"I/O formats on DLA", "Reformat insertion"; gpu_tensorrt.md s3.1). A matching I/O format removes the copy.

Inside a GPU engine, convolutions read and write their tensor-core format (FP16 hwc8, INT8 chw32; a conv that
reads the network's image, an input of <= 4 channels, reads it in FP16 hwc4 / INT8 chw4: formats.toml
[gpu_image_formats], sourced by that network-input copy only, so internal tensors and GEMMs keep hwc8), LRN
only the linear one, and pooling, pointwise and concatenation layers keep the format of their input: a
reformat runs where a producer's format is not the one its consumer needs (the Xavier GoogLeNet profile,
validation/data/haxconn/profiles/googlenet_gpu_mark_at_-1.profile: "pool1/norm1 input reformatter",
"conv2/3x3_reduce input reformatter", "conv2/norm2 input reformatter", then the first inception convs'
input reformatter after the pool that follows norm2).
"""
from __future__ import annotations

import math

from .. import rules
from ..ops import MAC_OPS
from ..plan import Copy, Decision, Step

BYTES = {"fp32": 4, "fp16": 2, "int8": 1}


def native_format(device: str, precision: str, tf32: bool = False) -> str:
    """The format an engine's convolutions read and write (hardware_specs/rules/formats.toml [native_formats]):
    DLA kCHW16/kCHW32; GPU tensor-core FP16 NHWC8 / INT8 NC/32HW32, FP32 channel-major for TF32 kernels, else
    linear. The DLA has no FP32 (dla.md s3.1): anything but INT8 there is FP16."""
    if device == "dla":
        precision = "int8" if precision == "int8" else "fp16"
    elif tf32 and precision == "fp32":
        precision = "tf32"
    return rules.RULES.formats.native[(device, precision)]


def image_input(step: Step, tensor) -> bool:
    """A DLA step whose conv reads the network input `tensor` of 1-4 channels: image-input mode
    (dla.md s1.2: channel extension for 1-, 3- or 4-channel inputs, exposed as kDLA_HWC4, C' in {1, 4, 4},
    s3.4), so the copy into DLA memory writes that format. Only an input read as kDLA_HWC4 is an image
    input: one given as kCHW16/kCHW32 (or kDLA_LINEAR) is read by a direct convolution, C padded to the
    32-byte atom (s1.4); Step.image_input records which (cost/dla.py prices the conv so)."""
    a = step.anchor
    return (a is not None and a.op == "Conv" and len(tensor.shape) == 4 and tensor.shape[1] <= 4)


def copy_bytes(shape, src: tuple[str, str], dst: tuple[str, str]) -> tuple[int, int]:
    """(bytes read, bytes written) of a copy from format src to dst, channels padded per format."""
    align = rules.RULES.formats.channel_align
    def padded(fmt):
        if len(shape) < 2:
            return math.prod(shape)
        a = 1 if fmt == "dla_hwc4" and shape[1] == 1 else align[fmt]   # C' = 1 for C = 1 (dla.md s3.4)
        return math.prod(shape) // shape[1] * (-(-shape[1] // a) * a)
    return padded(src[1]) * BYTES[src[0]], padded(dst[1]) * BYTES[dst[0]]


def insert_reformats(plan) -> None:
    g = plan.graph
    in_fmts, out_fmts = plan.options.input_io, plan.options.output_io
    formats = rules.RULES.formats
    linear_only, dla_inputs, dla_outputs = formats.gpu_linear_only_ops, formats.dla_inputs, formats.dla_outputs
    producer = {t.name: s for s in plan.steps for t in s.outputs}
    net_inputs = {t: (in_fmts[i] if i < len(in_fmts) else (in_fmts[-1] if in_fmts else ("fp32", "linear")))
                  for i, t in enumerate(g.inputs)}
    out: list[Step] = []
    made: dict[tuple, Step] = {}
    gpu_fmt: dict[str, tuple[str, str]] = {}          # GPU-produced tensor -> the format it is written in
    tf32 = plan.platform.gpu is not None and plan.platform.gpu.tf32
    launched: set[int] = set()
    transitions = 0

    def add_copy(kind, tensor, src, dst, before_device, why, from_device="host"):
        key = (tensor.name, dst)
        if key in made:
            return
        rd, wr = copy_bytes(tensor.shape, src, dst)
        name = f"{tensor.name} {'transition' if kind == 'transition' else 'reformat'} " \
               f"({src[0]}:{src[1]} -> {dst[0]}:{dst[1]})"
        st = Step(name=name, kind=kind, op="Transition" if kind == "transition" else "Reformat", device="gpu",
                  precision=dst[0], inputs=[tensor], outputs=[tensor],
                  copy=Copy(src, dst, rd, wr, from_device, before_device))
        made[key] = st
        out.append(st)
        plan.decisions.append(Decision(tensor.name, "reformat", f"insert {kind}", why))

    for step in plan.steps:
        if step.device == "dla" and step.subgraph not in launched:
            launched.add(step.subgraph)
            out.append(Step(name=f"DLA loadable {step.subgraph} launch", kind="overhead", op="Launch",
                            device="dla", precision=step.precision, subgraph=step.subgraph))
        if step.qdq is not None:               # a Q/DQ that did not fuse (passes/qdq.py rule 5): the copy itself
            _qdq_copy(step, net_inputs, gpu_fmt, producer, tf32)
            out.append(step)
            continue
        anchor = step.anchor if step.kind == "layer" else None
        op = anchor.op if anchor is not None else step.op
        need = None                       # the format a GPU step needs; None: it takes what it is given
        if step.device == "gpu":
            if op in linear_only or step.simt:
                need = (step.precision, "linear")
            elif op in MAC_OPS:                   # tensor-core conv/GEMM kernels: their native format
                need = (step.precision, native_format("gpu", step.precision, tf32))
        seen = None                       # the format of the step's first input as it reads it
        wanted = need or (step.precision, native_format(step.device, step.precision))
        for i, t in enumerate(step.inputs):
            want = wanted
            first = (i == 0 and need is not None and op == "Conv" and reads_image(t, net_inputs, producer)
                     and gpu_image_format(step.precision, t.shape))
            if first:
                want = (step.precision, first)    # an image input: the first-layer kernel's format
            if i and step.out_precision:      # a fused residual is read in the output precision (qdq.py rule 3)
                want = (step.out_precision, wanted[1])
            if t.name in net_inputs:
                have = net_inputs[t.name]
                ok = (have[0] == step.precision and
                      (have[1] in dla_inputs.get(step.precision, ()) if step.device == "dla"
                       else True))
                if step.device == "gpu" and have == ("fp32", "linear") and step.precision == "fp32":
                    ok = True
                image = i == 0 and step.device == "dla" and image_input(step, t)
                if not ok:
                    if image:
                        want = (want[0], "dla_hwc4")
                    add_copy("reformat", t, have, want, step.device,
                             f"network input {have[0]}:{have[1]} -> {step.device.upper()} {want[0]}:{want[1]}")
                step.image_input = image and (not ok or have[1] == "dla_hwc4")
                continue
            p = producer.get(t.name)
            if p is None:
                continue
            if p.device != step.device or (p.device == "dla" and p.subgraph != step.subgraph):
                transitions += (t.name, step.device, step.subgraph) not in made
                made.setdefault((t.name, step.device, step.subgraph), step)
                add_copy("transition", t, (p.precision, native_format(p.device, p.precision)), want, step.device,
                         f"{p.device.upper()} -> {step.device.upper()} hand-over", p.device)
            elif p.device == "gpu":
                have = gpu_fmt.get(t.name) or (_written(p), native_format("gpu", _written(p), tf32))
                if need is None and have[0] == step.precision:
                    want = have
                if have != want:
                    why = (f"precision change {p.precision} -> {step.precision}" if have[0] != want[0] else
                           f"{op} reads {want[1]}, {p.op} wrote {have[1]}")
                    add_copy("reformat", t, have, want, step.device, why, "gpu")
            if seen is None:
                seen = want
        if step.device == "gpu":
            fmt = need or seen or (step.precision, native_format("gpu", step.precision, tf32))
            for t in step.outputs:
                gpu_fmt[t.name] = (_written(step), fmt[1])
        out.append(step)
    # network outputs back to the requested (default FP32 linear) format
    for i, name in enumerate(g.outputs):
        t = g.tensors[plan.resolve(name)]
        p = producer.get(t.name)
        if p is None:
            continue
        want = out_fmts[i] if i < len(out_fmts) else (out_fmts[-1] if out_fmts else ("fp32", "linear"))
        have = gpu_fmt.get(t.name) or (_written(p), native_format(p.device, _written(p)))
        if p.device == "dla":
            ok = want[0] == p.precision and want[1] in dla_outputs.get(p.precision, ())
        else:
            ok = want[0] == _written(p)
        if not ok:
            add_copy("reformat", t, have, want, "host",
                     f"network output {p.device.upper()} {have[0]}:{have[1]} -> {want[0]}:{want[1]}", p.device)
    plan.steps = out
    plan.transitions = transitions


def _written(step: Step) -> str:
    """The precision a step writes its outputs in (an INT8 conv no Q follows writes FP16, passes/qdq.py)."""
    return step.out_precision or step.precision


def reads_image(t, net_inputs: dict, producer: dict) -> bool:
    """Whether tensor `t` is the network's input as it arrives: the input itself, or the output of the Q/DQ
    that quantizes it (the trex A100 qat engine's QuantizeLinear_2 on the image). The image formats of
    formats.toml [gpu_image_formats] are sourced by those copies alone (gpu_tensorrt.md s3.3)."""
    if t.name in net_inputs:
        return True
    p = producer.get(t.name)
    return p is not None and p.qdq is not None and p.inputs[0].name in net_inputs


def gpu_image_format(precision: str, shape) -> str | None:
    """The format a GPU convolution at `precision` reads a 4-D input of `shape` in when that input has no more
    channels than the format's vector (FP16 hwc4, INT8 chw4 for C <= 4, the image; formats.toml [gpu_image_formats]),
    else None (it reads its native format)."""
    formats = rules.RULES.formats
    fmt = formats.gpu_image.get(precision)
    return fmt if fmt and len(shape) == 4 and shape[1] <= formats.channel_align[fmt] else None


def _qdq_copy(step: Step, net_inputs: dict, gpu_fmt: dict, producer: dict, tf32: bool) -> None:
    """Formats and bytes of a Q/DQ that became a reformat: from the format its input was written in to
    INT8 chw32 (a Q: what INT8 tensor-core convolutions read; chw4 for an image of <= 4 channels, as the trex
    engines' input Q writes, gpu_tensorrt.md s3.3) or, for a DQ, to the higher precision in the same layout
    (trex qat-residual "DequantizeLinear_291": Int8 chw32 -> FP32)."""
    t = step.inputs[0]
    src_p, dst_p = step.qdq
    p = producer.get(t.name)
    if t.name in net_inputs:
        have = net_inputs[t.name]
    else:
        have = gpu_fmt.get(t.name) or ((_written(p), native_format("gpu", _written(p), tf32)) if p is not None
                                       else (src_p, "linear"))
    image = gpu_image_format("int8", t.shape) if t.name in net_inputs else None
    dst = (dst_p, image or native_format("gpu", "int8")) if dst_p == "int8" else (dst_p, have[1])
    rd, wr = copy_bytes(t.shape, have, dst)
    step.copy = Copy(have, dst, rd, wr, "gpu", "gpu")
    for o in step.outputs:
        gpu_fmt[o.name] = dst
