from collections import Counter

import pytest

from dlasim import zoo
from dlasim.errors import ModelError
from dlasim.ir import Graph

# MACs at batch 1, default input size (torchvision / Darknet / TF reference figures)
MACS_RANGES = {
    "resnet18": (1.75e9, 1.9e9),
    "resnet34": (3.5e9, 3.75e9),
    "resnet50": (3.9e9, 4.2e9),
    "mobilenet_v1": (0.55e9, 0.6e9),
    "mobilenet_v2": (0.28e9, 0.33e9),
    "googlenet": (1.4e9, 1.65e9),
    "yolov4": (28e9, 32e9),
    "yolov4_relu": (28e9, 32e9),
    "ssd_mobilenet_v1": (1.1e9, 1.35e9),
    # torchvision model docs 'GFLOPS' (multiply-adds): alexnet 0.71, vgg16 15.47, vgg19 19.63,
    # squeezenet1_1 0.35, resnet101 7.8, resnet152 11.51, densenet121 2.83, mnasnet1_0 0.31; +-1.5%
    **{n: (0.985 * g * 1e9, 1.015 * g * 1e9) for n, g in [("alexnet", 0.71), ("vgg16", 15.47), ("vgg19", 19.63),
                                                           ("squeezenet1_1", 0.35), ("resnet101", 7.8),
                                                           ("resnet152", 11.51), ("densenet121", 2.83),
                                                           ("mnasnet1_0", 0.31)]},
    # Darknet prints BFLOPS = 2 x MACs of the conv layers: yolov3 416 65.879, yolov3-spp 608 141.531,
    # yolov3-tiny 416 5.571, yolov4-tiny 416 6.910 (AlexeyAB/darknet cfg load output), +-1%
    "yolov3": (0.99 * 65.879e9 / 2, 1.01 * 65.879e9 / 2),
    "yolov3_spp": (0.99 * 141.531e9 / 2, 1.01 * 141.531e9 / 2),
    "yolov3_tiny": (0.99 * 5.571e9 / 2, 1.01 * 5.571e9 / 2),
    "yolov4_tiny": (0.99 * 6.910e9 / 2, 1.01 * 6.910e9 / 2),
    "ssd_resnet34": (0.97 * 433e9 / 2, 1.03 * 433e9 / 2),  # MLPerf: 433 GOPs per 1200x1200 image
    # AlexeyAB/darknet README: yolov4-csp 512x512 77 BFLOPs, yolov4x-mish 640x640 221 BFLOPs (2 x MACs); the
    # yolov4x-mish build is 2.5% above its figure (113.3 GMACs), hence its wider window
    "yolov4_csp": (0.99 * 77e9 / 2, 1.01 * 77e9 / 2),
    "yolov4x_mish": (0.97 * 221e9 / 2, 1.03 * 221e9 / 2),
    "resnext50_32x4d": (0.985 * 4.23e9, 1.015 * 4.23e9),   # torchvision model docs 4.23 GFLOPS (multiply-adds)
    "inception_v4": (0.985 * 12.3e9, 1.015 * 12.3e9),      # Inception-v4 paper / slim: ~12.3 GMACs at 299x299
    # Open Model Zoo human-pose-estimation-0001 (Lightweight OpenPose, 256x456) model card: 15.435 GFLOPs
    "lightweight_openpose": (0.985 * 15.435e9 / 2, 1.015 * 15.435e9 / 2),
    "seed000_conv1x1": (528 * 256 * 196, 528 * 256 * 196),
    "seed000_conv3x3": (238_436_352, 238_436_352),
}


@pytest.fixture(scope="module")
def graphs() -> dict[str, Graph]:
    return {n: zoo.build(n) for n in zoo.names()}


def ops(g: Graph) -> Counter:
    return Counter(l.op for l in g.layers)


def test_names_and_descriptions():
    names = zoo.names()
    assert len(names) == len(set(names))
    for n in MACS_RANGES:
        assert n in names
    assert "yolov8l_backbone" in names
    for n in names:
        d = zoo.describe(n)
        assert d and "\n" not in d
    assert "NMS" in zoo.describe("ssd_mobilenet_v1")


def test_every_model_builds_and_validates(graphs):
    for n, g in graphs.items():
        assert g.inputs == ["input"] and g.tensors["input"].shape[0] == 1
        assert len({l.name for l in g.layers}) == len(g.layers)
        assert not any("unknown_op" in l.flags for l in g.layers), n
        g.validate().infer_shapes()
        assert all(g.tensors[t].shape for t in g.outputs)
        # round trip through JSON keeps the network
        assert Graph.from_json(g.to_json()).infer_shapes().macs == g.macs


@pytest.mark.parametrize("name", sorted(MACS_RANGES))
def test_macs(graphs, name):
    lo, hi = MACS_RANGES[name]
    assert lo <= graphs[name].macs <= hi


def test_exported_layout_is_unfolded(graphs):
    c = ops(graphs["resnet50"])
    # the stem conv + 16 bottlenecks x 3 convs + 4 downsample 1x1 convs = 53, each with its BN
    assert c["Conv"] == 53 and c["BatchNormalization"] == 53 and c["Gemm"] == 1
    assert c["GlobalAveragePool"] == 1 and c["Flatten"] == 1
    g = graphs["resnet50"]
    conv2 = g.layer("layer2.0.conv2")
    assert conv2.attributes["strides"] == [2, 2] and conv2.attributes["kernel_shape"] == [3, 3]  # v1.5
    assert g.layer("layer2.0.conv1").attributes["strides"] == [1, 1]
    # ReLU6 after the stem, once in the t=1 block (depthwise only), twice in each of the other 16 blocks
    # (expand, depthwise), after the last 1x1 conv: 1 + 1 + 32 + 1 = 35
    assert ops(graphs["mobilenet_v2"])["Clip"] == 35
    assert ops(graphs["mobilenet_v1"])["Relu"] == 27              # the stem + 13 x (depthwise, pointwise)


def test_googlenet_follows_caffe_prototxt(graphs):
    g = graphs["googlenet"]
    c = ops(g)
    # conv1, conv2/3x3_reduce, conv2/3x3 + 9 inception blocks x 6 convs = 57; one Concat per block
    assert c["LRN"] == 2 and c["Softmax"] == 1 and c["Conv"] == 57 and c["Concat"] == 9
    assert g.tensors["pool1/3x3_s2"].shape == (1, 64, 56, 56)  # ceil mode
    assert g.tensors["pool5/7x7_s1"].shape == (1, 1024, 1, 1)
    assert g.layer("pool1/norm1").op == "LRN"


def test_yolov4_mish_and_relu_variants(graphs):
    mish, relu = ops(graphs["yolov4"]), ops(graphs["yolov4_relu"])
    assert mish["Mish"] > 0 and mish["LeakyRelu"] > 0
    assert relu["Mish"] == 0 and relu["LeakyRelu"] == 0 and relu["Relu"] == mish["Mish"] + mish["LeakyRelu"]
    assert mish["Conv"] == relu["Conv"] == 110  # as in yolov4.cfg
    g = graphs["yolov4"]
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 255, 52, 52), (1, 255, 26, 26), (1, 255, 13, 13)]
    assert mish["Resize"] == 2 and mish["MaxPool"] == 3


def test_yolov8l_backbone(graphs):
    g = graphs["yolov8l_backbone"]
    assert g.tensors["input"].shape == (1, 3, 640, 640)
    convs = [(g.tensors[l.inputs[1]].shape[1], g.tensors[l.inputs[1]].shape[0], l.attributes["kernel_shape"][0],
              l.attributes["strides"][0]) for l in g.layers if l.op == "Conv"]
    assert convs[:2] == [(3, 64, 3, 2), (64, 128, 3, 2)]
    assert (320, 128, 1, 1) in convs and (1024, 256, 1, 1) in convs and (2048, 512, 1, 1) in convs
    # 5 stride-2 convs + 4 C2f blocks of 2 + 2n convs (n = 3, 6, 6, 3: 8 + 14 + 14 + 8) + SPPF's 2 = 51
    assert len(convs) == 51
    assert all(len(l.inputs) == 2 for l in g.layers if l.op == "Conv")  # bias=False
    c = ops(g)
    assert c["Sigmoid"] == c["Mul"] == c["Conv"] == c["BatchNormalization"]
    assert c["Split"] == 4 and c["Concat"] == 5                  # one each per C2f; SPPF's Concat


def test_ssd_outputs(graphs):
    g = graphs["ssd_mobilenet_v1"]
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 1917, 4), (1, 1917, 91)]


def test_batch_multiplies_macs(graphs):
    for n in ("resnet18", "ssd_mobilenet_v1", "seed000_conv3x3"):
        g4 = zoo.build(n, batch=4)
        assert g4.tensors["input"].shape[0] == 4
        assert g4.macs == 4 * graphs[n].macs


def test_input_hw_override():
    g = zoo.build("yolov4", input_hw=(608, 608))
    assert g.tensors["input"].shape == (1, 3, 608, 608)
    assert g.tensors[g.outputs[-1]].shape == (1, 255, 19, 19)
    assert zoo.build("resnet50", input_hw=(112, 112)).tensors["avgpool"].shape == (1, 2048, 1, 1)
    with pytest.raises(ModelError):
        zoo.build("resnet18", input_hw=(0, 224))
    with pytest.raises(ModelError):
        zoo.build("yolov4", input_hw=(400, 400))  # not a multiple of 32: the PANet concat fails


def test_unknown_name_and_bad_batch():
    with pytest.raises(ModelError) as e:
        zoo.build("resnet51")
    msg = str(e.value)
    assert "\n" not in msg and "resnet50" in msg and "yolov4" in msg
    with pytest.raises(ModelError):
        zoo.describe("nope")
    with pytest.raises(ModelError):
        zoo.build("resnet18", batch=0)


def test_darknet_heads_and_layer_indices(graphs):
    # yolov3 at 416: heads at strides 32/16/8 -> 13, 26, 52; the output convs are cfg layers 81, 93, 105
    g = graphs["yolov3"]
    assert g.outputs == ["conv_81", "conv_93", "conv_105"]
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 255, s, s) for s in (13, 26, 52)]
    assert ops(g)["Add"] == 23                    # 1 + 2 + 8 + 8 + 4 residual shortcuts
    tiny = graphs["yolov3_tiny"]                  # the 2x2 stride-1 maxpool keeps 13x13 (padded right/bottom)
    assert [tiny.tensors[t].shape for t in tiny.outputs] == [(1, 255, 13, 13), (1, 255, 26, 26)]
    assert tiny.outputs == ["conv_15", "conv_22"]
    v4t = graphs["yolov4_tiny"]                   # three channel-half routes, heads at layers 29 and 36
    assert v4t.outputs == ["conv_29", "conv_36"] and ops(v4t)["Split"] == 3
    assert [v4t.tensors[t].shape for t in v4t.outputs] == [(1, 255, 13, 13), (1, 255, 26, 26)]
    spp = graphs["yolov3_spp"]
    assert ops(spp)["MaxPool"] == 3 and spp.tensors[spp.outputs[0]].shape == (1, 255, 19, 19)


def test_ssd_resnet34_maps_and_boxes(graphs):
    g = graphs["ssd_resnet34"]
    maps = [g.tensors[f"additional_blocks.{i}.3"].shape[2] for i in range(6)]
    assert maps == [50, 25, 13, 7, 3, 3]
    assert g.tensors["locs"].shape == (1, 4, 15130) and g.tensors["confs"].shape == (1, 81, 15130)


def _conv_macs(cin: int, cout: int, k: int, pixels: int) -> int:
    return cin * cout * k * k * pixels


def test_retinanet_hand_count(graphs):
    """ResNeXt-50 trunk scaled from 224 to 800 (every map is 800/224 larger on each side), plus the FPN and the
    ten heads counted conv by conv: 256-channel 3x3 convs on P3..P7 (100, 50, 25, 13, 7 at 800x800)."""
    g = graphs["retinanet_resnext50_fpn"]
    trunk = (graphs["resnext50_32x4d"].macs - 2048 * 1000) * (800 * 800) // (224 * 224)
    sides = (100, 50, 25, 13, 7)
    px = [s * s for s in sides]
    fpn = (_conv_macs(512, 256, 1, px[0]) + _conv_macs(1024, 256, 1, px[1]) + _conv_macs(2048, 256, 1, px[2])
           + sum(_conv_macs(256, 256, 3, p) for p in px))            # 3 lateral 1x1, 3 output 3x3, P6, P7
    head = sum(8 * _conv_macs(256, 256, 3, p) + _conv_macs(256, 9 * 264, 3, p) + _conv_macs(256, 9 * 4, 3, p)
               for p in px)
    assert g.macs == trunk + fpn + head
    assert [g.tensors[t].shape[2] for t in g.outputs] == [s for s in sides for _ in (0, 1)]
    assert [g.tensors[t].shape[1] for t in g.outputs][:2] == [2376, 36]
    assert ops(g)["Conv"] == 53 + 3 + 3 + 2 + 5 * 10                  # trunk, FPN, P6/P7, 5 levels x 2 heads
    conv2 = g.layer("backbone.body.layer2.0.conv2")
    assert conv2.attributes["group"] == 32 and conv2.attributes["strides"] == [2, 2]


def test_scaled_yolov4_structure(graphs):
    csp = graphs["yolov4_csp"]                    # cfg layers 143/158/173 are the logistic output convs
    assert csp.outputs == ["logistic_143", "logistic_158", "logistic_173"]
    assert [csp.tensors[t].shape for t in csp.outputs] == [(1, 255, s, s) for s in (64, 32, 16)]
    assert ops(csp)["Add"] == 1 + 2 + 8 + 8 + 4 and ops(csp)["Mish"] == ops(csp)["BatchNormalization"]
    assert 0.99 * 52.9e6 <= csp.params <= 1.01 * 52.9e6     # README: 202 MiB of FP32 weights = 52.9M
    x = graphs["yolov4x_mish"]
    assert ops(x)["Add"] == 1 + 3 + 11 + 11 + 5 and ops(x)["Sigmoid"] == 3
    assert [x.tensors[t].shape[2] for t in x.outputs] == [80, 40, 20]
    assert x.tensors["conv_0"].shape[1] == 40 and max(x.tensors[t].shape[1] for t in x.tensors
                                                       if t.startswith("conv_") and "." not in t) == 1280


def test_inception_v4_blocks(graphs):
    g = graphs["inception_v4"]
    c = ops(g)
    assert c["Conv"] == 11 + 4 * 7 + 4 + 7 * 10 + 6 + 3 * 10 == 149 and c["Gemm"] == 1
    assert [g.tensors[f"{m}/concat"].shape[1:] for m in ("Mixed_5a", "Mixed_6a", "Mixed_7a", "Mixed_7d")] == \
        [(384, 35, 35), (1024, 17, 17), (1536, 8, 8), (1536, 8, 8)]
    assert g.layer("Mixed_6b/Branch_1/Conv2d_0b_1x7").attributes["kernel_shape"] == [1, 7]
    assert 0.99 * 42.7e6 <= g.params <= 1.01 * 42.7e6


def test_dense_prediction_hand_counts(graphs):
    sr = graphs["super_resolution"]               # ESPCN x3 on the Y channel of a 321x481 image
    px = 321 * 481
    assert sr.macs == px * (1 * 64 * 25 + 64 * 64 * 9 + 64 * 32 * 9 + 32 * 9 * 9)
    assert sr.tensors[sr.outputs[0]].shape == (1, 1, 963, 1443) and sr.params == 59657
    u = graphs["unet"]
    enc = sum(_conv_macs(cin, c, 3, s * s) + _conv_macs(c, c, 3, s * s)
              for cin, c, s in ((3, 64, 256), (64, 128, 128), (128, 256, 64), (256, 512, 32), (512, 1024, 16)))
    dec = sum(cin * c * 4 * (s // 2) ** 2 + _conv_macs(2 * c, c, 3, s * s) + _conv_macs(c, c, 3, s * s)
              for cin, c, s in ((1024, 512, 32), (512, 256, 64), (256, 128, 128), (128, 64, 256)))
    assert u.macs == enc + dec + _conv_macs(64, 2, 1, 256 * 256)
    assert ops(u)["ConvTranspose"] == 4 and u.tensors[u.outputs[0]].shape == (1, 2, 256, 256)
    pose = graphs["lightweight_openpose"]         # output stride 8: 256x456 -> 32x57
    assert [pose.tensors[t].shape[1:] for t in pose.outputs] == [(19, 32, 57), (38, 32, 57)] * 2
    assert 0.99 * 4.099e6 <= pose.params <= 1.01 * 4.099e6   # OMZ model card: 4.099M parameters
    assert ops(pose)["Elu"] == 6 and pose.tensors["refinement_stages.0.concat"].shape[1] == 128 + 19 + 38
