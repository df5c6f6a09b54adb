"""The core import stays light: no networkx, scipy, onnx or numpy; fitting names its extra when scipy is missing."""
import subprocess
import sys
from pathlib import Path

from dlasim.explainer.match import match_steps
from dlasim.cli import main
from dlasim.report import StepRow

ROOT = Path(__file__).resolve().parents[1]
HAX = ROOT / "validation" / "data" / "haxconn"


def _row(name, layers, kind="layer"):
    return StepRow(name=name, kind=kind, op="Conv", device="dla", precision="fp16", time_ms=0.1,
                   bound="compute", layers=layers)


def test_match_steps_groups_steps_that_share_layers_across_fusions():
    a = [_row("conv1+relu1", ["conv1", "relu1"]), _row("conv2", ["conv2"]), _row("pool", ["pool"])]
    b = [_row("conv1", ["conv1"]), _row("relu1+conv2", ["relu1", "conv2"]), _row("fc", ["fc"]),
         _row("pool", ["pool"])]
    groups = match_steps(a, b)
    names = [([r.name for r in x], [r.name for r in y]) for x, y in groups]
    # conv1+relu1 links conv1 (b) and, through relu1, relu1+conv2, which links conv2 (a): one group
    assert names == [(["conv1+relu1", "conv2"], ["conv1", "relu1+conv2"]), (["pool"], ["pool"]), ([], ["fc"])]


def test_match_steps_pairs_copies_by_tensor_and_kind():
    a = [_row("x reformat (gpu:chw -> dla:hwc4)", [], kind="reformat")]
    b = [_row("x reformat (gpu:chw -> dla:chw16)", [], kind="reformat"),
         _row("y reformat (gpu:chw -> dla:hwc4)", [], kind="reformat"),
         _row("x transition (dla:chw16 -> gpu:chw)", [], kind="transition")]
    assert [([r.name[0] for r in x], [r.name[:3] for r in y]) for x, y in match_steps(a, b)] == \
        [(["x"], ["x r"]), ([], ["y r"]), ([], ["x t"])]


def test_import_pulls_neither_networkx_nor_scipy():
    # onnx and numpy too: only reading or writing an ONNX model (or fitting) needs them
    code = ("import sys, dlasim, dlasim.explainer.compare, dlasim.explainer.waterfall, dlasim.cli; "
            "dlasim.estimate('zoo:resnet18'); "
            "print(sorted(m for m in ('networkx', 'scipy', 'onnx', 'numpy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_calibrate_without_scipy_names_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "scipy", None)            # import scipy -> ImportError
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    rc = main(["calibrate", "--hw", "xavier-agx", "--model", str(HAX / "prototxt" / "googlenet.prototxt"),
               "--profile", str(HAX / "profiles" / "googlenet_gpu_mark_at_-1.profile"), "--device", "gpu",
               "--precision", "fp16", "-o", str(tmp_path / "x.toml")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "dlasim[fit]" in err and "scipy" in err
    assert not (tmp_path / "x.toml").exists()
