"""GPU kernel classes, the GEMV weight stream, L2 residency and the tensor-core ramp (dlasim/cost/gpu.py),
the torchvision zoo networks and the T2T / kernel-grid validation scripts. Numbers are hand-computed."""
import sys
from pathlib import Path

import pytest

import dlasim
from dlasim import GraphBuilder, hardware, zoo
from dlasim.cost.geometry import ConvShape
from dlasim.cost.gpu import kernel_class

ROOT = Path(__file__).resolve().parent.parent


def _plat(**gpu):
    """H200 with the given gpu fields (everything else as in hardware_specs/h200.toml)."""
    plat = hardware("h200")
    return plat.model_copy(update={"gpu": plat.gpu.model_copy(update=gpu)})


def _layer(g, plat, precision="fp16"):
    e = dlasim.estimate(g, plat, device="gpu", precision=precision, input_formats="fp16:hwc8",
                        output_formats="fp16:hwc8")
    return [s for s in e.steps if s.kind == "layer"]


def test_kernel_class_of_each_layer_kind():
    gpu = hardware("h200").gpu                # smallest fp16 CTA tile has 64 rows
    assert kernel_class("Conv", ConvShape(1, 64, 56, 56, 64, 56, 56, 3, 3), "fp16", gpu) == "conv"
    assert kernel_class("Conv", ConvShape(1, 64, 56, 56, 256, 56, 56), "fp16", gpu) == "conv1x1"
    assert kernel_class("Conv", ConvShape(1, 64, 56, 56, 64, 56, 56, 3, 3, groups=64), "fp16", gpu) == "depthwise"
    assert kernel_class("Gemm", ConvShape(1, 4096, 1, 1, 1000, 1, 1), "fp16", gpu) == "gemv"
    assert kernel_class("Gemm", ConvShape(63, 4096, 1, 1, 1000, 1, 1), "fp16", gpu) == "gemv"
    assert kernel_class("Gemm", ConvShape(64, 4096, 1, 1, 1000, 1, 1), "fp16", gpu) == "gemm"
    assert kernel_class("GlobalAveragePool", None, "fp16", gpu) == "reduce"
    assert kernel_class("MaxPool", None, "fp16", gpu) == "eltwise"
    assert kernel_class("Relu", None, "fp16", gpu) == "eltwise"


def test_gemv_is_a_weight_stream_at_its_own_bandwidth_share():
    """FC 4096 -> 4096, batch 1, FP16: 4096*4096*2 = 33,554,432 B of weights + 8,192 B in + 8,192 B out =
    33,570,816 B at 4.8 TB/s x 0.5 = 13.9878 us (launch 0, floor 1 us, no L2 term); batch 2 adds only 16 KB,
    not a tile."""
    plat = _plat(gemv_efficiency=0.5, gemv_floor_s=1e-6, launch_overhead_s=0.0, l2_bandwidth_bytes_per_s=None,
                 tensor_latency_s=0.0)
    times = []
    for n in (1, 2):
        b = GraphBuilder("fc")
        g = b.build([b.fc(b.input("x", (n, 4096)), 4096, bias=False, name="fc")])
        (fc,) = _layer(g, plat)
        times.append(fc.time_ms)
    assert times[0] == pytest.approx(33_570_816 / 2.4e12 * 1e3)
    assert times[1] == pytest.approx((33_570_816 + 16_384) / 2.4e12 * 1e3)
    # a class without its own value falls back to the generic memory_efficiency (0.8 here)
    plat = _plat(gemv_efficiency=None, gemv_floor_s=1e-6, launch_overhead_s=0.0, memory_efficiency=0.8,
                 l2_bandwidth_bytes_per_s=None, tensor_latency_s=0.0)
    b = GraphBuilder("fc")
    (fc,) = _layer(b.build([b.fc(b.input("x", (1, 4096)), 4096, bias=False)]), plat)
    assert fc.time_ms == pytest.approx(33_570_816 / (4.8e12 * 0.8) * 1e3)
    # the kernel ramp comes on top of the stream: + 3 us
    plat = _plat(gemv_efficiency=0.5, gemv_floor_s=1e-6, launch_overhead_s=0.0, l2_bandwidth_bytes_per_s=None,
                 tensor_latency_s=3e-6)
    b = GraphBuilder("fc")
    (fc,) = _layer(b.build([b.fc(b.input("x", (1, 4096)), 4096, bias=False)]), plat)
    assert fc.time_ms == pytest.approx((33_570_816 / 2.4e12 + 3e-6) * 1e3)


@pytest.mark.parametrize("n, l2, expect_us", [
    (8, True, 25_690_112 / 6e12 * 1e6),            # 2 x 12.8 MB <= 0.7 x 60 MiB = 44.0 MB: from the L2
    (16, True, 51_380_224 / (4.8e12 * 0.8) * 1e6),  # 51.4 MB > 44.0 MB: from DRAM
    (8, False, 25_690_112 / (4.8e12 * 0.8) * 1e6),  # no L2 fields: DRAM
])
def test_relu_activations_that_fit_in_l2_move_at_l2_bandwidth(n, l2, expect_us):
    """ReLU of N x 256 x 56 x 56 FP16 (in + out = N x 3,211,264 B), memory_efficiency 0.8, L2 6 TB/s."""
    extra = {"l2_bandwidth_bytes_per_s": 6e12, "l2_usable_fraction": 0.7} if l2 else \
        {"l2_bandwidth_bytes_per_s": None}
    plat = _plat(memory_efficiency=0.8, memory_kernel_floor_s=1e-6, launch_overhead_s=0.0, **extra)
    b = GraphBuilder("r")
    (relu,) = _layer(b.build([b.relu(b.input("x", (n, 256, 56, 56)))]), plat)
    assert relu.time_ms * 1e3 == pytest.approx(expect_us)


def test_class_without_l2_share_of_its_own_scales_l2_rate():
    """A 1x1 conv at conv1x1_efficiency 0.4 against memory_efficiency 0.8 reaches half the L2 rate: 8 x 64 x 56
    x 56 in (3,211,264 B) + 8 x 256 x 56 x 56 out (12,845,056 B) = 16,056,320 B at 3 TB/s = 5.352 us; the
    compute (8 x 3136 x 256 x 64 MACs) is far below that and the weights (32 KB) come from DRAM at 1.92 TB/s."""
    plat = _plat(memory_efficiency=0.8, conv1x1_efficiency=0.4, conv1x1_floor_s=0.0, launch_overhead_s=0.0,
                 l2_bandwidth_bytes_per_s=6e12, l2_usable_fraction=0.7, tensor_latency_s=0.0)
    b = GraphBuilder("c")
    (conv,) = _layer(b.build([b.conv(b.input("x", (8, 64, 56, 56)), 256, 1, bias=False)]), plat)
    assert conv.bound == "memory"
    assert conv.time_ms * 1e3 == pytest.approx(16_056_320 / 3e12 * 1e6 + 32_768 / 1.92e12 * 1e6)


def test_tensor_latency_is_added_to_the_tiles():
    """FC 256 rows x 256 -> 128, FP16, one tile 128x128x32, tensor efficiency 0.5: 2 tiles in one wave,
    128 x 128 x 256 FMAs / (2048 FMA/clk x 1.98 GHz x 0.5) = 2.0687 us per SM, + 5 us ramp = 7.0687 us."""
    base = dict(cta_tiles_fp16=[[128, 128, 32]], tensor_efficiency=0.5, kernel_floor_s=0.0, gemm_floor_s=0.0,
                launch_overhead_s=0.0)
    times = {}
    for lat in (0.0, 5e-6):
        b = GraphBuilder("g")
        (fc,) = _layer(b.build([b.fc(b.input("x", (256, 256)), 128, bias=False)]), _plat(tensor_latency_s=lat,
                                                                                        **base))
        times[lat] = fc.time_ms * 1e3
    assert times[0.0] == pytest.approx(128 * 128 * 256 / (2048 * 1.98e9 * 0.5) * 1e6)
    assert times[5e-6] == pytest.approx(times[0.0] + 5.0)


@pytest.mark.parametrize("name, params", [("alexnet", 61_100_840), ("vgg16", 138_357_544),
                                          ("vgg19", 143_667_240), ("squeezenet1_1", 1_235_496)])
def test_torchvision_nets_have_torchvision_parameter_counts(name, params):
    """torchvision's documented parameter counts (no BatchNormalization in these four)."""
    assert zoo.build(name).params == params


def test_torchvision_nets_build_and_classify():
    for name in ("resnet101", "resnet152", "densenet121", "mnasnet1_0"):
        g = zoo.build(name, batch=2)
        assert g.tensors[g.outputs[0]].shape == (2, 1000)
    # DenseNet-121: 64 + 6 x 32 = 256 channels after block 1, halved by transition 1 to 128
    g = zoo.build("densenet121")
    conv = g.layer("features.transition1.conv")
    assert g.tensors[conv.inputs[0]].shape[1] == 256 and g.tensors[conv.outputs[0]].shape[1] == 128


def test_t2t_rows_parse_from_the_real_file():
    sys.path.insert(0, str(ROOT / "validation"))
    import t2t_xavier
    rows = t2t_xavier.rows()
    assert len(rows) == 12 and all(r["case_id"].startswith("T2T-") for r in rows)
    nets = [r["model"].split()[-1] for r in rows]
    assert set(nets) <= set(zoo.names())
    assert float(next(r for r in rows if r["model"].endswith("vgg16"))["value"]) == 7.46
    # the throughput column of the quotes: '1.29e+03' (SqueezeNet) and '565' (AlexNet) -> ms per call
    thr = {r["case_id"]: t2t_xavier.throughput_ms(r["quote"]) for r in rows}
    assert thr["T2T-02"] == pytest.approx(1000 / 1290) and thr["T2T-01"] == pytest.approx(1000 / 565)
    assert all(v is not None for v in thr.values())
    assert t2t_xavier.throughput_ms("| Latency (TensorRT) 2.02 |") is None


def test_grid_held_out_rule_keeps_every_third_shape_out():
    """conv1x1 has 11 shapes x 6 batches in gpu_grid.py: shapes 2, 5, 8 (18 rows) are held out, 48 fitted
    (the 11 of CONV1 in order: 64->256, 256->64, 256->512 s2, 512->128, 128->512, 1024->256, 256->1024, 2048->512,
    512->2048, 32->192, 960->160)."""
    sys.path.insert(0, str(ROOT / "validation"))
    import gpu_classes
    fit, held = gpu_classes.grid_observations(hardware("h200"), "conv1x1")
    assert (len(fit), len(held)) == (48, 18)
    shape = lambda o: o.label.rsplit(" n=", 1)[0]
    assert not {shape(o) for o in fit} & {shape(o) for o in held}
    assert {shape(o) for o in held} == {"conv1x1 256->512 56x56 s2", "conv1x1 1024->256 14x14 s1",
                                        "conv1x1 512->2048 7x7 s1"}


@pytest.mark.parametrize("hw", ["titan-rtx", "a100", "a40"])
def test_discrete_gpus_price_tiny_convs_at_their_class_floor(hw):
    """A 16->16 conv on a 4x4 map at batch 1 does ~4k MACs: every kernel sits on its floor. The 1x1 and the
    depthwise conv take the class floors (gpu.conv1x1_floor_s, gpu.depthwise_floor_s), the 3x3 conv the conv
    floor (kernel_floor_s); each plus the launch overhead."""
    gpu = hardware(hw).gpu
    assert gpu.conv1x1_floor_s < gpu.kernel_floor_s
    want = {(1, 1): gpu.conv1x1_floor_s, (3, 1): gpu.kernel_floor_s, (3, 16): gpu.depthwise_floor_s}
    for (k, groups), floor in want.items():
        b = GraphBuilder("tiny")
        g = b.build([b.conv(b.input("x", (1, 16, 4, 4)), 16, kernel=k, groups=groups, name="c")])
        (step,) = _layer(g, hardware(hw))
        assert step.time_ms == pytest.approx((floor + gpu.launch_overhead_s) * 1e3, rel=1e-9), (k, groups)


def test_fit_specs_gives_the_discrete_gpus_the_h200_class_floors():
    """validation/fit_specs.py discrete_class_floors: the H200 grid's conv1x1 and depthwise floors, queued for
    A100, A40 and TITAN RTX with a source naming the grid; nothing for the other platforms."""
    sys.path.insert(0, str(ROOT / "validation"))
    import fit_specs
    h200 = _plat(conv1x1_floor_s=3.0e-6, depthwise_floor_s=7.0e-6)
    queued = {}
    got = fit_specs.discrete_class_floors(h200, lambda spec, v, s: queued.setdefault(spec, (v, s)))
    assert got == {"gpu.conv1x1_floor_s": 3.0e-6, "gpu.depthwise_floor_s": 7.0e-6}
    assert set(queued) == {"a100", "a40", "titan-rtx"}
    for values, sources in queued.values():
        assert values == got
        assert "gpu_grid_results.json conv1x1" in sources["gpu.conv1x1_floor_s"]
        assert "gpu_grid_results.json depthwise" in sources["gpu.depthwise_floor_s"]
