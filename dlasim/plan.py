"""What the passes produce: a Plan of Steps (fused layers, reformats, transitions, overheads).

A Step is the unit that gets a cost: one TensorRT engine layer (possibly several original layers fused),
a reformat copy, a GPU<->DLA transition, or a fixed overhead such as a DLA loadable launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .build_options import BuildOptions
from .hardware import Platform
from .ir import Graph, Layer, Tensor
from .ops import MAC_OPS
from .precision import run_precision
from .records import fast_init


def joins_bindings(g: Graph, source: str, outputs) -> bool:
    """Whether a layer reading network input `source` writes a network output (`outputs`: tensor names): the
    application binds the two as separate buffers, so even a no-op or a view between them is a copy kernel in
    the engine (passes/fold.py keeps it, cost/gpu.py prices it as one)."""
    return source in g.inputs and any(t in g.outputs for t in outputs)


class FallbackKind(str, Enum):
    """Why a layer of a DLA build runs on the GPU, decided where the pass decides it (the reason text beside
    it is for people)."""
    UNKNOWN_OP = "unknown_op"                  # an operator dlasim does not know (passes/dla_support.py)
    UNSUPPORTED_OP = "unsupported_op"          # not a DLA layer (the spec's [dla.support] ops)
    UNSUPPORTED_PARAMS = "unsupported_params"  # a DLA layer whose shapes, attributes or batch the DLA cannot run
    LOADABLE_LIMIT = "loadable_limit"          # past the loadables one DLA core holds (passes/partition.py)


@fast_init
@dataclass(frozen=True, slots=True)
class Fallback:
    """A layer of a DLA build that runs on the GPU: its name and op, the kind of reason and the reason."""
    name: str
    op: str
    reason: str
    kind: FallbackKind

    def to_dict(self) -> dict:
        return {"name": self.name, "op": self.op, "reason": self.reason, "kind": self.kind.value}


@fast_init
@dataclass(frozen=True, slots=True)
class Copy:
    """What a reformat or transition step copies (passes/reformat.py): the formats, each (precision, layout),
    the bytes read and written (channels padded per layout), and the devices it copies between ("host": the
    network's own inputs and outputs)."""
    src: tuple[str, str]
    dst: tuple[str, str]
    bytes_read: int
    bytes_written: int
    from_device: str
    to_device: str

    @property
    def touches_dla(self) -> bool:
        return "dla" in (self.from_device, self.to_device)


@fast_init
@dataclass(frozen=True, slots=True)
class KernelPair:
    """One half of two GPU layers that TensorRT runs as one kernel (passes/fuse.py pair_kernels): the fused
    kernel ("DepSep": INT8 depthwise + pointwise conv; "ConvActPool": INT8 conv + pooling) and the other step."""
    kernel: str
    partner: str


@dataclass(slots=True)
class Step:
    name: str
    kind: str                    # "layer" | "reformat" | "transition" | "overhead"
    op: str                      # anchor op ("Conv", "MaxPool", ...) or "Reformat" / "Transition" / "Launch"
    device: str                  # "dla" | "gpu"
    precision: str = "fp16"      # "fp32" | "fp16" | "int8"
    members: list[Layer] = field(default_factory=list)   # original layers fused into this step
    inputs: list[Tensor] = field(default_factory=list)   # activations read from outside the step
    outputs: list[Tensor] = field(default_factory=list)  # activations written for other steps
    subgraph: int = -1           # DLA loadable index, -1 on the GPU
    reason: str = ""             # why this device / precision, when it is not the requested one
    # facts the passes decide and later passes and the cost model read
    dla_unsupported: FallbackKind | None = None   # DLA builds: why the DLA cannot run members[0] (None: it can)
    precision_unsupported: bool = False       # runs wider than requested: no kernel for the op (passes/place.py)
    simt: bool = False                        # FP32 image-input conv on the CUDA cores (passes/place.py)
    qdq: tuple[str, str] | None = None        # a Q/DQ left as a copy: (precision in, precision out) (passes/qdq.py)
    copy: Copy | None = None                  # reformat and transition steps (passes/reformat.py)
    fused_pool: Layer | None = None           # DLA: the pooling layer the PDP runs after the conv (passes/fuse.py)
    horizontal_k: int = 0                     # GPU: output channels of horizontally fused convs, 0 if none
    copied_inputs: tuple[str, ...] = ()       # GPU Concat: the inputs copied in, not written in place
    image_input: bool = False                 # DLA conv: reads the network input as kDLA_HWC4 (passes/reformat.py)
    output_on_chip: KernelPair | None = None  # the output goes on chip to the partner (one kernel with it)
    input_on_chip: KernelPair | None = None   # the input comes on chip from the partner (one kernel with it)
    # (kernel, stride, pads, dilation) of members[0] when it is a Conv/ConvTranspose, parsed once by the fold
    # pass (ops.conv_params) and read by the DLA rules and the cost model. A Step lives for one build over an
    # unchanging graph, so this never goes stale; it describes members[0] only (fusion appends members).
    conv: tuple | None = field(default=None, repr=False, compare=False)
    # the precision the step writes its outputs (and reads a fused residual) in, when it differs from
    # `precision`: an INT8 convolution that no Q follows writes FP16 (passes/qdq.py rule 3); "" = precision
    out_precision: str = ""

    @property
    def layers(self) -> list[str]:
        return [l.name for l in self.members]

    @property
    def anchor(self) -> Layer | None:
        """The layer that sets the step's cost (the conv of conv+bn+relu), else the first member."""
        for l in self.members:
            if l.op in MAC_OPS:
                return l
        return self.members[0] if self.members else None


@fast_init
@dataclass(frozen=True, slots=True)
class Decision:
    """What a pass decided about a layer or step, and why (frozen: estimates share their plan's)."""
    layer: str
    pass_name: str
    action: str
    reason: str = ""


@dataclass
class Plan:
    """The build result; the passes (dlasim/passes) start from an empty one and fill it in, in order."""
    graph: Graph
    platform: Platform
    options: BuildOptions       # what the build was asked (gpu_fallback off where the platform has no GPU)
    batch: int                  # the graph's batch (options.batch may be None: the model's own)
    steps: list[Step] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    fallback: list[Fallback] = field(default_factory=list)
    dla_subgraphs: int = 0
    transitions: int = 0
    alias: dict[str, str] = field(default_factory=dict)   # folded tensor -> the tensor it stands for
    # the precision the GPU layers of a DLA build run instead of the GPU's for the requested one (builder.py:
    # a DLA INT8 build is timed with its GPU layers in FP16); None: run_precision("gpu", precision)
    gpu_precision: str | None = None
    # what the report gives the explain layer besides the costs (simulate.py estimate_plan: step_facts of each
    # step, the device peaks): made once per plan (a cached plan is estimated again and again), never copied
    # (dataclasses.replace, e.g. with another platform, resets it)
    report_facts: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def device(self) -> str:
        return self.options.device

    @property
    def precision(self) -> str:
        return self.options.precision

    @property
    def gpu_fallback(self) -> bool:
        return self.options.gpu_fallback

    def gpu_run_precision(self) -> str:
        """The precision GPU steps run (where they have kernels for it)."""
        return self.gpu_precision or run_precision("gpu", self.precision)

    @property
    def sparsity(self) -> str:
        return self.options.sparsity

    @property
    def dla_core(self) -> int:
        return self.options.dla_core

    def resolve(self, tensor: str) -> str:
        """The tensor a name stands for after no-op layers were folded away."""
        while tensor in self.alias:
            tensor = self.alias[tensor]
        return tensor
