"""`dlasim concurrent`: several engines at once (GPU + DLA cores), throughput or pipeline, and advice.

    dlasim concurrent zoo:resnet50 --hw orin-agx --int8                 # GPU + every DLA core, same model
    dlasim concurrent --hw orin-agx --engine zoo:resnet50,device=gpu,batch=8 --engine zoo:googlenet,device=dla1
    dlasim concurrent --engines set.toml --format json
    dlasim concurrent --mode pipeline --engine stage1.onnx,device=dla0 --engine stage2.onnx,device=gpu
    dlasim concurrent zoo:googlenet --cut inception_4a/output --stages dla0,gpu --hw xavier-agx --fp16
    dlasim concurrent zoo:resnet50 zoo:googlenet --hw orin-agx --advise --latency-ms 20
"""
from __future__ import annotations

from ..errors import DlasimError


HELP = "engines on the GPU and DLA cores at once: throughput, pipeline, advice"


def add_options(p) -> None:
    p.add_argument("models", nargs="*", help="with no --engine: this model on the GPU and on every DLA core "
                                             "(with --advise: the models to place; default: none)")
    p.add_argument("--hw", default=None, help="platform name, name:mode, or a .toml spec path "
                                            "(default: xavier-agx as the other commands, or the --engines file's hw)")
    p.add_argument("--engine", action="append", default=[],
                   help="MODEL[,device=gpu|dla0|dla1][,precision=..][,batch=N][,input_formats=..][,label=..] "
                        "(repeat for each engine; default: none)")
    p.add_argument("--engines", default=None, help="TOML file with [[engine]] tables (and optional hw, mode) (default: none)")
    p.add_argument("--mode", type=str.lower, choices=["throughput", "pipeline"], default=None,
                   help="throughput: engines run back to back at once; pipeline: stages of one network, frames "
                        "overlapping (default: throughput, pipeline with --cut)")
    prec = p.add_mutually_exclusive_group()
    prec.add_argument("--precision", type=str.lower, choices=["fp32", "fp16", "int8", "best"], default=None,
                      help="precision of every engine that does not set one (default: int8)")
    prec.add_argument("--int8", dest="precision", action="store_const", const="int8", help="= --precision int8 (default: off)")
    prec.add_argument("--fp16", dest="precision", action="store_const", const="fp16", help="= --precision fp16 (default: off)")
    p.add_argument("--batch", type=int, default=None, help="batch of every engine that does not set one (default: the model's)")
    p.add_argument("--shapes", default=None,
                   help="input shapes of every engine that does not set them, trtexec spelling "
                        "(name:1x3x640x640[,name2:...]; needed for a model with dynamic dimensions; default: none)")
    p.add_argument("--inputIOFormats", "--input-io-formats", dest="input_formats", default=None,
                   help="input formats of every engine that does not set them, trtexec spelling (default: none)")
    p.add_argument("--cut", action="append", default=[],
                   help="pipeline: cut MODEL after this layer (repeat or comma-separate for more stages; default: none)")
    p.add_argument("--stages", default=None, help="pipeline: the unit of each stage, e.g. dla0,gpu (default: none)")
    p.add_argument("--processes", type=str.lower, choices=["each", "one"], default=None,
                   help="each: every engine in its own process (parallel trtexec runs); one: one application "
                        "with a stream per engine (as the MLPerf harness) (default: each; one with --mode pipeline)")
    p.add_argument("--iterations", type=int, default=4, help="simulated iterations per engine after one warm-up (default: 4)")
    p.add_argument("--advise", action="store_true", help="search assignments and batches for aggregate img/s (default: off)")
    p.add_argument("--latency-ms", type=float, default=None, help="--advise: per-engine latency bound in ms (default: none)")
    p.add_argument("--batches", default="1,2,4,8,16,32", help="--advise: batches to try (default: 1,2,4,8,16,32)")
    p.add_argument("--format", type=str.lower, choices=["table", "json", "html"], default="table",
                   help="output format (default: table)")
    p.add_argument("-o", "--output", default=None, help="write to FILE instead of stdout (default: stdout; needed for html)")


def _defaults(a) -> dict:
    d = {}
    if a.precision:
        d["precision"] = a.precision
    if a.batch is not None:
        d["batch"] = a.batch
    if a.input_formats:
        d["input_formats"] = a.input_formats
    if a.shapes:
        d["shapes"] = a.shapes
    return d


def cmd(a, width: int = 100) -> str | dict:
    """The rendered table (its columns within `width`) or page, or (--format json) the document's dict, which
    the CLI wraps with the schema version (docs/schema/concurrent.schema.json, concurrent-advice.schema.json)."""
    from ..concurrent import advise, concurrent
    from ..concurrent.engines import make_engine, load_engines, parse_engine
    if a.format == "html" and not a.output:
        raise DlasimError("--format html needs -o FILE")
    if a.iterations < 1:
        raise DlasimError("--iterations must be >= 1")
    from ..api import load
    from ..hardware import hardware
    hw, mode, processes, defaults = a.hw, a.mode, a.processes, _defaults(a)
    if a.advise:
        if not a.models:
            raise DlasimError("concurrent --advise: give the models to place")
        if a.shapes:
            raise DlasimError("concurrent --advise takes no --shapes: give models with static input shapes")
        try:
            batches = tuple(int(b) for b in a.batches.split(",") if b.strip())
        except ValueError:
            raise DlasimError(f"--batches: expected integers, got {a.batches!r}") from None
        if not batches or min(batches) < 1:
            raise DlasimError("--batches: give batches >= 1")
        result = advise(a.models, hw or "xavier-agx", a.latency_ms, batches, a.precision or "int8", a.processes)
        if a.format == "json":
            return result.to_dict()
        if a.format == "html":
            from ..concurrent.page import advice_page
            return advice_page(result)
        return result.render(width=width)
    engines = []
    if a.engines:
        engines, top = load_engines(a.engines, defaults)
        hw = hw or top.get("hw")
        mode = mode or top.get("mode")
        processes = processes or top.get("processes")
    engines += [parse_engine(t, defaults) for t in a.engine]
    if a.models and (a.engine or a.engines):
        raise DlasimError("concurrent: give MODEL or --engine/--engines, not both")
    plat = hardware(hw or "xavier-agx")
    cuts = [c.strip() for item in a.cut for c in item.split(",") if c.strip()]
    if cuts or a.stages:
        if len(a.models) != 1 or not cuts or not a.stages:
            raise DlasimError("concurrent: --cut and --stages go together, with one MODEL")
        from ..concurrent.split import split_graph
        units = [u.strip() for u in a.stages.split(",") if u.strip()]
        from ..importers import parse_shapes
        parts = split_graph(load(a.models[0], batch=a.batch, shapes=parse_shapes(a.shapes) if a.shapes else None),
                            cuts)
        if len(units) != len(parts):
            raise DlasimError(f"--stages: {len(parts)} stages from {len(cuts)} cut(s), got {len(units)} units")
        bounds = [*cuts, "end"]
        engines = [make_engine({**defaults, "model": "stage", "device": u}, "--stages")
                   for u in units]
        from dataclasses import replace
        engines = [replace(e, model=g, label=f"stage {i + 1} (to {bounds[i]})@{e.unit}")
                   for i, (e, g) in enumerate(zip(engines, parts))]
        result = concurrent(engines, plat, "pipeline", a.iterations, a.processes)
        return _out(result, a, width)
    if a.models:
        if len(a.models) > 1:
            raise DlasimError("concurrent: one MODEL (GPU + every DLA core); use --engine for different models")
        cores = plat.dla.cores if plat.dla else 0
        engines = [make_engine({**defaults, "model": a.models[0], "device": "gpu"}, "MODEL")]
        engines += [make_engine({**defaults, "model": a.models[0], "device": f"dla{c}"}, "MODEL")
                    for c in range(cores)]
    return _out(concurrent(engines, plat, mode or "throughput", a.iterations, processes), a, width)


def _out(result, a, width: int) -> str | dict:
    if a.format == "json":
        return result.to_dict()
    if a.format == "html":
        from ..concurrent.page import concurrent_page
        return concurrent_page(result)
    return result.render(width)
