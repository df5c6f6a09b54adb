"""The measured join (dlasim/explainer/join.py) on a two-conv network and profiles written as (name, ms)
rows, parsed as trtexec --exportProfile files: every row and step in exactly one group, each of the kind its
names call for (closing the mutants benchmarks/mutation.py left alive on join.py)."""
from __future__ import annotations

import pytest

import dlasim
from dlasim import GraphBuilder
from dlasim.explainer.join import join
from dlasim.explainer.measured import profile_from_rows


@pytest.fixture(scope="module")
def net():
    b = GraphBuilder("cr")
    x = b.relu(b.conv(b.input("x", (1, 16, 32, 32)), 32, kernel=3, name="c1"), name="r1")
    return b.build([b.relu(b.conv(x, 32, kernel=3, name="c2"), name="r2")])


def _groups(plan, rows):
    return [(g.kind, g.name, g.rows, [plan.steps[i].name for i in g.steps], g.measured_ms)
            for g in join(plan, profile_from_rows(rows).rows)]


def test_gpu_rows_join_their_steps_and_the_rest_stays_alone(net):
    plan = dlasim.build(net, "xavier-agx", device="gpu")
    got = _groups(plan, [("c1 input reformatter 0", 0.01), ("c1 + r1", 0.05), ("ghost", 0.0), ("ghost2", 0.02)])
    assert got == [
        ("reformat", "c1 input reformatter 0", [0], ["x reformat (fp32:linear -> fp16:hwc8)"], 0.01),
        ("layer", "c1 + r1", [1], ["c1 + r1"], 0.05),
        ("noop", "ghost", [2], [], 0.0),                          # a zero-time row with no step: ok, a NoOp
        ("measured_only", "ghost2", [3], [], 0.02),
        ("predicted_only", "c2 + r2", [], ["c2 + r2"], 0.0),      # steps with no row: nothing measured
        ("predicted_only", "r2 reformat (fp16:hwc8 -> fp32:linear)", [], ["r2 reformat (fp16:hwc8 -> fp32:linear)"],
         0.0)]


def test_a_dla_subgraph_row_holds_its_layer_steps_and_the_launch(net):
    plan = dlasim.build(net, "xavier-agx", device="dla")
    got = _groups(plan, [("{c1,r1,c2,r2}", 0.2)])
    assert got[0] == ("dla_subgraph", "{c1,r1,c2,r2}", [0], ["DLA loadable 0 launch", "c1 + r1", "c2 + r2"], 0.2)
    assert [k for k, *_ in got[1:]] == ["predicted_only", "predicted_only"]      # the two boundary reformats
    launch_only = [(g.kind, [plan.steps[i].name for i in g.steps])
                   for g in join(plan, profile_from_rows([("{c1,r1,c2,r2}", 0.2)]).rows, split_dla=True)]
    assert launch_only[0] == ("dla_launch", ["DLA loadable 0 launch"])


def test_a_copynode_row_joins_the_copy_into_its_layer(net):
    plan = dlasim.build(net, "xavier-agx", device="gpu")
    got = _groups(plan, [("Reformatting CopyNode for Input Tensor 0 to c1 + r1", 0.01), ("c1 + r1", 0.05)])
    assert got[:2] == [("reformat", "Reformatting CopyNode for Input Tensor 0 to c1 + r1", [0],
                        ["x reformat (fp32:linear -> fp16:hwc8)"], 0.01),
                       ("layer", "c1 + r1", [1], ["c1 + r1"], 0.05)]
