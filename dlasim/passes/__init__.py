"""TensorRT-like build: one ordered list of passes turning a Graph into a Plan.

Order follows TensorRT's builder: no-ops are folded, each layer is checked against the DLA rules (on the
original layers, as TensorRT does before handing regions to the DLA compiler), layers are placed with a
reason for every fallback, precisions are set, layers fuse per engine, DLA regions become loadables, and
reformat / transition / launch steps are inserted. Every pass records its decisions in the Plan.
"""
from __future__ import annotations

from ..build_options import BuildOptions
from ..errors import DlasimError
from ..hardware import Platform, check_dla_core
from ..ir import Graph
from ..plan import Plan
from . import dla_support
from .fold import fold
from .fuse import fuse, pair_kernels
from .partition import partition
from .place import assign_precision, check_dla_support, place
from .qdq import quantize
from .reformat import insert_reformats

PASSES = (fold, check_dla_support, place, assign_precision, fuse, quantize, partition, insert_reformats, pair_kernels)


def build_plan(graph: Graph, platform: Platform, options: BuildOptions = BuildOptions(),
               gpu_precision: str | None = None) -> Plan:
    """Run every pass over `graph` (already at the wanted batch and shapes) for `platform`; `gpu_precision`
    (Plan.gpu_precision) sets what the GPU layers of a DLA build run."""
    check_dla_core(platform, options.dla_core)
    if options.device == "gpu" and platform.gpu is None:
        raise DlasimError(f"{platform.name} has no GPU; use device='dla' (--device dla)")
    if options.device == "dla" and platform.gpu is None and options.gpu_fallback:
        options = options.replace(gpu_fallback=False)
    plan = Plan(graph, platform, options, graph.batch, gpu_precision=gpu_precision)
    for p in PASSES:
        p(plan)
    return plan


# Plans of the graph estimated last, by platform and build options. A Plan is a pure function of these:
# the passes read nothing else. The graph is recognised by its full content and the identity of the Graph,
# Layer and Tensor objects that hold it (Graph.fingerprint(identity=True)): a graph changed in place misses,
# and a Plan, whose steps refer to those objects and whose costs read them, is reused only while they hold
# the content it was built from. The entry keeps them alive, so their ids cannot be reused; the platform is
# matched by identity (Platform is frozen) and kept alive the same way. Only the last graph's Plans are kept
# (at most PLANS_PER_GRAPH): a loop over new graphs frees each one's Plans at the next graph, which is
# measurably faster for it than keeping more (cached Plans that outlive a call make the allocator and the
# garbage collector slower: about +25% CPU per new MobileNetV3 candidate with two graphs' Plans kept, +50%
# with 64). A Graph object not estimated last is not fingerprinted: nothing can be reused for it, and the
# fingerprint was a fifth of a new graph's estimate (0.32 ms of about 1.6 for ResNet-50), the NAS loop's case.
# The entry remembers the object only (no content, no Plans); estimating that object again fingerprints it
# and builds (its content may have changed since), and from then on its Plans are reused while the content
# holds. Only estimate() uses it, and estimate_plan only reads a Plan; build() hands out a fresh Plan,
# which callers may change. A build that fails is not stored.
_LAST: list = [None]       # [(graph, content or None: seen once, {(platform id, options...): (platform, Plan)})]
PLANS_PER_GRAPH = 8


def cached_plan(graph: Graph, platform: Platform, options: BuildOptions = BuildOptions(),
                gpu_precision: str | None = None) -> Plan:
    """build_plan's Plan, reused when the graph estimated last, the same object holding the same content, is
    built again with the same platform and options. The Plan returned is shared: read it, never change it."""
    entry = _LAST[0]                   # one (graph, content, plans) triple, read and replaced whole (threads)
    if entry is None or entry[0] is not graph:
        _LAST[0] = None                    # free the previous graph's Plans before building
        plan = build_plan(graph, platform, options, gpu_precision)
        _LAST[0] = (graph, None, {})       # seen once: fingerprinted if it comes again
        return plan
    try:
        content = graph.fingerprint(identity=True)
    except Exception:          # an attribute value pickle cannot write (an importer's own object): no reuse
        return build_plan(graph, platform, options, gpu_precision)
    if entry[1] != content:            # seen once, or changed in place since its Plans were built
        entry = _LAST[0] = None
    plans = entry[2] if entry is not None else {}
    key = (id(platform), options.build_key, gpu_precision)
    hit = plans.get(key)
    if hit is not None and hit[0] is platform:
        return hit[1]
    plan = build_plan(graph, platform, options, gpu_precision)
    if len(plans) >= PLANS_PER_GRAPH:
        plans.clear()
    plans[key] = (platform, plan)
    _LAST[0] = entry or (graph, content, plans)
    return plan


def clear_caches() -> None:
    """Forget the reused Plans and DLA conv verdicts (dlasim.clear_caches also forgets the cost model's
    per-layer results)."""
    _LAST[0] = None
    dla_support.clear_caches()
