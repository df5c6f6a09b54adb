"""trtexec command lines through the CLI, warnings for options that cannot take effect, files passed to the
wrong option, help texts and terminal width."""
import gzip
import json
import shutil
from pathlib import Path

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.cli import main, parser
from dlasim.hardware import hardware, without_tf32

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "tests" / "fixtures" / "exports"
HAX = ROOT / "validation" / "data" / "haxconn"
GOOGLENET = str(HAX / "prototxt" / "googlenet.prototxt")
GPU_PROFILE = str(HAX / "profiles" / "googlenet_gpu_mark_at_-1.profile")
TREX = ROOT / "validation" / "data" / "trex" / "a100-resnet50" / "fp16"
TREX_PROFILE = str(TREX / "resnet.onnx.engine.profile.json")
TREX_LAYERS = str(TREX / "resnet.onnx.engine.graph.json")


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def resnet18_onnx(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "model.onnx"
    with gzip.open(EXPORTS / "tv_resnet18.onnx.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return str(path)


def warnings_of(err: str) -> list[str]:
    return [l[len("dlasim: warning: "):] for l in err.splitlines() if l.startswith("dlasim: warning: ")]


def test_pasted_trtexec_command_line(capsys, resnet18_onnx, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "estimate", f"--onnx={resnet18_onnx}", "--int8", "--fp16", "--saveEngine=x.plan",
                       "--useDLACore=0", "--allowGPUFallback", "--verbose", "--iterations=100",
                       "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    assert (d["device"], d["precision"]) == ("dla", "int8")
    ignored = [w for w in d["warnings"] if w.startswith("ignored")]
    assert len(ignored) == 1 and all(f in ignored[0] for f in ("--saveEngine=x.plan", "--verbose", "--iterations"))
    assert ignored[0] in warnings_of(err)
    assert not (tmp_path / "x.plan").exists()
    # the same engine as dlasim's own spelling
    api = dlasim.estimate(resnet18_onnx, "xavier-agx", device="dla", precision="int8")
    assert d["total_ms"] == pytest.approx(api.total_ms)


@pytest.mark.parametrize("flags,precision", [(["--int8", "--fp16"], "int8"), (["--int8"], "int8"),
                                             (["--fp16"], "fp16"), (["--best"], "best"), (["--best", "--int8"], "best"),
                                             ([], "fp16")])
def test_precision_flags(capsys, flags, precision):
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", *flags, "--format", "json")
    assert rc == 0, err and json.loads(out)["precision"] == precision
    assert json.loads(out)["precision"] == precision


def test_precision_and_trtexec_flags_conflict(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--precision", "fp16", "--int8")
    assert rc == 2 and "not both" in err and err.count("\n") == 1


def test_int8_without_fp16_on_gpu_says_trtexec_would_use_fp32(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:googlenet", "--hw", "a100", "--int8", "--format", "json")
    assert rc == 0
    w = [x for x in json.loads(out)["warnings"] if x.startswith("--int8 without --fp16")]
    assert len(w) == 1 and "FP32" in w[0]
    rc, out, err = run(capsys, "estimate", "zoo:googlenet", "--hw", "a100", "--int8", "--fp16", "--format", "json")
    assert not [x for x in json.loads(out)["warnings"] if x.startswith("--int8 without")]


def test_opt_shapes_are_estimated_and_bounds_checked(capsys):
    rc, out, _ = run(capsys, "estimate", "zoo:resnet18", "--format", "json")
    one = json.loads(out)
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--minShapes=input:1x3x224x224",
                       "--optShapes=input:4x3x224x224", "--maxShapes=input:8x3x224x224", "--format", "json")
    assert rc == 0, err
    four = json.loads(out)
    assert four["batch"] == 4 and four["macs"] == 4 * one["macs"]
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", "--optShapes=input:4x3x224x224",
                     "--maxShapes=input:2x3x224x224")
    assert rc == 2 and "--maxShapes" in err and "outside" in err
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--shapes=input:2x3x224x224",
                       "--optShapes=input:4x3x224x224", "--format", "json")
    d = json.loads(out)
    assert d["batch"] == 2 and any("--shapes and --optShapes differ" in w for w in d["warnings"])
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", "--optShapes=input:4by3")
    assert rc == 2 and "--optShapes" in err


def test_no_tf32_uses_cuda_cores_for_fp32():
    a100 = hardware("a100")
    plain = without_tf32(a100)
    assert a100.gpu.tf32 and not plain.gpu.tf32
    assert plain.gpu.fma_per_clk_per_sm("fp32") == a100.gpu.cuda_core_fma_per_clk_per_sm
    assert plain.gpu.fma_per_clk_per_sm("fp16") == a100.gpu.fma_per_clk_per_sm("fp16")
    assert without_tf32(hardware("xavier-agx")) is hardware("xavier-agx")     # Volta: nothing to take away


def test_no_tf32_through_the_cli(capsys):
    base = ["estimate", "zoo:resnet50", "--hw", "a100", "--device", "gpu", "--format", "json"]
    rc, out, _ = run(capsys, *base, "--precision", "fp32")
    tf32 = json.loads(out)
    rc, out, err = run(capsys, *base, "--precision", "fp32", "--noTF32")
    no = json.loads(out)
    assert no["total_ms"] > 2 * tf32["total_ms"] and not warnings_of(err)
    rc, out, err = run(capsys, *base, "--fp16", "--noTF32")
    assert any("--noTF32 has no effect" in w for w in json.loads(out)["warnings"])
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--device", "gpu", "--precision", "fp32", "--noTF32")
    assert rc == 0 and any("no TF32" in w for w in warnings_of(err))


def test_trtexec_device_number_and_unmodelled_flags(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--hw", "a100", "--device=0", "--streams=2",
                       "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["device"] == "gpu"                 # a100 has no DLA: the GPU, as trtexec
    assert any("--device=0" in w for w in d["warnings"])
    assert any(w.startswith("not modelled") and "--streams=2" in w for w in d["warnings"])
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", "--device", "tpu")
    assert rc == 2 and "expected dla, dla0, dla1 or gpu" in err


def test_caffe_deploy_and_model(capsys, tmp_path):
    rc, out, err = run(capsys, "estimate", f"--deploy={GOOGLENET}", "--model=googlenet.caffemodel",
                       "--format", "json")
    assert rc == 0, err
    assert any("--model=googlenet.caffemodel" in w for w in json.loads(out)["warnings"])
    rc, _, err = run(capsys, "estimate", "--model=googlenet.caffemodel")
    assert rc == 2 and "--deploy" in err and "weights" in err
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", f"--deploy={GOOGLENET}")
    assert rc == 2 and "once" in err
    rc, _, err = run(capsys, "estimate", "--loadEngine=x.plan")
    assert rc == 2 and "serialized engine" in err
    rc, _, err = run(capsys, "estimate", "--fp16")
    assert rc == 2 and "give a model" in err


def test_options_that_cannot_take_effect_warn_on_stderr_and_in_json(capsys):
    cases = [(["--precision", "fp32", "--device", "dla"], "cannot take effect on the DLA"),
             (["--fp16", "--inputIOFormats=int8:chw32"], "INT8 I/O does not make the engine INT8"),
             (["--int8", "--sparsity=force"], "has no effect"),         # Xavier's DLA v1: no 2:4
             (["--fp16", "--hw", "a100", "--sparsity=enable"], "has no effect")]    # A100: FP16 dense as fast
    for flags, needle in cases:
        rc, out, err = run(capsys, "estimate", "zoo:resnet18", *flags, "--format", "json")
        assert rc == 0, err
        hits = [w for w in json.loads(out)["warnings"] if needle in w]
        assert len(hits) == 1 and hits[0] in warnings_of(err), flags
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--int8", "--inputIOFormats=int8:chw32",
                       "--format", "json")
    assert json.loads(out)["warnings"] == []
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--hw", "orin-agx", "--int8", "--sparsity=force",
                       "--format", "json")
    sparse = [w for w in json.loads(out)["warnings"] if "sparsity" in w]
    assert all("has no effect" not in w for w in sparse)          # Orin DLA: some layers are eligible


def test_explain_and_compare_carry_warnings(capsys):
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--precision", "fp32", "--device", "dla",
                       "--format", "json")
    d = json.loads(out)
    assert rc == 0 and d["schema_version"] and any("DLA" in w and "FP32" in w for w in d["warnings"])
    rc, out, err = run(capsys, "compare", "zoo:resnet18", "--vary", "precision=fp16,int8", "--workspace=4096",
                       "--format", "json")
    d = json.loads(out)
    assert rc == 0 and any("--workspace" in w for w in d["warnings"])
    assert all(v["throughput_qps"] > 0 for v in d["variants"])


def test_measured_profile_name_mismatch(capsys, tmp_path):
    # a GoogLeNet profile against ResNet-50: nothing matches -> exit 2 naming the count
    rc, out, err = run(capsys, "explain", "zoo:resnet50", "--device", "gpu", "--measured", GPU_PROFILE)
    assert rc == 2 and out == "" and "none of its 85 measured rows" in err and err.count("\n") == 1
    # the engine's own model: most rows match, the rest is counted
    rc, out, err = run(capsys, "explain", GOOGLENET, "--device", "gpu", "--measured", GPU_PROFILE,
                       "--format", "json")
    assert rc == 0
    assert any(w.endswith("of 85 measured rows match a predicted step") for w in json.loads(out)["warnings"])
    # layer info of another engine
    other = str(ROOT / "validation" / "data" / "trex" / "a100-resnet50" / "qat-residual"
                / "resnet-qat-residual.onnx.engine.graph.json")
    rc, _, err = run(capsys, "profile", TREX_PROFILE, "--layer-info", other)
    assert rc == 2 and "none of its 36 rows has an entry in the layer info" in err
    rc, out, err = run(capsys, "profile", TREX_PROFILE, "--layer-info", TREX_LAYERS, "--format", "json")
    assert rc == 0 and json.loads(out)["schema_version"]
    rc, _, err = run(capsys, "calibrate", "--hw", "a100", "--model", "zoo:resnet50", "--profile", GPU_PROFILE,
                     "--device", "gpu", "-o", str(tmp_path / "x.toml"))
    assert rc == 2 and "none of its" in err and not (tmp_path / "x.toml").exists()


def test_explain_measured_accepts_layer_info(capsys):
    rc, out, err = run(capsys, "explain", "zoo:resnet50", "--hw", "a100", "--device", "gpu", "--measured",
                       TREX_PROFILE, "--layer-info", TREX_LAYERS)
    assert rc == 2 and "--layer-info" not in err and "none of its 36 measured rows" in err
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--layer-info", TREX_LAYERS)
    assert rc == 0 and any("--layer-info has no effect without --measured" in w for w in warnings_of(err))


@pytest.mark.parametrize("argv,needle", [
    (["estimate", TREX_PROFILE], "looks like a trtexec --exportProfile JSON"),
    (["estimate", GPU_PROFILE], "belongs to explain --measured"),
    (["inspect", TREX_LAYERS], "looks like a trtexec --exportLayerInfo JSON"),
    (["explain", "zoo:resnet18", "--measured", GOOGLENET], "looks like a Caffe prototxt model"),
    (["explain", "zoo:resnet18", "--measured", TREX_LAYERS], "belongs to --layer-info"),
    (["profile", GOOGLENET], "belongs to MODEL"),
    (["profile", TREX_PROFILE, "--layer-info", TREX_PROFILE], "not what --layer-info takes"),
    (["estimate", str(TREX / "resnet.onnx.engine.metadata.json")], "metadata"),
])
def test_file_passed_to_the_wrong_option(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == "" and needle in err and err.count("\n") == 1


def test_engine_file_as_model(capsys, tmp_path):
    plan = tmp_path / "x.plan"
    plan.write_bytes(b"\x00ftrt")
    rc, _, err = run(capsys, "estimate", str(plan))
    assert rc == 2 and "serialized TensorRT engine" in err


def _actions():
    ap = parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        for act in p._actions:
            if act.help == "==SUPPRESS==" or act.dest == "help":
                continue
            yield name, act


def test_every_option_has_help_with_its_default():
    seen = 0
    for name, act in _actions():
        seen += 1
        text = act.help or ""
        assert text and ("default" in text or "required" in text), (name, act.option_strings or act.dest)
    assert seen > 60


def test_version_help_and_bare_command(capsys):
    with pytest.raises(SystemExit) as ex:
        main(["--version"])
    assert ex.value.code == 0 and capsys.readouterr().out.strip() == f"dlasim {dlasim.__version__}"
    rc, out, err = run(capsys)
    assert rc == 0 and "usage: dlasim" in out and "estimate" in out and err == ""
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    text = capsys.readouterr().out
    assert "--onnx" in text and "trtexec: off" in text and "--saveEngine" in text


def test_errors_have_one_prefix_and_explain_offers_only_its_formats(capsys):
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--format", "csv")
    assert rc == 2 and err.startswith("dlasim: error: explain: argument --format") and "dlasim estimate" not in err
    assert err.count("dlasim") == 1 and "'table', 'json', 'html'" in err
    rc, _, err = run(capsys, "estimate", "zoo:resnet18", "--saveEng=x")
    assert rc == 2 and "unrecognized arguments" in err        # no abbreviations


def test_text_fits_the_terminal(capsys, monkeypatch):
    for cols, argv in ((100, ["explain", "zoo:yolov4_relu", "--hw", "orin-agx", "--int8"]),
                       (80, ["explain", "zoo:yolov4_relu", "--hw", "orin-agx", "--int8"]),
                       (80, ["estimate", "zoo:googlenet", "--fp16"]),
                       (120, ["compare", "zoo:resnet18", "--vary", "precision=fp16,int8"]),
                       (90, ["explain", GOOGLENET, "--device", "gpu", "--measured", GPU_PROFILE]),
                       (100, ["estimate", "zoo:yolov4", "--hw", "xavier-agx"])):
        monkeypatch.setenv("COLUMNS", str(cols))
        rc, out, err = run(capsys, *argv)
        assert rc == 0, err
        assert max(len(l) for l in out.splitlines()) <= cols, (cols, argv)
    monkeypatch.delenv("COLUMNS")
    rc, out, _ = run(capsys, "explain", "zoo:yolov4_relu", "--hw", "orin-agx", "--int8")
    assert max(len(l) for l in out.splitlines()) <= 100               # not a TTY: 100 columns


def test_fallback_list_grouped_by_reason(capsys, tmp_path):
    b = GraphBuilder("soft")
    x = b.input("x", (1, 16, 8, 8))
    t = x
    for i in range(30):
        t = b.conv(t, 16, 1, name=f"c{i}")
        t = b.op("Softmax", [t], {"axis": 1}, name=f"s{i}")
    path = tmp_path / "soft.json"
    path.write_text(b.build([t]).to_json())
    rc, out, err = run(capsys, "estimate", str(path), "--hw", "xavier-agx", "--fp16")
    assert rc == 0, err
    lines = out.splitlines()
    head = [l for l in lines if l.strip().startswith("30 x ") and l.rstrip().endswith("(Softmax)")]
    assert len(head) == 1 and head[0].split()[0] == "30"
    names = lines[lines.index(head[0]) + 1]
    assert names.strip().startswith("s0, s1") and names.rstrip().endswith("more")
    assert not any(l.lstrip().startswith("fallback s") for l in lines)


def test_throughput_beside_latency(capsys):
    rc, out, _ = run(capsys, "estimate", "zoo:resnet18", "--batch", "4", "--format", "json")
    d = json.loads(out)
    assert d["throughput_qps"] == pytest.approx(4 * 1000.0 / d["total_ms"])
    rc, out, _ = run(capsys, "estimate", "zoo:resnet18", "--batch", "4")
    line = next(l for l in out.splitlines() if l.startswith("latency"))
    assert f"{d['total_ms']:.4f} ms" in line and f"{d['throughput_qps']:.1f} qps" in line


def test_compare_says_when_vary_overrides_an_option(capsys):
    rc, out, err = run(capsys, "compare", "zoo:resnet18", "--int8", "--vary", "precision=fp16,int8")
    assert rc == 0 and any("--vary precision" in w and "not used" in w for w in warnings_of(err))
    rc, out, err = run(capsys, "compare", "zoo:resnet18", "--int8", "--vary", "batch=1,2")
    assert rc == 0 and not any("--vary" in w for w in warnings_of(err))
    assert len([l for l in out.splitlines() if " qps " in l]) == 2       # one line per variant


def test_explain_text_shows_throughput(capsys):
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--batch", "2", "--format", "json")
    d = json.loads(out)
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--batch", "2")
    assert f"predicted {d['total_ms']:.4f} ms ({2000 / d['total_ms']:.1f} qps)" in out


def test_gpu_fallback_flag_on_a_gpu_build_warns(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--hw", "a100", "--allowGPUFallback")
    assert rc == 0 and any("--allowGPUFallback has no effect on a GPU build" in w for w in warnings_of(err))
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--hw", "orin-agx", "--allowGPUFallback")
    assert rc == 0 and not warnings_of(err)


def test_a_subcommand_is_one_table_row(capsys, monkeypatch):
    import dlasim.cli as cli
    from dlasim.cli.commands import options
    from dlasim.cli.options import add_model_options, resolve

    def run_row(a):
        return f"{resolve(a).model} {options(a)['device']} {options(a)['precision']}"
    monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + [("echo", "echo the options (test)",
                                                               add_model_options, run_row)])
    rc, out, err = run(capsys, "echo", "--onnx=m.onnx", "--int8", "--fp16", "--hw", "a100")
    assert rc == 0 and out == "m.onnx gpu int8\n"


def test_warnings_reach_html_pages(capsys, tmp_path):
    page = tmp_path / "x.html"
    rc, out, err = run(capsys, "explain", "zoo:resnet18", "--precision", "fp32", "--verbose", "--format", "html",
                       "-o", str(page))
    assert rc == 0
    text = page.read_text()
    assert "ignored (no effect on a latency estimate): --verbose" in text and "cannot take effect on the DLA" in text


def test_batch_and_shapes_that_disagree_warn(capsys):
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--shapes=input:2x3x224x224", "--batch=4",
                       "--format", "json")
    d = json.loads(out)
    assert d["batch"] == 4 and any("--batch=4 and the shapes' batch (2) differ" in w for w in d["warnings"])
    rc, out, err = run(capsys, "estimate", "zoo:resnet18", "--shapes=input:4x3x224x224", "--batch=4",
                       "--format", "json")
    assert json.loads(out)["warnings"] == []
