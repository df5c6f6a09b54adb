"""Fuzz every input boundary for a set time and count what happens.

    python benchmarks/fuzz.py --minutes 10 [--seed 1] [--timeout 20] [--out /tmp/dlasim-fuzz]

Cases, drawn in turn:
- random valid networks (tests/strategies.py, the hypothesis strategies of the property tests) costed with
  random options: must estimate, or refuse with DlasimError; steps must sum to the total;
- byte-level mutations (flips, inserted/deleted/duplicated chunks, truncation, hostile tokens such as NaN,
  1e400, -1, deep brackets) of the shared ONNX, JSON, TOML and prototxt files, run through the CLI;
- random command lines (flags and values, valid and not).
Each case runs in a worker process with a memory cap; a case that does not finish within --timeout seconds
is a hang (the worker is killed and replaced). Counts printed at the end: cases, clean rejections (exit 2,
one line), accepted, crashes (any other exception, a multi-line or empty error, a worker that died) and
hangs. The input of each crash or hang is saved under --out with its command.
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]     # this checkout's dlasim and the shared strategies
SHARED = ROOT.parent / "shared" / "data"
MEMORY_CAP = 4 << 30
TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1", b"0", b"-0.0", b"null", b"true", b'""', b"[]",
          b"{}", b"[" * 5000, b"{" * 5000, b"\x00", b"\xff\xfe", b"9" * 400, b"inf", b"nan", b"-1e308",
          b'"name"', b":", b",", b"\n", b"kernel_size: 0", b"pad: -1", b"num_output: 99999999999", b"top: \"data\""]
FLAG_POOL = ["--hw", "orin-agx", "orin-agx:", "xavier-agx:30w", "h200", "a100:maxn", ":", "--device", "dla", "gpu",
             "tpu", "--dla-core", "-1", "0", "1", "7", "--precision", "int8", "fp16", "fp8", "--int8", "--best",
             "--batch", "0", "-2", "3", "99999999999", "--sparsity", "force", "enable", "maybe", "--shapes",
             "x:1x3x8x8", "x:0x3", "data:1x3x16x16", ":", "--format", "json", "csv", "table", "html", "xml",
             "--vary", "precision=fp16,int8", "batch=1,a", "hw=orin-agx,h200", "--no-gpu-fallback",
             "--allowGPUFallback", "--useDLACore=-3", "--inputIOFormats=int8:chw32", "--inputIOFormats=fp99:x",
             "--outputIOFormats=fp16:chw16", "--measured", "--layer-info"]


def corpus(tmp: Path) -> list[Path]:
    """The seed files: shared and validation data, spec files, the ONNX export fixtures (unzipped into `tmp`)."""
    files = []
    for d in (SHARED, ROOT / "validation" / "data"):
        if d.is_dir():
            files += [p for p in d.rglob("*") if p.is_file() and p.suffix in (".json", ".profile", ".prototxt")
                      and p.stat().st_size < 8 << 20]
    files += sorted((ROOT / "hardware_specs").glob("*.toml"))
    for gz in sorted((ROOT / "tests" / "fixtures" / "exports").glob("*.onnx.gz")):
        if gz.stat().st_size < 100_000:
            out = tmp / gz.name[:-3]
            out.write_bytes(gzip.decompress(gz.read_bytes()))
            files.append(out)
    import dlasim
    graph = tmp / "resnet18.graph-ir.json"        # dlasim's own graph JSON (Graph.to_json)
    graph.write_text(dlasim.load("zoo:resnet18").to_json())
    return files + [graph]


def mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 8])):
        op = rng.randrange(7)
        i = rng.randrange(len(buf) + 1) if buf else 0
        if op == 0 and buf:                                    # flip bits
            j = min(i, len(buf) - 1)
            buf[j] ^= 1 << rng.randrange(8)
        elif op == 1:                                          # insert a hostile token
            buf[i:i] = rng.choice(TOKENS)
        elif op == 2 and buf:                                  # delete a chunk
            del buf[i:i + rng.randint(1, 64)]
        elif op == 3 and buf:                                  # duplicate a chunk
            j = rng.randrange(len(buf))
            buf[i:i] = buf[j:j + rng.randint(1, 256)]
        elif op == 4:                                          # truncate
            del buf[i:]
        elif op == 5 and buf:                                  # replace a digit run with another number
            j = min(i, len(buf) - 1)
            buf[j:j + 1] = rng.choice([b"0", b"-7", b"1e308", b"3.5", b"65536", b"NaN"])
        elif op == 6 and buf:                                  # random byte
            buf[min(i, len(buf) - 1)] = rng.randrange(256)
    return bytes(buf)


def file_case(seed: Path, rng: random.Random, workdir: Path) -> dict:
    suffix = ".json" if seed.suffix == ".profile" else seed.suffix
    path = workdir / f"case{suffix}"
    path.write_bytes(mutate(seed.read_bytes(), rng))
    small = ROOT / "validation" / "data" / "seeds" / "kernel_3x3.prototxt"
    if suffix == ".onnx":
        argv = ["estimate", str(path), "--hw", rng.choice(["orin-agx", "h200"]), "--format", "json"]
        if "orin" not in argv[3]:
            argv += ["--device", "gpu"]
    elif suffix == ".prototxt":
        argv = ["estimate", str(path), "--format", "json"]
    elif suffix == ".toml":
        argv = ["estimate", str(small), "--hw", str(path), "--format", "json"]
    elif seed.name.endswith(".graph-ir.json"):
        argv = ["inspect", str(path), "--format", "json"]
    elif seed.name.endswith(".graph.json"):
        prof = seed.with_name(seed.name.replace(".graph.json", ".profile.json"))
        argv = ["profile", str(prof if prof.exists() else path), "--layer-info", str(path), "--format", "json"]
    else:
        argv = ["profile", str(path), "--format", "json"]
    return {"kind": "file", "argv": argv, "seed": str(seed), "path": str(path)}


def flags_case(rng: random.Random) -> dict:
    cmd = rng.choice(["estimate", "explain", "compare", "inspect"])
    model = rng.choice(["zoo:resnet18", "zoo:mobilenet_v2", "zoo:nope", str(ROOT / "validation" / "data" / "seeds"
                                                                            / "kernel_1x1.prototxt")])
    return {"kind": "flags", "argv": [cmd, model] + [rng.choice(FLAG_POOL) for _ in range(rng.randint(0, 6))]}


def graph_cases(rng: random.Random, n: int = 400) -> list[dict]:
    """`n` (network plan, options) pairs drawn by hypothesis from the property tests' strategies."""
    from hypothesis import HealthCheck, given, seed, settings
    from strategies import configs, plans

    box: list[dict] = []

    @seed(rng.randrange(1 << 30))
    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(plans, configs)
    def collect(plan, cfg):
        box.append({"kind": "graph", "plan": plan, "cfg": cfg})

    collect()
    rng.shuffle(box)
    return box


# ---- worker ------------------------------------------------------------------------------------------
def _run_case(case: dict) -> tuple[str, str]:
    """(outcome, detail) with outcome in accepted | rejected | crash."""
    import dlasim
    from dlasim.cli import main

    if case["kind"] == "graph":
        from strategies import build
        plan, cfg = case["plan"], case["cfg"]
        try:
            g = build(plan)
            e = dlasim.estimate(g, **cfg)
        except dlasim.DlasimError:
            return "rejected", ""
        if abs(sum(s.time_ms for s in e.steps) - e.total_ms) > 1e-9 * max(1.0, e.total_ms):
            return "crash", f"steps do not sum to the total: {plan} {cfg}"
        if any(not f.reason for f in e.fallback):
            return "crash", f"fallback without a reason: {plan} {cfg}"
        return "accepted", ""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = list(case["argv"])
        if case["kind"] == "file" or case["kind"] == "flags":
            argv += ["-o", os.path.join(os.path.dirname(case.get("path", tempfile.gettempdir())), "fuzz-out.txt")]
        rc = main(argv)
    text = err.getvalue()
    if rc == 0:
        return "accepted", ""
    if rc == 2 and text.startswith("dlasim: error: ") and text.count("\n") == 1:
        return "rejected", ""
    return "crash", f"rc={rc} stderr={text[:500]!r}"


def _worker(conn) -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    except (ImportError, ValueError, OSError):
        pass
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            result = _run_case(case)
        except BaseException as e:  # noqa: BLE001 - every escape is a finding
            result = ("crash", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")
        conn.send(result)


class Worker:
    def __init__(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, case: dict, timeout: float):
        self.conn.send(case)
        if not self.conn.poll(timeout):
            return None
        try:
            return self.conn.recv()
        except EOFError:
            return ("crash", f"worker died (exit code {self.proc.exitcode})")

    def kill(self):
        self.proc.kill()
        self.proc.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "dlasim-fuzz"))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    workdir = Path(tempfile.mkdtemp(prefix="dlasim-fuzz-"))
    seeds = corpus(workdir)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    counts = {"cases": 0, "rejected": 0, "accepted": 0, "crash": 0, "hang": 0}
    by_kind: dict[str, dict[str, int]] = {}
    graphs: list[dict] = []
    worker = Worker()
    end = time.monotonic() + 60 * a.minutes
    try:
        while time.monotonic() < end:
            r = rng.random()
            if r < 0.25 and not graphs:
                graphs = graph_cases(rng)
            case = (graphs.pop() if r < 0.25 else flags_case(rng) if r < 0.35
                    else file_case(rng.choice(seeds), rng, workdir))
            result = worker.run(case, a.timeout)
            if result is None:
                worker.kill()
                worker = Worker()
                result = ("hang", f"no result within {a.timeout} s")
            outcome, detail = result
            if outcome == "crash" and detail.startswith("worker died"):
                worker.kill()
                worker = Worker()
            counts["cases"] += 1
            counts[outcome] += 1
            k = by_kind.setdefault(case["kind"], {})
            k[outcome] = k.get(outcome, 0) + 1
            if outcome in ("crash", "hang"):
                n = counts["crash"] + counts["hang"]
                dst = out / f"{outcome}{n:04d}"
                dst.mkdir(exist_ok=True)
                if "path" in case and os.path.exists(case["path"]):
                    shutil.copy(case["path"], dst / Path(case["path"]).name)
                (dst / "case.txt").write_text(f"{case}\n{detail}\n")
                print(f"{outcome}: {case.get('argv', case)} -> {detail.splitlines()[0] if detail else ''}",
                      flush=True)
    finally:
        worker.conn.send(None)
        worker.proc.join(5)
        if worker.proc.is_alive():
            worker.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"cases: {counts['cases']}  clean rejections: {counts['rejected']}  accepted: {counts['accepted']}  "
          f"crashes: {counts['crash']}  hangs: {counts['hang']}")
    for kind, k in sorted(by_kind.items()):
        print(f"  {kind:<6} " + "  ".join(f"{o}: {n}" for o, n in sorted(k.items())))
    if counts["crash"] or counts["hang"]:
        print(f"inputs of crashes and hangs: {out}")
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
