"""records.fast_init: the frozen records it speeds up construct, compare, pickle and refuse changes as the
dataclass's own __init__ would have them do."""
from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from dlasim.plan import Copy, Decision, Fallback, FallbackKind
from dlasim.records import fast_init
from dlasim.report import ConvChannels


def test_records_keep_their_dataclass_behaviour():
    d = Decision("conv1", "fuse", "fused into conv0")
    assert (d.layer, d.pass_name, d.action, d.reason) == ("conv1", "fuse", "fused into conv0", "")
    assert d == Decision(layer="conv1", pass_name="fuse", action="fused into conv0", reason="")
    assert d != Decision("conv1", "fuse", "fused into conv0", "why")
    assert hash(d) == hash(Decision("conv1", "fuse", "fused into conv0"))
    assert pickle.loads(pickle.dumps(d)) == d
    assert repr(d) == "Decision(layer='conv1', pass_name='fuse', action='fused into conv0', reason='')"
    assert list(inspect.signature(Decision).parameters) == ["layer", "pass_name", "action", "reason"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.reason = "changed"
    c = ConvChannels(3, 64, 1)
    assert c.align == 1.0 and dataclasses.asdict(c) == {"c": 3, "k": 64, "groups": 1, "align": 1.0}
    f = Fallback("m", "Mish", "not supported", FallbackKind.UNSUPPORTED_OP)
    assert f.to_dict() == {"name": "m", "op": "Mish", "reason": "not supported", "kind": "unsupported_op"}
    assert Copy(("fp16", "linear"), ("int8", "chw32"), 10, 5, "gpu", "dla").touches_dla


def test_missing_and_unknown_arguments_fail_as_before():
    with pytest.raises(TypeError):
        Decision("conv1", "fuse")
    with pytest.raises(TypeError):
        Decision("conv1", "fuse", "x", "y", "z")
    with pytest.raises(TypeError):
        Decision("conv1", "fuse", "x", why="y")


def test_refuses_classes_that_need_the_generated_init():
    with pytest.raises(TypeError):
        @fast_init
        @dataclasses.dataclass(frozen=True)                 # no slots
        class NoSlots:
            a: int

    with pytest.raises(TypeError):
        @fast_init
        @dataclasses.dataclass(frozen=True, slots=True)
        class Factory:
            a: list = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError):
        @fast_init
        @dataclasses.dataclass(frozen=True, slots=True)
        class Post:
            a: int

            def __post_init__(self):
                pass
