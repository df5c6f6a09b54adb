"""validation/h200/graph_timer.py, the one timer of the H200 measurement scripts, run against a stand-in torch
that records what is captured and hands back set event times (no GPU needed)."""
import ast
import contextlib
import importlib.util
import types
from pathlib import Path

import pytest

H200 = Path(__file__).resolve().parents[1] / "validation" / "h200"


def _fake_torch(replay_ms):
    log = {"calls_outside": 0, "captured": 0, "replays": 0}
    state = {"capturing": False}
    times = iter(replay_ms)

    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return next(times)

    class CUDAGraph:
        def replay(self):
            log["replays"] += 1

    @contextlib.contextmanager
    def graph(g):
        state["capturing"] = True
        yield
        state["capturing"] = False

    class Stream:
        def wait_stream(self, other):
            pass

    cuda = types.SimpleNamespace(Stream=Stream, current_stream=Stream, stream=lambda s: contextlib.nullcontext(),
                                 synchronize=lambda: None, CUDAGraph=CUDAGraph, graph=graph, Event=Event)

    def fn():
        log["captured" if state["capturing"] else "calls_outside"] += 1

    return types.SimpleNamespace(cuda=cuda), fn, log


def _load_timer(monkeypatch, fake):
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    spec = importlib.util.spec_from_file_location("graph_timer_under_test", H200 / "graph_timer.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_median_replay_over_the_captured_calls(monkeypatch):
    fake, fn, log = _fake_torch([40.0, 10.0, 30.0, 20.0, 50.0])      # ms per replay
    timer = _load_timer(monkeypatch, fake)
    assert timer.graph_ms(fn, calls=10, replays=5) == pytest.approx(3.0)   # median 30 ms / 10 calls
    assert log == {"calls_outside": 3, "captured": 10, "replays": 5}       # 3 warm-up calls, then the graph


def test_an_even_number_of_replays_takes_the_middle_pair(monkeypatch):
    fake, fn, _ = _fake_torch([8.0, 2.0, 4.0, 6.0])
    timer = _load_timer(monkeypatch, fake)
    assert timer.graph_ms(fn, calls=2, replays=4) == pytest.approx(2.5)    # (4 + 6) / 2 / 2


@pytest.mark.parametrize("script", ["gpu_grid.py", "measure_kernels.py"])
def test_the_measurement_scripts_time_with_graph_timer(script):
    tree = ast.parse((H200 / script).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "graph_timer" in imported
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not used & {"CUDAGraph", "Event", "elapsed_time", "replay"}     # no timer of their own
