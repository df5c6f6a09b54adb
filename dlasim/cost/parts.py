"""What a cost function returns: a StepCost (compute, memory, overhead, the bound) with its CostParts (the
pieces the explain layer attributes to causes) and a GPU kernel's Tiling; `finish` combines the pieces. The
cost models (copies, dla, gpu) import these from here, so the package imports the models without a cycle."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields


# CostParts and Tiling are frozen (assigning a field raises FrozenInstanceError): the DLA conv results the cost
# model reuses share one CostParts between the rows of every estimate (cost/dla.py _conv_cost), and a changed
# one would change them all. dataclasses.replace makes a changed copy. The generated __init__ of a frozen
# dataclass sets each field through object.__setattr__, six times slower than a plain one for CostParts' 23
# fields, and the cost model builds one per step per estimate: so __init__ writes the fields it is given
# straight into the instance __dict__ and the others read their class-level defaults.
@dataclass(frozen=True, init=False)
class Tiling:
    """The CTA tile a GPU implicit GEMM runs (cost/gpu.py gemm_time): the share of the tiles' work that is
    real (tile_eff), of the SM slots the waves fill (wave_eff), of the padded GEMM K that is real (k_eff), and
    the kernel's rate over the GPU peak (rate_eff: efficiency x CTAs per SM)."""
    tile_eff: float
    wave_eff: float
    k_eff: float
    rate_eff: float

    def __init__(self, tile_eff: float, wave_eff: float, k_eff: float, rate_eff: float):
        d = self.__dict__
        d["tile_eff"] = tile_eff
        d["wave_eff"] = wave_eff
        d["k_eff"] = k_eff
        d["rate_eff"] = rate_eff


@dataclass(frozen=True, init=False)
class CostParts:
    """The pieces of a step's cost that the causes split reads (dlasim/explainer/gap.py), all times in seconds; the
    defaults mean "not part of this step's cost"."""
    ideal_s: float | None = None        # the MACs at the peak of the precision the step runs (None: not computed)
    floor_s: float = 0.0                # what the kernel floor adds above max(compute, memory)
    ramp_s: float = 0.0                 # GPU: a tensor-core kernel's fixed ramp/tail, inside compute_s
    stream_ramp_s: float = 0.0          # GPU: the same ramp, inside a GEMV's memory_s
    float_io_s: float = 0.0             # GPU: memory time of an INT8 layer's FP16/FP32 output and residual bytes
    kernel_class: str = ""              # GPU: the kernel class (cost/gpu.py kernel_class)
    simt: bool = False                  # GPU: a CUDA-core (SIMT) convolution, no tensor-core tiles
    tiling: Tiling | None = None        # GPU: the dense kernel's tiles
    sparse: str = "off"                 # 2:4 weights: "off" (not asked, not a conv), "ineligible", "too_small", "used"
    sparse_reason: str = ""             # why not "used"
    dense_s: float = 0.0                # eligible for 2:4: the dense and the sparse kernel's times
    sparse_s: float = 0.0
    sparse_tiling: Tiling | None = None  # GPU: the sparse kernel's tiles, when it runs
    padding_s: float = 0.0              # DLA: compute above the ideal from channel padding on the MAC array
    rate_loss_s: float | None = None    # DLA conv: slower-unit cycles + MAC efficiency loss (None: not a DLA conv)
    refetch_s: float = 0.0              # DLA: DRAM time of the CBUF refetch, inside memory_s
    weight_stall_s: float = 0.0         # DLA: weight fetches the MAC array waits for, inside compute_s
    output_bound: bool = False          # DLA: the SDP/PDP output rate, not the MACs, sets compute
    in_place: bool = False              # nothing moves (concat elimination, a view)
    concat_copy: bool = False           # GPU Concat: inputs copied in (Step.copied_inputs)
    copy_kernels: int = 0               # GPU Concat: the copy kernels that bring them in, one per tensor
    fused_with: str = ""                # the step whose kernel this one runs in (Step.input_on_chip): no launch, floor
    unmodelled: bool = False            # an op dlasim does not know, priced as two passes over its data

    def __init__(self, **parts):
        if not _PARTS_NAMES.issuperset(parts):
            raise TypeError(f"CostParts: unknown field(s) {', '.join(sorted(set(parts) - _PARTS_NAMES))}")
        self.__dict__.update(parts)

    def to_dict(self) -> dict:
        """The fields that differ from their defaults, tilings as dicts (a step's "parts" in JSON)."""
        out = {}
        for name, default in _PARTS_DEFAULTS:
            v = getattr(self, name)
            if v != default:
                out[name] = {t: getattr(v, t) for t in _TILING_FIELDS} if type(v) is Tiling else v
        return out


_PARTS_DEFAULTS = tuple((f.name, f.default) for f in fields(CostParts))
_PARTS_NAMES = frozenset(name for name, _ in _PARTS_DEFAULTS)
_TILING_FIELDS = tuple(f.name for f in fields(Tiling))


@dataclass(slots=True)
class StepCost:
    compute_s: float
    memory_s: float
    overhead_s: float
    total_s: float
    bound: str                  # "compute" | "memory" | "overhead"
    macs: int = 0
    bytes: int = 0
    parts: CostParts = field(default_factory=CostParts)


def entry(owner, c: StepCost) -> tuple:
    """A cost cache's entry: (owner, then c's fields in StepCost's order), so that StepCost(*entry[1:]) is a
    new record equal to `c`. One tuple, not a tuple holding a StepCost: the caches keep thousands of entries,
    and each object they hold is one more for every full garbage collection of the process to visit."""
    return (owner, c.compute_s, c.memory_s, c.overhead_s, c.total_s, c.bound, c.macs, c.bytes, c.parts)


def finish(compute_s: float, memory_s: float, overhead_s: float, macs: int = 0, nbytes: int = 0,
           floor_s: float = 0.0, **parts) -> StepCost:
    """Combine parts: max(compute, memory, floor) + overhead, and name the bound. `parts`: CostParts fields."""
    body = max(compute_s, memory_s)
    bound = "compute" if compute_s >= memory_s else "memory"
    excess = 0.0
    if floor_s > body:
        excess = floor_s - body
        body = floor_s
        bound = "overhead"
    total = body + overhead_s
    if overhead_s > body:
        bound = "overhead"
    return StepCost(compute_s, memory_s, overhead_s, total, bound, int(macs), int(nbytes),
                    CostParts(floor_s=excess, **parts))


def elems(tensors) -> int:
    """Elements of all `tensors` together (a loop: cheaper than sum() over a generator for one or two)."""
    total = 0
    for t in tensors:
        total += math.prod(t.shape)
    return total
