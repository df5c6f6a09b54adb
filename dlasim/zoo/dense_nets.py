"""Dense-prediction networks of the jetson_benchmarks set: super resolution (ESPCN), U-Net and a pose network.

- `super_resolution`: the sub-pixel CNN of Shi et al., "Real-Time Single Image and Video Super-Resolution Using an
  Efficient Sub-Pixel Convolutional Neural Network", CVPR 2016, as pytorch/examples super_resolution/model.py
  builds it (trained on BSDS300, the ONNX model zoo's super-resolution-10): conv 5x5 1->64, 3x3 64->64,
  3x3 64->32 (ReLU after each), 3x3 32->r^2 and PixelShuffle(r), upscale factor r = 3. It reads the luminance
  channel only (one input channel). PixelShuffle is exported as Reshape -> Transpose -> Reshape (ONNX opset 9/10,
  as in the model zoo file). Default input 321x481, a BSDS500 image.
- `unet`: Ronneberger, Fischer, Brox, "U-Net: Convolutional Networks for Biomedical Image Segmentation", MICCAI
  2015, figure 1: four levels of two 3x3 conv + ReLU (64, 128, 256, 512) with 2x2 max pooling, a 1024-channel
  bottom, 2x2 up-convolutions (ConvTranspose, halving the channels) concatenated with the skip maps, and a 1x1
  conv to 2 classes. 'same' padding (as the usual 256x256 implementations) instead of the paper's unpadded convs,
  3 input channels, default input 256x256.
- `lightweight_openpose`: Osokin, "Real-time 2D Multi-Person Pose Estimation on CPU: Lightweight OpenPose",
  arXiv:1811.12004, as Daniil-Osokin/lightweight-human-pose-estimation.pytorch models/with_mobilenet.py builds it:
  MobileNet-v1 trunk to conv5_5 with output stride 8 (conv4_3 dilated 2), CPM (1x1 align, three depthwise-separable
  ELU blocks, residual, 3x3), the initial stage (three 3x3, heatmap and PAF heads of 1x1 512 -> 19 / 38) and one
  refinement stage (five blocks of 1x1 + 3x3 + dilated 3x3 with a residual, heads 1x1 128 -> 19 / 38). Default
  input 256x456, the input of Intel Open Model Zoo human-pose-estimation-0001 (the same network; 15.435 GFLOPs,
  4.099M parameters in its model card).
"""
from __future__ import annotations

from ..ir import GraphBuilder
from .blocks import ZooModel, conv_bn_act

# ---- ESPCN super resolution ------------------------------------------------------------------------------

UPSCALE = 3


def _conv_relu(b: GraphBuilder, x: str, c: int, k: int, name: str, dilation: int = 1) -> str:
    return b.relu(b.conv(x, c, kernel=k, dilation=dilation, name=name), name=f"{name}.relu")


def pixel_shuffle(b: GraphBuilder, x: str, r: int, name: str) -> str:
    """PixelShuffle(r) as torch.onnx writes it: (N, C r^2, H, W) -> (N, C, r, r, H, W) -> perm 0,1,4,2,5,3 ->
    (N, C, H r, W r)."""
    n, c, h, w = b.shape(x)
    y = b.reshape(x, [0, c // (r * r), r, r, h, w], name=f"{name}.reshape1")
    y = b.op("Transpose", [y], {"perm": [0, 1, 4, 2, 5, 3]}, f"{name}.transpose")
    return b.reshape(y, [0, c // (r * r), h * r, w * r], name=f"{name}.reshape2")


def _super_resolution(b: GraphBuilder, x: str) -> list[str]:
    x = _conv_relu(b, x, 64, 5, "conv1")
    x = _conv_relu(b, x, 64, 3, "conv2")
    x = _conv_relu(b, x, 32, 3, "conv3")
    return [pixel_shuffle(b, b.conv(x, UPSCALE ** 2, kernel=3, name="conv4"), UPSCALE, "pixel_shuffle")]


# ---- U-Net ------------------------------------------------------------------------------------------------

UNET_WIDTHS = (64, 128, 256, 512)
UNET_CLASSES = 2


def _double_conv(b: GraphBuilder, x: str, c: int, p: str) -> str:
    return _conv_relu(b, _conv_relu(b, x, c, 3, f"{p}.conv1"), c, 3, f"{p}.conv2")


def _unet(b: GraphBuilder, x: str) -> list[str]:
    skips = []
    for i, c in enumerate(UNET_WIDTHS, start=1):
        skips.append(_double_conv(b, x, c, f"down{i}"))
        x = b.maxpool(skips[-1], 2, 2, name=f"down{i}.pool")
    x = _double_conv(b, x, 2 * UNET_WIDTHS[-1], "bottom")
    for i, (c, skip) in enumerate(zip(UNET_WIDTHS[::-1], skips[::-1]), start=1):
        up = b.deconv(x, c, kernel=2, stride=2, name=f"up{i}.upconv")
        x = _double_conv(b, b.concat([skip, up], name=f"up{i}.concat"), c, f"up{i}")
    return [b.conv(x, UNET_CLASSES, kernel=1, name="out")]


# ---- Lightweight OpenPose --------------------------------------------------------------------------------

HEATMAPS, PAFS, POSE_CHANNELS = 19, 38, 128
# MobileNet-v1 trunk (with_mobilenet.py): (out channels, stride, dilation) of each depthwise-separable block
POSE_TRUNK = ((64, 1, 1), (128, 2, 1), (128, 1, 1), (256, 2, 1), (256, 1, 1), (512, 1, 1), (512, 1, 2),
              (512, 1, 1), (512, 1, 1), (512, 1, 1), (512, 1, 1))


def _conv_dw(b: GraphBuilder, x: str, c: int, s: int, dilation: int, p: str, bn: bool = True) -> str:
    """Depthwise 3x3 (no bias) + BN + ReLU, pointwise 1x1 (no bias) + BN + ReLU; bn=False: ELU and no BN."""
    cin = b.shape(x)[1]
    y = b.conv(x, cin, kernel=3, stride=s, dilation=dilation, groups=cin, bias=False, name=f"{p}.0")
    y = b.relu(b.bn(y, name=f"{p}.1"), name=f"{p}.2") if bn else b.op("Elu", [y], {"alpha": 1.0}, f"{p}.1")
    y = b.conv(y, c, kernel=1, bias=False, name=f"{p}.3" if bn else f"{p}.2")
    return b.relu(b.bn(y, name=f"{p}.4"), name=f"{p}.5") if bn else b.op("Elu", [y], {"alpha": 1.0}, f"{p}.3")


def _two_heads(b: GraphBuilder, x: str, hidden: int, p: str) -> list[str]:
    return [b.conv(_conv_relu(b, x, hidden, 1, f"{p}.{kind}.0"), n, kernel=1, name=f"{p}.{kind}.1")
            for kind, n in (("heatmaps", HEATMAPS), ("pafs", PAFS))]


def _lightweight_openpose(b: GraphBuilder, x: str) -> list[str]:
    x = conv_bn_act(b, x, 32, 3, 2, "relu", "model.0.0", "model.0.1", "model.0.2")
    for i, (c, s, d) in enumerate(POSE_TRUNK, start=1):
        x = _conv_dw(b, x, c, s, d, f"model.{i}")
    x = _conv_relu(b, x, POSE_CHANNELS, 1, "cpm.align.0")
    t = x
    for i in range(3):
        t = _conv_dw(b, t, POSE_CHANNELS, 1, 1, f"cpm.trunk.{i}", bn=False)
    feats = _conv_relu(b, b.add(x, t, name="cpm.add"), POSE_CHANNELS, 3, "cpm.conv.0")
    y = feats
    for i in range(3):
        y = _conv_relu(b, y, POSE_CHANNELS, 3, f"initial_stage.trunk.{i}.0")
    heat, paf = _two_heads(b, y, 512, "initial_stage")
    x = b.concat([feats, heat, paf], name="refinement_stages.0.concat")
    for i in range(5):
        p = f"refinement_stages.0.trunk.{i}"
        init = _conv_relu(b, x, POSE_CHANNELS, 1, f"{p}.initial.0")
        t = conv_bn_act(b, init, POSE_CHANNELS, 3, 1, "relu", f"{p}.trunk.0.0", f"{p}.trunk.0.1", f"{p}.trunk.0.2")
        t = b.conv(t, POSE_CHANNELS, kernel=3, dilation=2, name=f"{p}.trunk.1.0")
        t = b.relu(b.bn(t, name=f"{p}.trunk.1.1"), name=f"{p}.trunk.1.2")
        x = b.add(init, t, name=f"{p}.add")
    return [heat, paf] + _two_heads(b, x, POSE_CHANNELS, "refinement_stages.0")


MODELS: dict[str, ZooModel] = {
    "super_resolution": ZooModel(_super_resolution, (1, 321, 481),
                                 "Super resolution ESPCN (pytorch/examples, ONNX zoo super-resolution-10): four "
                                 "convs + PixelShuffle x3 on the Y channel, 321x481 -> 963x1443, ~9.2 GMACs"),
    "unet": ZooModel(_unet, (3, 256, 256),
                     "U-Net (Ronneberger et al. 2015, widths 64-1024, 2x2 up-convolutions, 'same' padding, 2 "
                     "classes), 256x256, ~48 GMACs"),
    "lightweight_openpose": ZooModel(_lightweight_openpose, (3, 256, 456),
                                     "Lightweight OpenPose (Osokin 2018; OMZ human-pose-estimation-0001): "
                                     "MobileNet-v1 trunk, CPM, initial + 1 refinement stage, 256x456, ~7.7 GMACs"),
}
