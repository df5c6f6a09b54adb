"""Golden JSON outputs of `dlasim estimate`, `explain` and `compare`: a guard for refactors, not accuracy
evidence. Each case's `--format json` document is normalised and kept in tests/golden/NAME.json.

    python benchmarks/golden_outputs.py write [NAME ...]     # (re)generate the files from the current code
    python benchmarks/golden_outputs.py check [NAME ...]     # exit 1 and the first differences per case
    python benchmarks/golden_outputs.py list

Normalised: floats rounded to 4 significant digits (|x| < 1e-9 counts as 0, so float noise such as an
unexplained -5.6e-17 ms compares equal to 0); integers (MACs, bytes, counts) kept exact; the repository
root removed from strings (paths are kept relative to it); keys that vary from run to run (VOLATILE)
dropped. Values are compared as parsed JSON, so key order and 1 vs 1.0 do not matter. Every case runs the
CLI in-process (dlasim.cli.main), a few seconds for the whole set; `write` is deterministic.
When a deliberate model change moves numbers, re-run `write` and say in the commit which and why.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
HAX = "validation/data/haxconn"
GOOGLENET = f"{HAX}/prototxt/googlenet.prototxt"

# keys whose values change between runs or machines (none of these is in the documents today; kept so that
# adding e.g. a version or a timing to a document does not break the golden set)
VOLATILE = frozenset({"version", "dlasim_version", "elapsed_s", "elapsed_ms", "wall_s", "timestamp"})

# name -> CLI arguments (without --format); paths relative to the repository root
CASES: dict[str, list[str]] = {
    # estimate
    "estimate_googlenet_xavier-agx_dla_fp16":
        ["estimate", "zoo:googlenet", "--hw", "xavier-agx", "--device", "dla", "--precision", "fp16"],
    "estimate_resnet50_orin-agx_dla_int8_b2":
        ["estimate", "zoo:resnet50", "--hw", "orin-agx", "--device", "dla", "--precision", "int8",
         "--batch", "2"],
    "estimate_yolov3_tiny_xavier-nx_dla_int8":
        ["estimate", "zoo:yolov3_tiny", "--hw", "xavier-nx", "--device", "dla", "--precision", "int8"],
    "estimate_mobilenet_v2_xavier-nx_gpu_fp16":
        ["estimate", "zoo:mobilenet_v2", "--hw", "xavier-nx", "--device", "gpu", "--precision", "fp16"],
    "estimate_resnet18-qat_a100_gpu_int8_b32":
        ["estimate", "zoo:resnet18-qat", "--hw", "a100", "--device", "gpu", "--precision", "int8",
         "--batch", "32"],
    "estimate_resnet50_a100_gpu_int8_sparse_b8":
        ["estimate", "zoo:resnet50", "--hw", "a100", "--device", "gpu", "--precision", "int8",
         "--sparsity", "force", "--batch", "8"],
    "estimate_resnet18_orin-agx-30w_dla1_int8_sparse":
        ["estimate", "zoo:resnet18", "--hw", "orin-agx:30w", "--device", "dla", "--dla-core", "1",
         "--precision", "int8", "--sparsity", "force"],
    # explain
    "explain_resnet50_orin-agx_dla_int8":
        ["explain", "zoo:resnet50", "--hw", "orin-agx", "--device", "dla", "--precision", "int8"],
    "explain_yolov4_xavier-agx_dla_fp16":
        ["explain", "zoo:yolov4", "--hw", "xavier-agx", "--device", "dla", "--precision", "fp16"],
    "explain_seed000_conv1x1_xavier-agx_dla_int8_b32":
        ["explain", "zoo:seed000_conv1x1", "--hw", "xavier-agx", "--device", "dla", "--precision", "int8",
         "--batch", "32"],
    "explain_measured_googlenet_xavier-agx_dla":
        ["explain", GOOGLENET, "--hw", "xavier-agx", "--device", "dla", "--precision", "fp16",
         "--measured", f"{HAX}/profiles/googlenet_dla_mark_at_-1.profile"],
    "explain_measured_googlenet_xavier-agx_gpu":
        ["explain", GOOGLENET, "--hw", "xavier-agx", "--device", "gpu", "--precision", "fp16",
         "--measured", f"{HAX}/profiles/googlenet_gpu_mark_at_-1.profile"],
    # compare
    "compare_resnet18_orin-agx_dla_fp16_vs_int8":
        ["compare", "zoo:resnet18", "--hw", "orin-agx", "--device", "dla", "--vary", "precision=fp16,int8"],
    "compare_googlenet_xavier-agx_fp16_dla_vs_gpu":
        ["compare", "zoo:googlenet", "--hw", "xavier-agx", "--precision", "fp16", "--vary", "device=dla,gpu"],
    "compare_resnet50_a100_gpu_int8_dense_vs_sparse":
        ["compare", "zoo:resnet50", "--hw", "a100", "--device", "gpu", "--precision", "int8",
         "--vary", "sparsity=disable,force"],
}


def round_sig(x: float, digits: int = 4) -> float:
    """x rounded to `digits` significant digits; |x| < 1e-9 (float noise in ms or shares) gives 0.0."""
    if not math.isfinite(x) or abs(x) < 1e-9:
        return 0.0 if math.isfinite(x) else x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def normalise(value, root: str = str(ROOT)):
    """The comparable form of a JSON value (see the module docstring)."""
    if isinstance(value, dict):
        return {k: normalise(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalise(v, root) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return round_sig(value)
    if isinstance(value, str):
        return value.replace(root + "/", "").replace(root, ".")
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def run_case(argv: list[str]) -> dict:
    """The normalised JSON document of one CLI call, run in-process from the repository root's paths."""
    from dlasim.cli import main
    args = [str(ROOT / a) if (ROOT / a).is_file() and "/" in a else a for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*args, "--format", "json"])
    if rc != 0:
        raise RuntimeError(f"dlasim {' '.join(argv)}: exit {rc}: {err.getvalue().strip()}")
    return normalise(json.loads(out.getvalue()))


def differences(want, got, path: str = "") -> list[str]:
    """Where two normalised documents differ, as 'path: want -> got' lines (all of them)."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in want.keys() | got.keys():
            if k not in got:
                out.append(f"{path}.{k}: removed")
            elif k not in want:
                out.append(f"{path}.{k}: added")
            else:
                out += differences(want[k], got[k], f"{path}.{k}")
        return sorted(out)
    if isinstance(want, list) and isinstance(got, list):
        out = [f"{path}: {len(want)} items -> {len(got)}"] if len(want) != len(got) else []
        for i, (w, g) in enumerate(zip(want, got)):
            out += differences(w, g, f"{path}[{i}]")
        return out
    if want != got or isinstance(want, bool) != isinstance(got, bool):
        return [f"{path}: {json.dumps(want)[:80]} -> {json.dumps(got)[:80]}"]
    return []


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def write(name: str) -> None:
    doc = {"command": "dlasim " + " ".join(CASES[name]) + " --format json", "output": run_case(CASES[name])}
    golden_path(name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def check(name: str) -> list[str]:
    """The differences between the stored golden file of `name` and what the code gives now."""
    path = golden_path(name)
    if not path.exists():
        return [f"{path.relative_to(ROOT)} missing (run: python benchmarks/golden_outputs.py write {name})"]
    stored = json.loads(path.read_text())
    want_cmd = "dlasim " + " ".join(CASES[name]) + " --format json"
    if stored.get("command") != want_cmd:
        return [f"command changed: {stored.get('command')!r} -> {want_cmd!r} (re-run write)"]
    return differences(normalise(stored["output"]), run_case(CASES[name]))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("write", "check", "list"):
        print("usage: golden_outputs.py write|check|list [NAME ...]", file=sys.stderr)
        return 2
    names = argv[1:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"golden_outputs.py: unknown case {unknown[0]!r} (see: golden_outputs.py list)", file=sys.stderr)
        return 2
    if argv[0] == "list":
        for n in names:
            print(f"{n:50s} dlasim {' '.join(CASES[n])}")
        return 0
    if argv[0] == "write":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for n in names:
            write(n)
        stale = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem not in CASES)
        print(f"{len(names)} golden outputs written to {GOLDEN.relative_to(ROOT)}"
              + (f"; not a case any more (delete): {', '.join(stale)}" if stale else ""))
        return 0
    bad = 0
    for n in names:
        diffs = check(n)
        if diffs:
            bad += 1
            print(f"DIFFERS {n}: {len(diffs)} value(s)")
            for d in diffs[:8]:
                print(f"  {d}")
    print(f"{len(names) - bad} of {len(names)} golden outputs identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
