"""Property-based tests over random valid networks (tests/strategies.py): what must hold for any input."""
import math

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dlasim  # noqa: E402
from dlasim import DlasimError, GraphBuilder  # noqa: E402

from strategies import build, configs, plans  # noqa: E402

CI = settings(max_examples=75, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _estimate(g, cfg, **over):
    try:
        return dlasim.estimate(g, **{**cfg, **over})
    except DlasimError:       # a clean refusal (DLA-only build of an unsupported layer, no GPU, ...)
        return None


@CI
@given(plans, configs)
def test_any_valid_network_estimates_or_refuses_cleanly(plan, cfg):
    """Only DlasimError may escape; the steps sum to the total; every fallback has a reason."""
    e = _estimate(build(plan), cfg)
    if e is None:
        return
    assert math.isfinite(e.total_ms) and e.total_ms > 0
    assert e.total_ms == pytest.approx(math.fsum(s.time_ms for s in e.steps), rel=1e-9, abs=1e-12)
    assert all(s.time_ms >= 0 for s in e.steps)
    for f in e.fallback:
        assert f.reason.strip(), f
    if cfg["device"] == "gpu":
        assert not e.fallback


@CI
@given(plans, configs)
def test_estimates_are_deterministic(plan, cfg):
    a, b = _estimate(build(plan), cfg), _estimate(build(plan), cfg)
    assert (a is None) == (b is None)
    if a is not None:
        assert a.to_dict() == b.to_dict()


@CI
@given(plans, configs, st.integers(1, 3))
def test_latency_non_decreasing_in_batch(plan, cfg, extra):
    small = _estimate(build(plan, batch=1), cfg)
    large = _estimate(build(plan, batch=1 + extra), cfg)
    if small is not None and large is not None:
        assert large.total_ms >= small.total_ms * (1 - 1e-9)


@CI
@given(st.integers(8, 256), st.integers(1, 64), st.sampled_from([1, 3]), st.sampled_from([7, 14, 28, 56]),
       st.sampled_from(["xavier-agx", "orin-agx", "a100", "h200"]), st.sampled_from(["dla", "gpu"]),
       st.sampled_from(["fp16", "int8"]))
def test_more_macs_never_faster_when_compute_bound(cin, dk, k, size, hw, device, precision):
    """Adding output channels to a compute-bound convolution never makes it faster. When the two convs run in
    different precisions (the GPU keeps FP32 for a layer whose FP16 kernel plus reformats is slower), the
    network time, which that choice minimises, is what cannot drop."""
    def conv_step(out_channels):
        b = GraphBuilder("one")
        x = b.input("x", (1, cin, size, size))
        g = b.build([b.conv(x, out_channels, kernel=k, name="conv")])
        e = _estimate(g, {"hw": hw, "device": device, "precision": precision})
        if e is None:
            return None
        return e, next(s for s in e.steps if "conv" in s.layers)
    a, b = conv_step(64), conv_step(64 + dk)
    if a is None or b is None or a[1].bound != "compute":
        return
    (e_base, base), (e_more, more) = a, b
    assert more.macs > base.macs
    if more.precision != base.precision:
        assert e_more.total_ms >= e_base.total_ms * (1 - 1e-9), (e_base, e_more)
    else:
        assert more.time_ms >= base.time_ms * (1 - 1e-9), (base, more)
