"""The core import stays light: no networkx, scipy, onnx or numpy; fitting names its extra when scipy is missing."""
import subprocess
import sys
from pathlib import Path

from dlasim.explainer.match import match_steps
from dlasim.cli import main
from dlasim.report import CopyRow, StepRow

ROOT = Path(__file__).resolve().parents[1]
HAX = ROOT / "validation" / "data" / "haxconn"


def _row(name, layers, kind="layer", copy=None):
    return StepRow(name=name, kind=kind, op="Conv", device="dla", precision="fp16", time_ms=0.1,
                   bound="compute", layers=layers, copy=copy)


def test_match_steps_groups_steps_that_share_layers_across_fusions():
    a = [_row("conv1+relu1", ["conv1", "relu1"]), _row("conv2", ["conv2"]), _row("pool", ["pool"])]
    b = [_row("conv1", ["conv1"]), _row("relu1+conv2", ["relu1", "conv2"]), _row("fc", ["fc"]),
         _row("pool", ["pool"])]
    groups = match_steps(a, b)
    names = [([r.name for r in x], [r.name for r in y]) for x, y in groups]
    # conv1+relu1 links conv1 (b) and, through relu1, relu1+conv2, which links conv2 (a): one group
    assert names == [(["conv1+relu1", "conv2"], ["conv1", "relu1+conv2"]), (["pool"], ["pool"]), ([], ["fc"])]


def _copy(name, tensor, kind, src, dst):
    return _row(name, [], kind, CopyRow(tensor, src, dst))


def test_match_steps_pairs_copies_by_tensor_and_kind():
    """Copies pair by the tensor and kind of their copy record, whatever their names and formats; a copy
    without a record (a Q/DQ left as a copy) pairs by its name only."""
    fp32, hwc4, chw16 = ("fp32", "linear"), ("fp16", "dla_hwc4"), ("fp16", "chw16")
    a = [_copy("a", "x", "reformat", fp32, hwc4), _row("q", [], kind="reformat")]
    b = [_copy("b", "x", "reformat", fp32, chw16), _copy("c", "y", "reformat", fp32, hwc4),
         _copy("d", "x", "transition", chw16, fp32), _row("q", [], kind="reformat"),
         _row("x reformat (fp32:linear -> fp16:dla_hwc4)", [], kind="reformat")]
    assert [([r.name for r in x], [r.name for r in y]) for x, y in match_steps(a, b)] == \
        [(["a"], ["b"]), (["q"], ["q"]), ([], ["c"]), ([], ["d"]), ([], ["x reformat (fp32:linear -> fp16:dla_hwc4)"])]


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
