"""Many estimates at once: in this process, across local processes, or on a Ray cluster.

    results = dlasim.estimate_many([g1, "zoo:resnet50", "bad.onnx"], "orin-agx", device="dla", workers=2)
    [r.total_ms if r.ok else r.error for r in results]

Results come back in the order of the inputs; a model that fails (unreadable file, DLA-only build of an
unsupported layer, ...) gets a `Failed` record in its slot and the others go on. `workers=N` spreads the
work over N local processes (concurrent.futures); `backend="ray"` hands it to Ray (an existing distributed
engine; `pip install dlasim[nas]`) on the cluster `ray.init()` finds, or a local one with `workers` CPUs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from .build_options import BuildOptions
from .errors import DlasimError

BACKENDS = ("process", "ray")


@dataclass(frozen=True)
class Job:
    """One estimate to make: a model with its own platform and options (those of estimate_many otherwise)."""
    model: object
    hw: object = None
    options: dict = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True)
class Failed:
    """The slot of a model whose estimate failed: what it was and why."""
    label: str
    error: str            # exception class name
    message: str
    ok: bool = False


def _label(model) -> str:
    if isinstance(model, str):
        return model
    return getattr(model, "name", None) or getattr(getattr(model, "func", None), "__qualname__", type(model).__name__)


def _run(job: Job, hw, options: dict):
    from .api import estimate
    from .ir import Graph
    try:
        model = job.model() if callable(job.model) and not isinstance(job.model, Graph) else job.model
        return estimate(model, job.hw if job.hw is not None else hw, **{**options, **job.options})
    except Exception as exc:            # noqa: BLE001  (one failure must not stop the batch; its slot says why)
        msg = str(exc) if isinstance(exc, DlasimError) else f"{type(exc).__name__}: {exc}"
        return Failed(job.label or _label(job.model), type(exc).__name__, msg)


def _run_chunk(chunk: list, hw, options: dict) -> list:
    return [_run(job, hw, options) for job in chunk]


def _chunks(jobs: list, n: int) -> list[list]:
    return [jobs[i:i + n] for i in range(0, len(jobs), n)]


def estimate_many(models: Iterable, hw="xavier-agx", workers: int = 1, backend: str = "process",
                  progress: Callable[[int, int], None] | None = None, chunk: int | None = None,
                  **options) -> list:
    """Estimates of every model (a Graph, path, `zoo:NAME`, a zero-argument callable that builds the Graph
    where the estimate runs, or a Job carrying its own hw/options), in order. A callable such as
    `functools.partial(space.build, row)` is much cheaper to send to another process than the Graph.

    Each slot holds an Estimate (`.ok` True) or a Failed record. `progress(done, total)` is called as work
    completes. `options` are those of dlasim.estimate (device, precision, batch, ...).
    """
    if backend not in BACKENDS:
        raise DlasimError(f"estimate_many: backend expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers < 1:
        raise DlasimError(f"estimate_many: workers expected a positive integer, got {workers}")
    BuildOptions.of(**options)   # the shared options are checked once: a bad one fails before any work starts
    jobs = [m if isinstance(m, Job) else Job(m) for m in models]
    total = len(jobs)
    if not total:
        return []
    from .hardware import hardware
    if isinstance(hw, str):
        hw = hardware(hw)        # parsed once here; bad specs fail before any work starts
    size = chunk or max(1, min(64, total // (workers * 4) or 1))
    parts = _chunks(jobs, size)
    if backend == "ray":
        return _ray(parts, hw, options, workers, total, progress)
    if workers == 1:
        out = []
        for part in parts:
            out += _run_chunk(part, hw, options)
            if progress:
                progress(len(out), total)
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed
    results: list = [None] * len(parts)
    done = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futs = {pool.submit(_run_chunk, part, hw, options): i for i, part in enumerate(parts)}
        for f in as_completed(futs):
            i = futs[f]
            results[i] = f.result()
            done += len(results[i])
            if progress:
                progress(done, total)
    return [r for part in results for r in part]


def _ray(parts: list, hw, options: dict, workers: int, total: int, progress) -> list:
    try:
        import ray
    except ImportError:
        raise DlasimError("estimate_many: backend='ray' needs the ray package (pip install dlasim[nas])") from None
    if not ray.is_initialized():
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    remote = ray.remote(_run_chunk)
    hw_ref = ray.put(hw)
    refs = [remote.remote(part, hw_ref, options) for part in parts]
    index = {r: i for i, r in enumerate(refs)}
    results: list = [None] * len(parts)
    pending, done = list(refs), 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for r in ready:
            results[index[r]] = ray.get(r)
            done += len(results[index[r]])
        if progress:
            progress(done, total)
    return [r for part in results for r in part]


def progress_bar(total: int, desc: str = ""):
    """A progress(done, total) callback: tqdm on stderr when installed, else a plain line on stderr."""
    import sys
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)

        def update(done: int, _total: int) -> None:
            bar.update(done - bar.n)
            if done >= _total:
                bar.close()
        return update

    def plain(done: int, _total: int) -> None:
        end = "\n" if done >= _total else "\r"
        sys.stderr.write(f"{desc} {done}/{_total}{end}")
        sys.stderr.flush()
    return plain
