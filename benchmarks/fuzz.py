"""Fuzz every input boundary for a set time and count what happens.

    python benchmarks/fuzz.py --minutes 10 [--seed 1] [--timeout 20] [--out /tmp/dlasim-fuzz]

Cases, drawn in turn:
- random valid networks (tests/strategies.py, the hypothesis strategies of the property tests) costed with
  random options: must estimate, or refuse with DlasimError; steps must sum to the total;
- byte-level mutations (flips, inserted/deleted/duplicated chunks, truncation, hostile tokens such as NaN,
  1e400, -1, deep brackets) of the shared ONNX, JSON, TOML and prototxt files, run through the CLI;
- random command lines (flags and values, valid and not);
- `dlasim concurrent`: random and mutated TOML engine files (--engines), --engine texts, --processes,
  --stages/--cut, --advise with odd --batches/--latency-ms;
- build-option keywords with odd values through the Python API (dlasim.estimate, BuildOptions.of);
- `dlasim sweep` and `compare` with odd --vary specs;
- spec files with mutated `[...sources]` tables and DLA rule entries (via --hw PATH), and rule folders
  (hardware_specs/rules) with one mutated entry (dlasim.rules.load_rules);
- validation case columns: `measured` expressions (dlasim.measures), `options` (measures.parse_options).
Each case runs in a worker process with a memory cap; a case that does not finish within --timeout seconds
is a hang (the worker is killed and replaced). Counts printed at the end: cases, clean rejections (exit 2,
one line, no -o file left), accepted, crashes (any other exception, a multi-line or empty error, output
written by a rejected case, a worker that died) and hangs. The input of each crash or hang is saved under --out with its command.
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


ODD = [None, 0, -1, 1, 2, 7, 1.5, float("nan"), float("inf"), True, False, "", " ", "gpu", "dla", "dla1", "DLA0",
       "int8", "INT8", "fp16", "best", "fp8", "force", "enable", "x", "int8:dla_hwc4", "fp16:chw16", "fp99:x", ",",
       "int8:", ":", "a:1x3x8x8", [], [1], {}, {"data": (1, 3, 8, 8)}, {"data": (0, -1)}, {"data": "1x3"},
       (("data", (1, 3, 8, 8)),), ("data",), b"int8", 10 ** 30, -10 ** 30, object()]
OPTION_NAMES = ["device", "precision", "batch", "gpu_fallback", "sparsity", "dla_core", "shapes", "input_formats",
                "output_formats", "nope"]
ENGINE_KEYS = ["model", "device", "precision", "batch", "input_formats", "output_formats", "gpu_fallback", "label",
               "dla_core", "time_scale", "hw"]
TOML_VALUES = ['"zoo:resnet18"', '"zoo:mobilenet_v2"', '"zoo:nope"', '"gpu"', '"dla"', '"dla1"', '"dla9"', '"int8"',
               '"fp8"', "0", "-1", "3", "1e400", "nan", "inf", "true", "[]", "{}", '["a"]', '{model = "x"}', '""',
               '"int8:dla_hwc4"', '"fp99:x"', "99999999999999999999", "1979-05-27", "2.5", '"each"', '"one"',
               '"pipeline"', '"throughput"', '"orin-agx"', '"h200"', '"xavier-agx:30w"', '"nope"']
SMALL = str(ROOT / "validation" / "data" / "seeds" / "kernel_1x1.prototxt")
MODELS = ["zoo:resnet18", "zoo:mobilenet_v2", SMALL, "zoo:nope", "", "zoo:", "/nonexistent.onnx"]


def _toml_engine_file(rng: random.Random) -> str:
    lines = []
    if rng.random() < 0.7:
        lines.append(f'hw = {rng.choice([chr(34) + "orin-agx" + chr(34), chr(34) + "xavier-agx" + chr(34)] + TOML_VALUES)}')
    if rng.random() < 0.4:
        lines.append(f"mode = {rng.choice(TOML_VALUES)}")
    if rng.random() < 0.4:
        lines.append(f"processes = {rng.choice(TOML_VALUES)}")
    if rng.random() < 0.1:
        lines.append(f"{rng.choice(ENGINE_KEYS)} = {rng.choice(TOML_VALUES)}")
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        lines.append(rng.choice(["[[engine]]", "[[engine]]", "[[engine]]", "[engine]", "[[engines]]"]))
        if rng.random() < 0.9:
            lines.append(f'model = {rng.choice(TOML_VALUES[:3] + [chr(34) + SMALL + chr(34)])}')
        for _ in range(rng.randint(0, 4)):
            lines.append(f"{rng.choice(ENGINE_KEYS)} = {rng.choice(TOML_VALUES)}")
    return "\n".join(lines) + "\n"


def concurrent_case(rng: random.Random, workdir: Path) -> dict:
    """`dlasim concurrent` with an engines file (random or mutated), --engine texts and flags."""
    argv = ["concurrent"]
    path = None
    r = rng.random()
    if r < 0.45:
        path = workdir / "engines.toml"
        text = _toml_engine_file(rng).encode()
        path.write_bytes(mutate(text, rng) if rng.random() < 0.5 else text)
        argv += ["--engines", str(path)]
    elif r < 0.75:
        for _ in range(rng.randint(1, 3)):
            parts = [rng.choice(MODELS[:3] + MODELS)]
            for _ in range(rng.randint(0, 3)):
                k = rng.choice(ENGINE_KEYS + ["", "=", "device"])
                parts.append(f"{k}={str(rng.choice(ODD))}" if rng.random() < 0.9 else k)
            argv += ["--engine", ",".join(parts)]
    elif r < 0.88:
        argv += [rng.choice(MODELS[:3]), "--cut", rng.choice(["conv1", "x", ",", "", "prob", "res2a"]),
                 "--stages", rng.choice(["dla0,gpu", "gpu", "dla0,dla1,gpu", ",", "tpu,gpu", "dla,gpu", ""])]
    else:
        argv += [m for m in rng.sample(MODELS, rng.randint(0, 2))] + ["--advise"]
        if rng.random() < 0.7:
            argv += ["--batches", rng.choice(["1,2", "0", "-1", "a", ",", "", "1,,2", "99999", "1e3", " 2 "])]
        if rng.random() < 0.5:
            argv += ["--latency-ms", rng.choice(["0", "-1", "nan", "inf", "1e-9", "20", "x"])]
    extra = ["--hw", rng.choice(["orin-agx", "xavier-agx", "h200", "nvdla-small", "orin-agx:", "nope"]),
             "--processes", rng.choice(["each", "one", "both"]), "--mode", rng.choice(["throughput", "pipeline", "x"]),
             "--iterations", rng.choice(["1", "0", "-3", "1000000", "x"]), "--batch", rng.choice(["1", "0", "-1", "x"]),
             "--precision", rng.choice(["int8", "fp32", "fp8"]), "--inputIOFormats", rng.choice(["int8:chw32", "fp99:x", ","]),
             "--format", rng.choice(["json", "table", "html", "csv"])]
    for i in rng.sample(range(0, len(extra), 2), rng.randint(0, 4)):
        argv += extra[i:i + 2]
    if "--format" not in argv:
        argv += ["--format", "json"]
    case = {"kind": "concurrent", "argv": argv, "path": str(path or workdir / "engines.toml")}
    return case


def options_case(rng: random.Random) -> dict:
    """Odd build-option keywords through the Python API."""
    kw = {rng.choice(OPTION_NAMES): rng.choice(ODD) for _ in range(rng.randint(1, 4))}
    return {"kind": "options", "fn": rng.choice(["estimate", "of", "replace"]), "model": rng.choice(MODELS[:3]),
            "hw": rng.choice(["orin-agx", "h200", "xavier-agx"]), "kw": kw}


VARY_KEYS = ["precision", "sparsity", "device", "batch", "hw", "model", "dla_core", "nope", "", " batch "]
VARY_VALUES = ["fp16", "int8", "best", "fp8", "force", "enable", "gpu", "dla", "tpu", "1", "0", "-1", "2", "a",
               "1e3", "99999999999", "orin-agx", "h200", "nope", "xavier-agx:30w", "zoo:resnet18", "zoo:nope", "",
               " ", "=", "NaN"]


def vary_case(rng: random.Random) -> dict:
    cmd = rng.choice(["sweep", "sweep", "compare"])
    argv = [cmd, rng.choice(MODELS[:3])]
    valid = {"precision": ["fp16", "int8", "best"], "batch": ["1", "2"], "hw": ["orin-agx", "xavier-agx"],
             "device": ["dla", "gpu"], "sparsity": ["disable", "force"]}
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(VARY_KEYS)
        pool = valid[key] if key in valid and rng.random() < 0.6 else VARY_VALUES
        vals = ",".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))
        argv += ["--vary", f"{key}={vals}" if rng.random() < 0.7 else rng.choice([key, f"={vals}", f"{key}=={vals}"])]
    if cmd == "sweep":
        argv += ["--no-progress"] + (["--workers", rng.choice(["0", "-1", "x", "1"])] if rng.random() < 0.2 else [])
    argv += ["--hw", rng.choice(["orin-agx", "h200", "xavier-agx"]), "--format", rng.choice(["json", "csv", "table"])]
    return {"kind": "vary", "argv": argv}


SOURCE_VALUES = ['""', '" "', '"ref/dla.md"', "{ value = 1 }", '{ source = "" }', '["x"]', '{ c = 0, source = "x" }',
                 '{ value = -1, source = "x" }', '{ values = [], source = "x" }', '{ hint = 1, source = "x" }']


def _toml_mutations(text: str, rng: random.Random) -> str:
    """Line-level edits of a TOML spec or rule file: drop a line, change a value, a source, a key."""
    lines = text.splitlines()
    for _ in range(rng.choice([1, 1, 2, 3])):
        idx = [i for i, ln in enumerate(lines) if "=" in ln and not ln.lstrip().startswith("#")]
        heads = [i for i, ln in enumerate(lines) if ln.lstrip().startswith("[")]
        if not idx:
            break
        i = rng.choice(idx)
        key, _, val = lines[i].partition("=")
        op = rng.randrange(8)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines[i] = f"{key}= {rng.choice(TOML_VALUES)}"
        elif op == 2 and "source" in val:                  # an inline table: mutate its source or drop it
            lines[i] = key + "=" + val.replace("source", rng.choice(["sourc", "source2", "value"]), 1)
        elif op == 3:
            lines[i] = f"{rng.choice(['zzz', 'source', 'sources', '_', 'value', 'c'])} {'='}{val}"
        elif op == 4 and heads:                            # rename or empty a table
            j = rng.choice(heads)
            lines[j] = rng.choice(["[sources]", "[dla.sources]", "[zzz]", "[]", lines[j] + "x", ""])
        elif op == 5:
            lines.insert(i, lines[i])                      # duplicate key
        elif op == 6:
            lines[i] = f"{key}= {rng.choice(SOURCE_VALUES)}"
        else:
            lines[i] = key + "=" + val.replace('"', "", 1)
    return "\n".join(lines) + "\n"


def spec_case(rng: random.Random, workdir: Path) -> dict:
    """A spec file with mutated sources / rule entries through --hw PATH, or a rule folder with one mutated file."""
    if rng.random() < 0.6:
        seed = rng.choice(sorted((ROOT / "hardware_specs").glob("*.toml")))
        path = workdir / "spec.toml"
        path.write_text(_toml_mutations(seed.read_text(), rng))
        argv = ["estimate", SMALL if rng.random() < 0.7 else "zoo:resnet18", "--hw", str(path), "--format", "json"]
        if rng.random() < 0.4:
            argv += ["--device", rng.choice(["gpu", "dla"])]
        return {"kind": "spec", "argv": argv, "seed": str(seed), "path": str(path)}
    folder = workdir / "rules"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(ROOT / "hardware_specs" / "rules", folder)
    seed = rng.choice(sorted(folder.glob("*.toml")))
    seed.write_text(_toml_mutations(seed.read_text(), rng))
    return {"kind": "rules", "folder": str(folder), "seed": seed.name, "path": str(seed)}


MEASURED = ["median(shared/data/public_measurements.csv:{c})", "csvsum(validation/data/public_measurements.csv:{c}:{k})",
            "json(validation/data/h200/x.json:{c})", "fps_gap_ms(validation/data/public_measurements.csv:{c}:{k})",
            "dla_gap_ms({c}|{k})", "profile_total({c})", "trex_gpu_median({c})", "nope({c})", "{c}", "median({c})",
            "csvsum({c})", "json({c})", "fps_gap_ms({c})", "json(:{c})"]
FRAGMENTS = ["", ":", "a", "x=1", "x=A|B", "name=a|b", "1e400", "-1", "NaN", "[", "]", "[k=v]", "a.b[k=v].c", "0",
             "/etc/hostname", "validation/data", "/dev/null", "..", "1|2", "a=b=c", "=", "|", "value"]


def measures_case(rng: random.Random) -> dict:
    if rng.random() < 0.7:
        expr = rng.choice(MEASURED).format(c=rng.choice(FRAGMENTS), k=rng.choice(FRAGMENTS))
        return {"kind": "measures", "fn": "measured", "arg": expr,
                "unit": rng.choice(["ms", "us", "qps", "img_per_s", "", "fps", "MS"]),
                "batch": rng.choice([None, 0, 1, 8]), "engines": rng.choice([1, 0, 2])}
    items = [f"{rng.choice(['input_formats', 'shapes', 'gpu_fallback', 'dla_core', 'sparsity', 'batch', ''])}"
             f"{rng.choice(['=', '=', ''])}{rng.choice(FRAGMENTS + ['data:1x3x8x8', 'x:0x3', 'a:b', '1.5', 'int8:dla_hwc4'])}"
             for _ in range(rng.randint(0, 3))]
    return {"kind": "measures", "fn": "options", "arg": ";".join(items)}


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
    if case["kind"] in ("options", "rules", "measures"):
        return _api_case(case)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = list(case["argv"])
        target = os.path.join(os.path.dirname(case.get("path", tempfile.gettempdir())), "fuzz-out.txt")
        with contextlib.suppress(FileNotFoundError):
            os.remove(target)
        if case["kind"] in ("file", "flags", "concurrent", "vary", "spec"):
            argv += ["-o", target]
        rc = main(argv)
    text = err.getvalue()
    if rc != 0 and os.path.exists(target):
        return "crash", f"rc={rc} but {target} was written (half-written output)"
    if rc == 0:
        return "accepted", ""
    if rc == 2 and text.startswith("dlasim: error: ") and text.count("\n") == 1:
        return "rejected", ""
    return "crash", f"rc={rc} stderr={text[:500]!r}"


def _api_case(case: dict) -> tuple[str, str]:
    """A Python-API case: must return, or raise DlasimError with a one-line message."""
    import dlasim
    from dlasim.build_options import BuildOptions
    try:
        if case["kind"] == "options":
            kw = case["kw"]
            if case["fn"] == "estimate":
                dlasim.estimate(case["model"], hw=case["hw"], **kw)
            elif case["fn"] == "of":
                BuildOptions.of(**kw)
            else:
                BuildOptions().replace(**kw)
        elif case["kind"] == "rules":
            from dlasim.rules import load_rules
            load_rules(case["folder"])
        elif case["fn"] == "measured":
            from dlasim.measures import measured_value, to_ms
            to_ms(measured_value(case["arg"], ROOT), case["unit"], case["batch"], case["engines"])
        else:
            from dlasim.measures import parse_options
            kw = parse_options(case["arg"])
            BuildOptions.of(**{k: v for k, v in kw.items()})
    except dlasim.DlasimError as e:
        text = str(e)
        if not text or "\n" in text:
            return "crash", f"DlasimError message not one line: {text[:300]!r}"
        return "rejected", ""
    return "accepted", ""


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
            case = (graphs.pop() if r < 0.25 else flags_case(rng) if r < 0.32
                    else concurrent_case(rng, workdir) if r < 0.44 else options_case(rng) if r < 0.52
                    else vary_case(rng) if r < 0.60 else spec_case(rng, workdir) if r < 0.70
                    else measures_case(rng) if r < 0.78 else file_case(rng.choice(seeds), rng, workdir))
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
        print(f"  {kind:<10} " + "  ".join(f"{o}: {n}" for o, n in sorted(k.items())))
    if counts["crash"] or counts["hang"]:
        print(f"inputs of crashes and hangs: {out}")
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
