"""Device placement (DLA or GPU, with TensorRT-style reasons) and per-step precision.

Placement follows TensorRT's GPU fallback mode (reference/dla.md s3.4): with --useDLACore every layer the
DLA supports goes to the DLA; the rest go to the GPU when fallback is allowed, and otherwise the build fails
naming the layer. Precision: the DLA runs FP16 or INT8 only (s3.1); some ops run FP16 when INT8 is asked
(s3.2 Activation row); GPU ops without INT8 kernels run FP16.
"""
from __future__ import annotations

from .. import rules
from ..errors import BuildError
from ..ops import QDQ, rule_op  # Q/DQ layers: their precision is the Q/DQ pass's (passes/qdq.py)
from ..plan import Decision, Fallback, FallbackKind
from ..precision import run_precision
from .dla_support import check_layer, oversized_tensors


def check_dla_support(plan) -> None:
    """Annotate every step with whether the DLA can run it (only when targeting the DLA)."""
    if plan.device != "dla":
        return
    dla = plan.platform.dla
    if dla is None:
        raise BuildError(f"{plan.platform.name} has no DLA; use device='gpu' (--device gpu)")
    prec = run_precision("dla", plan.precision, dla.precisions)
    g, batch = plan.graph, plan.batch
    supported = frozenset(dla.support.ops)      # built once per build: a set lookup per layer, not a list scan
    oversized = oversized_tensors(g, dla.support.tensor_dim_max)
    for step in plan.steps:
        layer = step.members[0]
        kind, reason = check_layer(g, layer, dla, prec, batch, step.conv, supported, oversized)
        step.dla_unsupported = kind
        if kind is not None:
            step.reason = reason
            plan.decisions.append(Decision(layer.name, "dla_support", "unsupported", reason))


def place(plan) -> None:
    """Assign devices; fail like TensorRT when a layer cannot run on the DLA and fallback is off."""
    if plan.device == "gpu":
        for step in plan.steps:
            step.device = "gpu"
        return
    for step in plan.steps:
        if step.dla_unsupported is None:
            step.device = "dla"
            continue
        layer = step.members[0]
        if not plan.gpu_fallback:
            # the known rewrite of an op the DLA lacks; a parameter rule (dla_support.py) says its own remedy
            hint = (rules.RULES.dla_rewrites.get(layer.op)
                    if step.dla_unsupported is FallbackKind.UNSUPPORTED_OP else None)
            raise BuildError(f"layer {layer.name!r} ({layer.op}) is not supported on DLA: {step.reason}; "
                             f"GPU fallback is off (gpu_fallback=False; trtexec: no --allowGPUFallback)"
                             + (f"; {hint}" if hint else ""))
        step.device = "gpu"
        plan.fallback.append(Fallback(layer.name, layer.op, step.reason, step.dla_unsupported))
        plan.decisions.append(Decision(layer.name, "place", "gpu fallback", step.reason))


def _image_conv(step, g) -> bool:
    """A convolution of <= 4 input channels (an image input)."""
    x = g.tensors[step.members[0].inputs[0]].shape
    return len(x) == 4 and x[1] <= 4


def assign_precision(plan) -> None:
    """Per-step precision from the requested one and what each engine supports.

    On a GPU with TF32 tensor cores an FP32 convolution of an image input (<= 4 channels) runs a CUDA-core
    (SIMT) kernel in the linear format instead: the A100 FP32 ResNet-18 engine's first layer is
    `ampere_scudnn_128x64_relu_xregs_large_nn_v1` on "Row major linear FP32", every other conv an
    `..._tf32f32_...nhwckrsc_nhwc...` kernel (validation/data/trex/a100-resnet50/fp32/resnet.onnx.engine.graph.json;
    gpu_tensorrt.md s5.3: the C=3 input needs a special first-layer kernel). Step.simt marks it.
    """
    want = plan.precision
    dla = plan.platform.dla
    # read once per build, not per step
    dla_p = run_precision("dla", want, dla.precisions) if dla is not None else None
    dla_fp16_only = frozenset(dla.support.int8_fp16_only_ops) if dla is not None else frozenset()
    gpu_p = plan.gpu_run_precision()
    tf32 = plan.platform.gpu is not None and plan.platform.gpu.tf32
    g = plan.graph
    for step in plan.steps:
        if step.device == "dla":
            p = dla_p
            if want == "fp32":
                step.reason = step.reason or "DLA runs FP16 or INT8 only"
            if p == "int8" and dla_fp16_only:
                slow = [l.op for l in step.members if l.op in dla_fp16_only]
                if slow:
                    p = "fp16"
                    step.reason = f"INT8 {min(slow)} runs in FP16 on DLA"
                    _mark_unsupported(plan, step, p)
        else:
            p, why = gpu_precision(step, gpu_p)
            if why:
                step.reason = step.reason or why
                _mark_unsupported(plan, step, p)
        step.precision = p
        if p == "fp32" and step.device == "gpu" and tf32 and step.op == "Conv" and _image_conv(step, g):
            step.simt = True


def gpu_precision(step, gpu_p: str) -> tuple[str, str]:
    """(precision, why it is not `gpu_p`, else "") of a GPU step, `gpu_p` the GPU's precision for the one asked:
    an INT8 build runs FP16 where a member has no INT8 kernel (hardware_specs/rules/precision.toml). Also for
    a DLA step the partition pass moves to the GPU (passes/partition.py): it runs as the GPU runs it."""
    if gpu_p == "int8":
        int8_ops = rules.RULES.gpu_int8_ops
        odd = [l.op for l in step.members
               if l.op not in int8_ops and rule_op(l.op) not in int8_ops and l.op not in QDQ]
        if odd:
            return "fp16", f"{min(odd)} has no INT8 kernel; runs in FP16"
    return gpu_p, ""


def _mark_unsupported(plan, step, precision: str) -> None:
    """The step runs in `precision`, not the requested one: flag it and record why."""
    step.precision_unsupported = True
    plan.decisions.append(Decision(step.name, "precision", precision, step.reason))
